// The turn schema providers are sent, the strict-subset check and the tool-name encoding.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contractValidators, createAjv } from "../../src/core/contracts/ajv.js";
import { modelTurnSchema } from "../../src/core/contracts/schemas.js";
import {
  decodeToolName,
  encodeToolName,
  isStrictCompatible,
  normaliseSchema,
  providerTurnSchema,
  strictObstacle,
} from "../../src/core/turn/provider-schema.js";
import { MESSAGE_TYPES } from "../../src/core/turn/types.js";

/** Every enum node with and without a type, and where `anyOf` appears. */
function walk(node: unknown, visit: (n: Record<string, unknown>) => void): void {
  if (typeof node !== "object" || node === null) return;
  if (!Array.isArray(node)) visit(node as Record<string, unknown>);
  for (const v of Object.values(node)) walk(v, visit);
}

describe("normalised model-turn schema", () => {
  const normalised = providerTurnSchema();

  it("has no $schema or $id, types every enum, and spells the nullable message as anyOf", () => {
    expect(normalised.$schema).toBeUndefined();
    expect(normalised.$id).toBeUndefined();
    let enums = 0;
    walk(normalised, (n) => {
      if (n.enum !== undefined) {
        enums++;
        expect(n.type).toBe("string");
      }
    });
    expect(enums).toBe(2);
    const message = (normalised.properties as Record<string, Record<string, unknown>>).message;
    expect(message?.anyOf).toEqual([
      expect.objectContaining({ type: "object", additionalProperties: false }),
      { type: "null" },
    ]);
    expect(message?.type).toBeUndefined();
  });

  it("is strict-mode friendly: every object closed with all properties required", () => {
    expect(isStrictCompatible(normalised)).toBe(true);
    // The seed itself is not: its enums lack a type and its message is a type array.
    expect(JSON.stringify(normalised)).not.toContain('"type":["object","null"]');
  });

  it("leaves the seed object untouched", () => {
    const before = JSON.stringify(modelTurnSchema);
    providerTurnSchema(["Plan"]);
    normaliseSchema(modelTurnSchema);
    expect(JSON.stringify(modelTurnSchema)).toBe(before);
  });

  it("narrows the message type to a role's types when asked", () => {
    const narrowed = providerTurnSchema(["Verdict", "Finding"]);
    const validate = createAjv().compile(narrowed);
    const turn = (type: string) => ({
      kind: "message",
      summary: "",
      tool_calls: [],
      message: { type, payload_json: "{}", paper_ref: null },
    });
    expect(validate(turn("Verdict"))).toBe(true);
    expect(validate(turn("Plan"))).toBe(false);
  });

  it("accepts and rejects exactly the turns the seed schema does (property)", () => {
    const seed = contractValidators().modelTurn;
    const mine = createAjv().compile(normalised);
    // Mostly-valid parts with occasional faults, so that both sides of the boundary are reached.
    const mostly = <T, U>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<U>) =>
      fc.oneof({ arbitrary: good, weight: 6 }, { arbitrary: bad, weight: 1 });
    const name = mostly(
      fc.stringMatching(/^[a-z][a-z0-9_.-]{1,12}$/),
      fc.oneof(fc.string({ maxLength: 8 }), fc.constant("A.bad"), fc.integer()),
    );
    const call = mostly(
      fc.record({ name, arguments_json: mostly(fc.string({ maxLength: 10 }), fc.integer()) }),
      fc.record({ name, arguments_json: fc.string(), extra: fc.boolean() }, { requiredKeys: [] }),
    );
    const message = mostly(
      fc.oneof(
        fc.constant(null),
        fc.record({
          type: mostly(fc.constantFrom(...MESSAGE_TYPES), fc.string({ maxLength: 6 })),
          payload_json: mostly(fc.string({ maxLength: 10 }), fc.integer()),
          paper_ref: mostly(fc.oneof(fc.constant(null), fc.string({ maxLength: 6 })), fc.integer()),
        }),
      ),
      fc.oneof(
        fc.string(),
        fc.array(fc.integer(), { maxLength: 2 }),
        fc.record(
          {
            type: fc.constant("Plan"),
            payload_json: fc.string(),
            paper_ref: fc.constant(null),
            other: fc.string(),
          },
          { requiredKeys: ["other"] },
        ),
      ),
    );
    const turn = mostly(
      fc.record({
        kind: mostly(fc.constantFrom("tool_calls", "message"), fc.string({ maxLength: 6 })),
        summary: mostly(fc.string({ maxLength: 10 }), fc.constant(null)),
        tool_calls: mostly(fc.array(call, { maxLength: 3 }), fc.constant("x")),
        message,
      }),
      fc.record(
        {
          kind: fc.constantFrom("tool_calls", "message"),
          summary: fc.string(),
          tool_calls: fc.constant([]),
          message: fc.constant(null),
          extra: fc.integer(),
        },
        { requiredKeys: [] },
      ),
    );
    const anyValue = mostly(turn, fc.anything({ maxDepth: 2 }));
    let accepted = 0;
    let rejected = 0;
    fc.assert(
      fc.property(anyValue, (value) => {
        const a = seed(value);
        const b = mine(value);
        if (a) accepted++;
        else rejected++;
        return a === b;
      }),
      { numRuns: 3000 },
    );
    // The generator reaches both sides of the boundary.
    expect(accepted).toBeGreaterThan(300);
    expect(rejected).toBeGreaterThan(300);
  });

  it("turns a nullable array into anyOf too, and keeps a nullable primitive", () => {
    expect(normaliseSchema({ type: ["array", "null"], items: { enum: ["a"] } })).toEqual({
      anyOf: [{ type: "array", items: { type: "string", enum: ["a"] } }, { type: "null" }],
    });
    expect(normaliseSchema({ type: ["string", "null"] })).toEqual({ type: ["string", "null"] });
    expect(normaliseSchema({ enum: ["a", 1] })).toEqual({ enum: ["a", 1] });
  });
});

