// The payload schemas as providers get them (self-contained, narrowed, strict where they fit), the
// message tools built on them, the JSON-mode turn schema, and the way back to the seed turn.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createAjv } from "../../src/core/contracts/ajv.js";
import { canonicalJson } from "../../src/core/records/canonical.js";
import { checkPlan } from "../../src/core/taskpack/plan-check.js";
import {
  candidateFromCalls,
  jsonModeTurnSchema,
  MESSAGE_DESCRIPTIONS,
  messageTools,
  payloadJson,
  turnFromJsonMode,
} from "../../src/core/turn/message-tools.js";
import { payloadValidators } from "../../src/core/turn/payload-schemas.js";
import {
  dropIntroducedNulls,
  inlinedPayloadSchema,
  PLAN_STEP_ACTIONS,
  providerPayloadSchema,
  strictForm,
} from "../../src/core/turn/provider-payload-schema.js";
import { isStrictCompatible } from "../../src/core/turn/provider-schema.js";
import { MESSAGE_TYPES, ROLE_MESSAGE_TYPES } from "../../src/core/turn/types.js";
import { validateTurn } from "../../src/core/turn/validate-turn.js";
import { planDoc, validPack } from "../taskpack/fixtures.js";
import { registry } from "../turn/fixtures.js";
import { arbitraryFor, mutations } from "../turn/payload-arbitrary.js";

/** Every node of a schema, to look for keywords. */
function nodes(schema: unknown): Record<string, unknown>[] {
  if (typeof schema !== "object" || schema === null) return [];
  const own = Array.isArray(schema) ? [] : [schema as Record<string, unknown>];
  return [...own, ...Object.values(schema).flatMap(nodes)];
}

/** A valid payload with every absent optional property given as null, as a strict answer has it. */
function withNulls(value: unknown, schema: Record<string, unknown>): unknown {
  if (Array.isArray(value)) {
    return value.map((v) => withNulls(v, schema.items as Record<string, unknown>));
  }
  const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (typeof value !== "object" || value === null || props === undefined) return value;
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(props)) {
    const v = (value as Record<string, unknown>)[k];
    out[k] = v === undefined ? null : withNulls(v, s);
  }
  return out;
}

describe("provider payload schemas", () => {
  it.each(MESSAGE_TYPES)("%s is self-contained: no $ref, $defs, $id or $schema", (type) => {
    const schema = providerPayloadSchema(type);
    const keys = nodes(schema).flatMap((n) => Object.keys(n));
    for (const k of ["$ref", "$defs", "$id", "$schema"]) expect(keys).not.toContain(k);
    expect(schema.type).toBe("object");
    expect(schema.additionalProperties).toBe(false);
  });

  it("Plan: names every step field and the step actions the host admits", () => {
    const plan = providerPayloadSchema("Plan") as {
      properties: { steps: { items: { properties: Record<string, Record<string, unknown>> } } };
    };
    const step = plan.properties.steps.items.properties;
    expect(Object.keys(step)).toEqual([
      "id",
      "action",
      "profile",
      "args",
      "read",
      "path",
      "diff",
      "content",
    ]);
    expect(step.action?.enum).toEqual(["observe", "patch", "command"]);
    expect(step.action?.description).toMatch(/observe .*patch .*command/);
    expect(step.diff?.description).toContain("unified diff");
  });

  it("the step actions are exactly the ones the host admits", () => {
    const pack = validPack();
    const plan = planDoc();
    expect(checkPlan(plan, pack).ok).toBe(true);
    const used = new Set((plan.steps as { action: string }[]).map((s) => s.action));
    expect([...used].sort()).toEqual([...PLAN_STEP_ACTIONS].sort());
    const other = { ...plan, steps: [...(plan.steps as object[]), { id: "x", action: "delete" }] };
    const refused = checkPlan(other, pack);
    expect(refused.ok ? [] : refused.errors.map((e) => e.code)).toContain(
      "plan/unknown-action-kind",
    );
  });

  it("Verdict: carries the decision values and the Finding schema inline", () => {
    const verdict = providerPayloadSchema("Verdict") as {
      properties: { decision: { enum: string[] }; findings: { items: unknown } };
    };
    expect(verdict.properties.decision.enum).toEqual(["accept", "reject", "request-regeneration"]);
    expect(verdict.properties.findings.items).toEqual(providerPayloadSchema("Finding"));
  });

  it.each(MESSAGE_TYPES)(
    "%s: the inlined schema accepts exactly what the contract does (property)",
    (type) => {
      const inlined = createAjv().compile(inlinedPayloadSchema(type));
      const provider = createAjv().compile(providerPayloadSchema(type));
      const contract = payloadValidators()[type];
      fc.assert(
        fc.property(arbitraryFor(providerPayloadSchema(type)), fc.nat(), (payload, pick) => {
          // The provider copy asks for no more than the contract accepts...
          expect(provider(payload)).toBe(true);
          expect(contract(payload)).toBe(true);
          // ...and the inlined copy draws the contract's boundary exactly.
          const all = mutations(payload, inlinedPayloadSchema(type));
          const m = all[pick % all.length];
          if (m !== undefined) expect(inlined(m.value)).toBe(contract(m.value));
        }),
        { numRuns: 200 },
      );
    },
  );
});

