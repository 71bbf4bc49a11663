// Repairs say exactly what is wrong: every single mutation of a valid payload gets a repair text
// naming the message type, the JSON Pointer of the mutation and the property it concerns; the text
// is deduplicated and capped.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Problem } from "../../src/core/result.js";
import { showPointer } from "../../src/core/turn/ajv-messages.js";
import {
  inlinedPayloadSchema,
  providerPayloadSchema,
} from "../../src/core/turn/provider-payload-schema.js";
import { MAX_REPAIR_LINES, repairText } from "../../src/core/turn/repair-text.js";
import { MESSAGE_TYPES } from "../../src/core/turn/types.js";
import { validateTurn } from "../../src/core/turn/validate-turn.js";
import { registry } from "./fixtures.js";
import { arbitraryFor, mutations } from "./payload-arbitrary.js";

function payloadTurn(type: string, payload: unknown) {
  return {
    kind: "message",
    summary: "",
    tool_calls: [],
    message: { type, payload_json: JSON.stringify(payload), paper_ref: null },
  };
}

describe("repair text of a mutated payload (property)", () => {
  it.each(MESSAGE_TYPES)(
    "%s: names the pointer and the property of any single mutation",
    (type) => {
      const reg = registry();
      const kinds = new Set<string>();
      fc.assert(
        fc.property(arbitraryFor(providerPayloadSchema(type)), fc.nat(), (payload, pick) => {
          const all = mutations(payload, inlinedPayloadSchema(type));
          const m = all[pick % all.length];
          if (m === undefined) return;
          kinds.add(m.kind);
          const r = validateTurn(payloadTurn(type, m.value), { registry: reg });
          expect(r.ok, `${m.kind} at ${m.pointer} was accepted`).toBe(false);
          if (r.ok) return;
          const text = repairText(r.errors);
          expect(text).toContain(`the ${type} payload: ${showPointer(m.pointer)}: `);
          if (m.name !== undefined) expect(text).toContain(`"${m.name}"`);
        }),
        { numRuns: 300 },
      );
      // The generator reaches the mutations the payload allows.
      expect(kinds.has("wrong-type")).toBe(true);
      expect(kinds.has("unknown-property")).toBe(true);
      expect(kinds.has("missing-required")).toBe(true);
    },
  );

  it("every kind of mutation occurs over the payload types", () => {
    const kinds = new Set<string>();
    for (const type of MESSAGE_TYPES) {
      fc.assert(
        fc.property(arbitraryFor(providerPayloadSchema(type)), (payload) => {
          for (const m of mutations(payload, inlinedPayloadSchema(type))) kinds.add(m.kind);
        }),
        { numRuns: 50 },
      );
    }
    expect([...kinds].sort()).toEqual([
      "missing-required",
      "outside-enum",
      "too-few",
      "too-short",
      "unknown-property",
      "wrong-type",
    ]);
  });
});

describe("repairText", () => {
  const problem = (message: string, code = "turn/payload-invalid"): Problem => ({
    code,
    path: "/message/payload_json",
    message,
  });

  it("lists each fault once, with its code, and says nothing ran", () => {
    const text = repairText([
      problem('the Plan payload: /steps/0: unknown property "bogus"'),
      problem('the Plan payload: /steps/0: unknown property "bogus"'),
      problem("no tool named x.y is registered for this passage", "turn/unknown-tool"),
    ]);
    expect(text.split("\n")).toEqual([
      "Your last answer was invalid, and nothing in it was executed:",
      '- the Plan payload: /steps/0: unknown property "bogus" [turn/payload-invalid]',
      "- no tool named x.y is registered for this passage [turn/unknown-tool]",
      "Answer again with these fixed: tool calls, or one message alone.",
    ]);
  });

  it("caps the list and the length of each line", () => {
    const many = Array.from({ length: 500 }, (_, i) => problem(`fault ${i} ${"x".repeat(5000)}`));
    const text = repairText(many);
    const lines = text.split("\n");
    expect(lines).toHaveLength(MAX_REPAIR_LINES + 3);
    expect(lines.at(-2)).toBe(`- … and ${500 - MAX_REPAIR_LINES} more`);
    expect(text.length).toBeLessThan(MAX_REPAIR_LINES * 450 + 200);
  });
});