describe("strict compatibility", () => {
  it("accepts a closed object with every property required", () => {
    expect(
      isStrictCompatible({
        type: "object",
        properties: { a: { type: "string" }, b: { type: "array", items: { type: "number" } } },
        required: ["a", "b"],
        additionalProperties: false,
      }),
    ).toBe(true);
  });

  it.each([
    [
      "an optional property",
      { type: "object", properties: { a: {} }, required: [], additionalProperties: false },
    ],
    ["an open object", { type: "object", properties: { a: { type: "string" } }, required: ["a"] }],
    [
      "an unsupported keyword",
      { type: "object", properties: {}, required: [], additionalProperties: false, oneOf: [] },
    ],
    ["a non-object root", { type: "string" }],
    [
      "an open nested object",
      {
        type: "object",
        properties: { a: { type: "object", properties: {}, required: [] } },
        required: ["a"],
        additionalProperties: false,
      },
    ],
  ])("refuses %s", (_what, schema) => {
    expect(isStrictCompatible(schema)).toBe(false);
  });

  it("names where and why a schema leaves the strict subset", () => {
    expect(
      strictObstacle({
        type: "object",
        additionalProperties: false,
        required: ["steps"],
        properties: {
          steps: {
            type: "array",
            items: {
              type: "object",
              additionalProperties: false,
              required: ["a/b"],
              properties: { "a/b": { type: "object" } },
            },
          },
        },
      }),
    ).toEqual({
      at: "/properties/steps/items/properties/a~1b",
      reason: "an object open to other properties",
    });
    expect(strictObstacle({ type: "string" })).toEqual({
      at: "",
      reason: "the root is not an object",
    });
    expect(
      strictObstacle({
        type: "object",
        additionalProperties: false,
        properties: {},
        required: [],
        minProperties: 1,
      }),
    ).toEqual({ at: "", reason: "keyword minProperties is outside the strict subset" });
  });
});

describe("tool name encoding", () => {
  it("encodes dots and escapes underscores that would be ambiguous", () => {
    expect(encodeToolName("workspace.read_file")).toBe("workspace__read_file");
    expect(encodeToolName("a__b")).toBe("a_U_b");
    expect(encodeToolName("a_.b")).toBe("a_U__b");
    expect(encodeToolName("a._b")).toBe("a___b");
    expect(encodeToolName("add")).toBe("add");
  });

  it("round-trips every registry name and only yields provider-legal names (property)", () => {
    const registryName = fc.stringMatching(/^[a-z][a-z0-9_.-]{1,40}$/);
    fc.assert(
      fc.property(registryName, (n) => {
        const e = encodeToolName(n);
        return /^[a-zA-Z0-9_-]+$/.test(e) && decodeToolName(e) === n;
      }),
      { numRuns: 2000 },
    );
  });

  it("is injective: two names never share an encoding (property)", () => {
    const n = fc.stringMatching(/^[a-z][a-z0-9_.]{1,6}$/);
    fc.assert(
      fc.property(n, n, (a, b) => a === b || encodeToolName(a) !== encodeToolName(b)),
      { numRuns: 3000 },
    );
  });

  it("decodes nothing that is no encoding", () => {
    expect(decodeToolName("a_Ub")).toBeUndefined();
    expect(decodeToolName("Read")).toBeUndefined();
    for (const type of MESSAGE_TYPES) expect(decodeToolName(type)).toBeUndefined();
  });
});