describe("the strict form", () => {
  it("requires every property and makes the optional ones nullable", () => {
    const q = strictForm(providerPayloadSchema("Question")) as Record<string, unknown>;
    expect(q).toEqual({
      type: "object",
      additionalProperties: false,
      required: ["question", "options"],
      properties: {
        question: expect.objectContaining({ type: "string" }),
        options: {
          anyOf: [{ type: "array", items: { type: "string" } }, { type: "null" }],
          description: expect.stringContaining("Answers the operator may choose from"),
        },
      },
    });
    expect(strictForm({ type: "object", properties: { a: { type: "string" } } })).toEqual({
      type: "object",
      properties: { a: { type: ["string", "null"] } },
      required: ["a"],
    });
  });

  it("fits the strict subset for every payload but Plan, whose step args are an open object", () => {
    for (const type of MESSAGE_TYPES) {
      const strict = isStrictCompatible(strictForm(providerPayloadSchema(type)));
      expect([type, strict]).toEqual([type, type !== "Plan"]);
    }
  });

  it.each(MESSAGE_TYPES)(
    "%s: a strict answer reads back as the payload it stands for (property)",
    (type) => {
      const plain = providerPayloadSchema(type);
      const strict = createAjv().compile(strictForm(plain) as object);
      fc.assert(
        fc.property(arbitraryFor(plain), (payload) => {
          const filled = withNulls(payload, plain);
          expect(strict(filled)).toBe(true);
          expect(dropIntroducedNulls(filled, plain)).toEqual(payload);
        }),
        { numRuns: 200 },
      );
    },
  );

  it("drops only the nulls it introduced", () => {
    const schema = {
      type: "object",
      required: ["a"],
      properties: {
        a: { type: ["string", "null"] },
        b: { type: "string" },
        c: { type: ["string", "null"] },
        d: { type: "object", properties: { e: { type: "string" } } },
      },
    };
    expect(
      dropIntroducedNulls({ a: null, b: null, c: null, d: { e: null }, z: null }, schema),
    ).toEqual({
      a: null,
      c: null,
      d: {},
      z: null,
    });
  });
});

describe("message tools", () => {
  it("one per message type, named after it, strict where the payload fits", () => {
    const tools = messageTools(ROLE_MESSAGE_TYPES.implementer);
    expect(tools.map((t) => t.name)).toEqual(["Plan", "Question", "DeadEnd", "Finding"]);
    const plan = tools[0];
    expect(plan?.schema).toEqual(providerPayloadSchema("Plan"));
    expect(plan?.strictSchema).toBeUndefined();
    expect(plan?.nonStrict).toEqual({
      at: "/properties/steps/items/properties/args/anyOf/0",
      reason: "an object open to other properties",
    });
    expect(tools[1]?.strictSchema).toEqual(strictForm(providerPayloadSchema("Question")));
    expect(tools[1]?.description).toBe(MESSAGE_DESCRIPTIONS.Question);
  });
});

