// The simple-schema check decides every input as the Ajv validator of the same schema does, and a
// refusal carries Ajv's own errors; schemas of any other shape are not taken for simple.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createAjv } from "../../src/core/contracts/ajv-factory.js";
import { simpleSchemaOf, simpleValidator } from "../../src/core/turn/simple-schema.js";
import { createToolRegistry } from "../../src/core/turn/tool-registry.js";

const SCHEMAS: readonly Record<string, unknown>[] = [
  { type: "object" },
  { type: "object", additionalProperties: false },
  { type: "object", additionalProperties: true, description: "anything" },
  {
    type: "object",
    properties: { a: { type: "integer" }, b: { type: "integer" } },
    required: ["a", "b"],
    additionalProperties: false,
  },
  {
    type: "object",
    title: "t",
    properties: {
      s: { type: "string", description: "a string" },
      n: { type: "number" },
      f: { type: "boolean", title: "flag" },
      constructor: { type: "string" },
    },
    required: ["s", "toString"],
  },
  { type: "object", properties: {}, required: [] },
  {
    type: "object",
    properties: {
      s: { type: "string", enum: ["x", "replace", "x"] },
      a: { type: "string", minLength: 1, description: "not empty" },
      b: { type: "string", minLength: 2, maxLength: 2 },
      n: { type: "string", maxLength: 0 },
    },
    required: ["s", "a"],
    additionalProperties: false,
  },
  { type: "object", properties: { a: { type: "string", enum: ["", "😀", "é"], maxLength: 1 } } },
];

const VALUES: readonly unknown[] = [
  0,
  -0,
  1,
  1.5,
  1e21,
  -7,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.MAX_SAFE_INTEGER + 2,
  "",
  "x",
  "replace",
  "xy",
  "😀",
  "😀x",
  "\ud83d",
  "é",
  true,
  false,
  null,
  [],
  [1],
  {},
];

const KEYS = ["a", "b", "s", "n", "f", "x", "constructor", "toString", "__proto__"];

/** Objects of the keys above (and a few other things in place of an object). */
const inputs = fc.oneof(
  fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 5 }),
  fc.constantFrom(...VALUES),
);

function both(schema: Record<string, unknown>) {
  const ajv = createAjv("tool").compile(schema);
  const simple = simpleSchemaOf(schema);
  if (simple === undefined) throw new Error(`not simple: ${JSON.stringify(schema)}`);
  const fast = simpleValidator(simple, () => createAjv("tool").compile(schema));
  return { ajv, fast };
}

describe("simple tool schemas", () => {
  it.each(SCHEMAS.map((s) => [JSON.stringify(s), s] as const))(
    "%s: every input gets Ajv's verdict and errors",
    (_, schema) => {
      const { ajv, fast } = both(schema);
      fc.assert(
        fc.property(inputs, (data) => {
          const expected = ajv(data);
          expect(fast(data)).toBe(expected);
          expect(fast.errors ?? null).toEqual(ajv.errors ?? null);
        }),
        { numRuns: 400 },
      );
    },
  );

  it("an inherited property counts as present, as Ajv reads it", () => {
    const { ajv, fast } = both({ type: "object", required: ["toString"] });
    expect(fast({})).toBe(ajv({}));
    expect(fast({})).toBe(true);
    const closed = both({ type: "object", properties: {}, additionalProperties: false });
    const withProto = Object.create({ inherited: 1 }) as Record<string, unknown>;
    expect(closed.fast(withProto)).toBe(closed.ajv(withProto));
    expect(closed.fast(withProto)).toBe(false);
  });

  it.each([
    { type: "object", properties: { a: { type: "integer", minLength: 1 } } },
    { type: "object", properties: { a: { type: "string", minLength: 1.5 } } },
    { type: "object", properties: { a: { type: "string", maxLength: -1 } } },
    { type: "object", properties: { a: { type: "string", minLength: "1" } } },
    { type: "object", properties: { a: { type: "string", enum: [] } } },
    { type: "object", properties: { a: { type: "string", enum: ["a", 1] } } },
    { type: "object", properties: { a: { type: "string", enum: "a" } } },
    { type: "object", properties: { a: { type: "boolean", enum: [true] } } },
    { type: "object", properties: { a: { type: "string", pattern: "^a" } } },
    { type: "object", properties: { a: { type: ["string", "null"] } } },
    { type: "object", properties: { a: { type: "array" } } },
    { type: "object", properties: { a: { type: "object" } } },
    { type: "object", properties: { a: { enum: [1] } } },
    { type: "object", properties: { a: { type: "string", format: "uri" } } },
    { type: "object", properties: { a: true } },
    { type: "object", required: ["a", "a"] },
    { type: "object", required: "a" },
    { type: "object", additionalProperties: { type: "string" } },
    { type: "object", description: 3 },
    { type: "object", properties: { a: { type: "string", title: 1 } } },
    { type: ["object"] },
    {},
    { type: "object", $defs: {} },
    { type: "object", patternProperties: {} },
  ])("%j is not simple", (schema) => {
    expect(simpleSchemaOf(schema)).toBeUndefined();
  });

  it("a registry's simple tool refuses with Ajv's errors, and keeps accepting after", () => {
    const r = createToolRegistry([
      {
        name: "math.add",
        description: "add",
        effect: "observation",
        inputSchema: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: { a: { type: "integer" }, b: { type: "integer" } },
          required: ["a", "b"],
          additionalProperties: false,
        },
      },
    ]);
    if (!r.ok) throw new Error("registry");
    const validate = r.value.get("math.add")?.validate;
    if (validate === undefined) throw new Error("tool");
    expect(validate({ a: 1, b: 2 })).toBe(true);
    expect(validate.errors).toBeNull();
    expect(validate({ a: 1.5 })).toBe(false);
    expect(validate.errors?.map((e) => [e.keyword, e.instancePath])).toEqual([
      ["required", ""],
      ["type", "/a"],
    ]);
    expect(validate({ a: 1, b: 2 })).toBe(true);
    expect(validate.errors).toBeNull();
  });
});
