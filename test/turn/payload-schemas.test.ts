// The message payload contracts: each accepts its documented shape and refuses anything else.
import { describe, expect, it } from "vitest";
import {
  PAYLOAD_SCHEMA_IDS,
  PAYLOAD_SCHEMAS,
  payloadValidators,
} from "../../src/core/turn/payload-schemas.js";
import { MESSAGE_TYPES, type MessageType } from "../../src/core/turn/types.js";
import { PAYLOADS } from "./fixtures.js";

function valid(type: MessageType, payload: unknown): boolean {
  return payloadValidators()[type](payload) === true;
}

describe("payload schemas", () => {
  it("are draft 2020-12 with urn:warrant ids and closed objects", () => {
    for (const type of MESSAGE_TYPES) {
      const s = PAYLOAD_SCHEMAS[type] as Record<string, unknown>;
      expect(s.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(PAYLOAD_SCHEMA_IDS[type]).toMatch(/^urn:warrant:[a-z-]+:v1$/);
      expect(s.additionalProperties).toBe(false);
    }
    expect(PAYLOAD_SCHEMA_IDS.DeadEnd).toBe("urn:warrant:dead-end:v1");
  });

  it("compile once", () => {
    expect(payloadValidators()).toBe(payloadValidators());
  });

  it.each(MESSAGE_TYPES)("%s accepts its example and refuses an extra property", (type) => {
    expect(valid(type, PAYLOADS[type])).toBe(true);
    expect(valid(type, { ...PAYLOADS[type], extra: 1 })).toBe(false);
    expect(valid(type, [])).toBe(false);
  });

  it.each([
    ["Plan", "hypothesis"],
    ["Plan", "steps"],
    ["Verdict", "decision"],
    ["Verdict", "findings"],
    ["Finding", "severity"],
    ["Finding", "claim"],
    ["Finding", "evidence"],
    ["Question", "question"],
    ["Result", "summary"],
    ["Result", "outcome"],
    ["Result", "evidence"],
    ["DeadEnd", "reason"],
    ["DeadEnd", "tried"],
  ] as const)("%s requires %s", (type, field) => {
    const { [field]: _gone, ...rest } = PAYLOADS[type] as Record<string, unknown>;
    expect(valid(type, rest)).toBe(false);
  });

  it("leaves optional fields optional", () => {
    expect(valid("Plan", { hypothesis: "h", steps: [{ id: "1", action: "observe" }] })).toBe(true);
    expect(valid("Question", { question: "q" })).toBe(true);
  });

  describe("Plan", () => {
    const step = { id: "s1", action: "observe", read: ["a"] };
    it("needs at least one step", () => {
      expect(valid("Plan", { hypothesis: "h", steps: [] })).toBe(false);
    });
    it("keeps action a free non-empty string (the host refuses unknown kinds)", () => {
      expect(valid("Plan", { hypothesis: "h", steps: [{ ...step, action: "teleport" }] })).toBe(
        true,
      );
      expect(valid("Plan", { hypothesis: "h", steps: [{ ...step, action: "" }] })).toBe(false);
    });
    it("refuses an unknown step field and mistyped step fields", () => {
      expect(valid("Plan", { hypothesis: "h", steps: [{ ...step, shell: "rm -rf /" }] })).toBe(
        false,
      );
      expect(valid("Plan", { hypothesis: "h", steps: [{ ...step, args: [] }] })).toBe(false);
      expect(valid("Plan", { hypothesis: "h", steps: [{ ...step, read: "a" }] })).toBe(false);
      expect(valid("Plan", { hypothesis: "h", steps: [{ action: "observe" }] })).toBe(false);
    });
    it("types expected_checks as strings", () => {
      expect(valid("Plan", { ...PAYLOADS.Plan, expected_checks: [1] })).toBe(false);
    });
  });

  it("closes the enums", () => {
    expect(valid("Verdict", { ...PAYLOADS.Verdict, decision: "maybe" })).toBe(false);
    expect(valid("Finding", { ...PAYLOADS.Finding, severity: "severe" })).toBe(false);
  });

  it("validates a Verdict's findings as Findings", () => {
    expect(valid("Verdict", { decision: "reject", findings: [{ claim: "x", evidence: [] }] })).toBe(
      false,
    );
    expect(valid("Verdict", { decision: "reject", findings: [] })).toBe(true);
  });

  it("types string arrays", () => {
    expect(valid("DeadEnd", { reason: "r", tried: [1] })).toBe(false);
    expect(valid("Question", { question: "q", options: [true] })).toBe(false);
  });
});