describe("tool-mode answers back to the seed turn", () => {
  it("a lone message call becomes a message turn, its payload as JCS with the strict nulls dropped", () => {
    const args = '{ "options": null, "question": "Which branch?" }';
    expect(candidateFromCalls("asking", [{ name: "Question", argumentsJson: args }])).toEqual({
      kind: "message",
      summary: "asking",
      tool_calls: [],
      message: { type: "Question", payload_json: '{"question":"Which branch?"}', paper_ref: null },
    });
  });

  it("arguments that are not JSON are kept verbatim, for validation to name", () => {
    const c = candidateFromCalls("", [{ name: "Finding", argumentsJson: '{"claim": ' }]);
    expect(c).toMatchObject({ message: { type: "Finding", payload_json: '{"claim": ' } });
    const r = validateTurn(c, { registry: registry(), role: "reviewer" });
    expect(r.ok ? [] : r.errors.map((e) => e.code)).toEqual(["turn/payload-invalid"]);
  });

  it("tool calls are decoded to registry names, arguments kept as text", () => {
    expect(
      candidateFromCalls("", [{ name: "workspace__read_file", argumentsJson: '{"path":"a"' }]),
    ).toEqual({
      kind: "tool_calls",
      summary: "",
      tool_calls: [{ name: "workspace.read_file", arguments_json: '{"path":"a"' }],
      message: null,
    });
  });

  it("a mix of message and tool calls is kept for validation to refuse", () => {
    const c = candidateFromCalls("", [
      { name: "workspace__read_file", argumentsJson: '{"path":"a"}' },
      { name: "DeadEnd", argumentsJson: '{"reason":"r","tried":[]}' },
    ]);
    expect(c).toMatchObject({ kind: "tool_calls", message: { type: "DeadEnd" } });
    const r = validateTurn(c, { registry: registry(), role: "implementer" });
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["turn/kind-mismatch", "/message"],
    ]);
    expect(r.ok ? "" : r.errors[0]?.message).toContain("a message ends the passage and goes alone");
  });

  it("a message type the role may not emit is named as such", () => {
    const c = candidateFromCalls("", [
      { name: "Verdict", argumentsJson: '{"decision":"accept","findings":[]}' },
    ]);
    const r = validateTurn(c, { registry: registry(), role: "implementer" });
    expect(r.ok ? [] : r.errors.map((e) => e.code)).toEqual(["turn/type-not-allowed"]);
  });

  it("an answer without calls is its text when that holds a turn, else a turn that calls nothing", () => {
    expect(candidateFromCalls('{"kind":"message"}', [])).toBe('{"kind":"message"}');
    const prose = candidateFromCalls("I would read the file first.", []);
    expect(prose).toEqual({
      kind: "tool_calls",
      summary: "I would read the file first.",
      tool_calls: [],
      message: null,
    });
    const r = validateTurn(prose, { registry: registry(), role: "implementer" });
    expect(r.ok ? "" : r.errors.map((e) => e.message).join()).toContain(
      "an answer calls at least one tool, or emits one message",
    );
  });

  it("a __proto__ property the model wrote is kept, and refused", () => {
    const c = candidateFromCalls("", [
      { name: "DeadEnd", argumentsJson: '{"reason":"r","tried":[],"__proto__":{"x":1}}' },
    ]);
    expect(c).toMatchObject({
      message: { payload_json: '{"__proto__":{"x":1},"reason":"r","tried":[]}' },
    });
    const r = validateTurn(c, { registry: registry(), role: "implementer" });
    expect(r.ok ? "" : r.errors[0]?.message).toBe(
      'the DeadEnd payload: (root): unknown property "__proto__"',
    );
  });

  it("payloadJson keeps what JCS cannot carry as JSON text", () => {
    expect(payloadJson("Finding", { text: '{"n": 1e400}' })).toBe('{"n":null}');
    expect(payloadJson("Nope", { value: { b: 1, a: null } })).toBe('{"a":null,"b":1}');
  });
});

describe("JSON mode", () => {
  it("one branch per message type, each fixing its type and carrying its payload schema", () => {
    const { schema, strict } = jsonModeTurnSchema(ROLE_MESSAGE_TYPES.reviewer);
    expect(strict).toBe(true);
    expect(isStrictCompatible(schema)).toBe(true);
    const message = (schema.properties as Record<string, { anyOf: Record<string, unknown>[] }>)
      .message;
    expect(
      message?.anyOf.map(
        (b) => (b.properties as { type?: { const: string } } | undefined)?.type?.const,
      ),
    ).toEqual(["Verdict", "Question", "Finding", undefined]);
    expect(message?.anyOf[0]).toMatchObject({
      required: ["type", "payload", "paper_ref"],
      properties: { payload: strictForm(providerPayloadSchema("Verdict")) },
    });
    expect(message?.anyOf.at(-1)).toEqual({ type: "null" });
  });

  it("is non-strict with the plain payloads when one does not fit (Plan)", () => {
    const { schema, strict } = jsonModeTurnSchema(ROLE_MESSAGE_TYPES.implementer);
    expect(strict).toBe(false);
    const message = (schema.properties as Record<string, { anyOf: Record<string, unknown>[] }>)
      .message;
    expect(message?.anyOf[0]).toMatchObject({
      properties: { payload: providerPayloadSchema("Plan") },
    });
  });

  it.each([
    ["reviewer", "Verdict", { decision: "reject", findings: [] }],
    ["implementer", "Plan", planDoc()],
  ] as const)(
    "a %s's %s answer validates against the schema and reads back as a seed turn",
    (role, type, payload) => {
      const { schema } = jsonModeTurnSchema(ROLE_MESSAGE_TYPES[role]);
      const answer = {
        kind: "message",
        summary: "done",
        tool_calls: [],
        message: { type, payload, paper_ref: null },
      };
      expect(createAjv().compile(schema)(answer)).toBe(true);
      const turn = turnFromJsonMode(JSON.stringify(answer));
      expect(turn).toEqual({
        kind: "message",
        summary: "done",
        tool_calls: [],
        message: { type, paper_ref: null, payload_json: canonicalJson(payload) },
      });
      expect(validateTurn(turn, { registry: registry(), role }).ok).toBe(true);
    },
  );

  it("leaves for validation what it cannot read", () => {
    expect(turnFromJsonMode("not json")).toBe("not json");
    expect(turnFromJsonMode("[1]")).toEqual([1]);
    const seed = {
      kind: "message",
      summary: "",
      tool_calls: [],
      message: { type: "Finding", payload_json: "{}", paper_ref: null },
    };
    expect(turnFromJsonMode(JSON.stringify(seed))).toEqual(seed);
    const both = { ...seed, message: { ...seed.message, payload: {} } };
    expect(turnFromJsonMode(JSON.stringify(both))).toEqual(both);
  });
});
