// A tool implementation binds to a declared tool only when its input schema is provably no wider:
// each case below is a value the implementation would accept and the declaration refuses (wider),
// or a tightening (no wider).
import { describe, expect, it } from "vitest";
import { noWider } from "../../src/core/turn/schema-narrower.js";

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra,
});

describe("noWider(implementation, declared)", () => {
  it("the same schema, annotations apart, is no wider", () => {
    const s = obj({ a: { type: "number" } }, { required: ["a"], additionalProperties: false });
    expect(noWider(s, s)).toBe(true);
    expect(
      noWider({ ...s, description: "impl", title: "t" }, { ...s, description: "declared" }),
    ).toBe(true);
  });

  it("added constraints are no wider: more required, a tighter bound, a narrower type or enum", () => {
    const declared = obj({ a: { type: "number", maximum: 10 }, b: { type: ["string", "null"] } });
    const impl = obj(
      { a: { type: "integer", minimum: 0, maximum: 5 }, b: { type: "string", enum: ["x"] } },
      { required: ["a"] },
    );
    expect(noWider(impl, declared)).toBe(true);
    expect(noWider({ type: "string", enum: ["a"] }, { enum: ["a", "b"] })).toBe(true);
    expect(noWider({ const: "a" }, { enum: ["a", "b"] })).toBe(true);
  });

  it("a wider type, a looser bound, a missing requirement or enum value is wider", () => {
    expect(noWider({ type: ["string", "number"] }, { type: "string" })).toBe(false);
    expect(noWider({ type: "number", maximum: 11 }, { type: "number", maximum: 10 })).toBe(false);
    expect(noWider({ type: "number" }, { type: "number", maximum: 10 })).toBe(false);
    expect(noWider(obj({}, { required: [] }), obj({}, { required: ["a"] }))).toBe(false);
    expect(noWider({ enum: ["a", "c"] }, { enum: ["a", "b"] })).toBe(false);
    expect(noWider({ type: "string" }, { type: "string", pattern: "^a" })).toBe(false);
  });

  it("a property the declaration closes off is wider; one it leaves open is fine", () => {
    const closed = obj({ a: { type: "number" } }, { additionalProperties: false });
    expect(
      noWider(obj({ a: { type: "number" }, b: {} }, { additionalProperties: false }), closed),
    ).toBe(false);
    // Open implementation, closed declaration: any extra key reaches the implementation.
    expect(noWider(obj({ a: { type: "number" } }), closed)).toBe(false);
    const open = obj({ a: { type: "number" } });
    expect(
      noWider(
        obj({ a: { type: "number" }, b: { type: "string" } }, { additionalProperties: false }),
        open,
      ),
    ).toBe(true);
    // A property the implementation types looser than the declaration is wider.
    expect(noWider(obj({ a: {} }, { additionalProperties: false }), open)).toBe(false);
  });

  it("anything the proof does not model must be equal: an unknown or combining keyword", () => {
    expect(noWider({ anyOf: [{ type: "string" }] }, { anyOf: [{ type: "string" }] })).toBe(true);
    expect(
      noWider({ anyOf: [{ type: "string" }, { type: "number" }] }, { anyOf: [{ type: "string" }] }),
    ).toBe(false);
    expect(noWider(true, { type: "object" })).toBe(false);
    expect(noWider(false, { type: "object" })).toBe(true);
    expect(noWider({ type: "object" }, true)).toBe(true);
  });
});
