// Turn-validation errors name the JSON Pointer and the offending property or value for every Ajv
// keyword, and quote hostile values only in short previews.
import { describe, expect, it } from "vitest";
import { validateTurn } from "../../src/core/turn/validate-turn.js";
import { callTurn, registry } from "./fixtures.js";

const ALL = {
  name: "t.all",
  description: "every keyword",
  effect: "observation" as const,
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["req"],
    properties: {
      req: { type: "string" },
      e: { enum: ["a", "b"] },
      t: { type: "integer" },
      nul: { type: ["string", "null"] },
      c: { const: "fixed" },
      p: { type: "string", pattern: "^[a-z]+$" },
      s: { type: "string", minLength: 2, maxLength: 3 },
      n: { type: "number", minimum: 1, maximum: 5 },
      x: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 10 },
      a: { type: "array", minItems: 1, maxItems: 2 },
      o: { oneOf: [{ type: "number" }, { type: "integer" }] },
      y: { anyOf: [{ type: "string" }, { type: "integer" }] },
      f: { type: "string", format: "email" },
      u: { type: "array", uniqueItems: true },
      m: { type: "number", multipleOf: 3 },
      "a/b": { type: "string" },
    },
  },
};

function messages(args: Record<string, unknown>): string[] {
  const r = validateTurn(callTurn([{ name: "t.all", args }]), { registry: registry([ALL]) });
  if (r.ok) return [];
  return r.errors.map((e) => e.message);
}

describe("error messages per Ajv keyword", () => {
  it.each([
    ["additionalProperties", { bogus: 1 }, '(root): unknown property "bogus"'],
    ["required", null, '(root): missing required property "req"'],
    ["enum", { e: "z" }, '/e: "z" is not one of a, b'],
    ["type", { t: "1" }, '/t: expected integer, got string "1"'],
    ["type (several)", { nul: 5 }, "/nul: expected string or null, got integer 5"],
    ["type (object)", { t: { k: 1 } }, "/t: expected integer, got object"],
    ["const", { c: "other" }, '/c: must be "fixed", not "other"'],
    ["pattern", { p: "A1" }, '/p: "A1" does not match the pattern ^[a-z]+$'],
    ["minLength", { s: "x" }, '/s: "x" is shorter than 2 characters'],
    ["maxLength", { s: "xxxx" }, '/s: "xxxx" is longer than 3 characters'],
    ["minimum", { n: 0 }, "/n: 0 is not >= 1"],
    ["maximum", { n: 9 }, "/n: 9 is not <= 5"],
    ["exclusiveMinimum", { x: 0 }, "/x: 0 is not > 0"],
    ["exclusiveMaximum", { x: 10 }, "/x: 10 is not < 10"],
    ["minItems", { a: [] }, "/a: has 0 items, fewer than the 1 required"],
    ["maxItems", { a: [1, 2, 3] }, "/a: has 3 items, more than the 2 allowed"],
    ["oneOf (none)", { o: true }, "/o: true matches none of the allowed forms"],
    ["oneOf (several)", { o: 1 }, "/o: 1 matches more than one of the allowed forms (0, 1)"],
    ["anyOf", { y: true }, "/y: true matches none of the allowed forms"],
    ["format", { f: "nope" }, '/f: "nope" is not a valid email'],
    ["uniqueItems", { u: [1, 1] }, "/u: items 0 and 1 are equal; items must be unique"],
    ["multipleOf", { m: 4 }, "/m: 4 is not a multiple of 3"],
    ["an escaped pointer", { "a/b": 1 }, "/a~1b: expected string, got integer 1"],
  ])("%s", (_keyword, extra, expected) => {
    const args = extra === null ? {} : { req: "r", ...extra };
    expect(messages(args)).toContain(`arguments of t.all: ${expected}`);
  });

  it("quotes long values and names in short previews", () => {
    const long = "q".repeat(10_000);
    const all = messages({ req: "r", e: long, [long]: 1 }).join("\n");
    expect(all).toContain(`/e: "${"q".repeat(60)}…" is not one of a, b`);
    expect(all).toContain(`(root): unknown property "${"q".repeat(60)}…"`);
    expect(all.length).toBeLessThan(500);
  });

  it("names containers by their kind, not their content", () => {
    expect(messages({ req: "r", e: ["a", "b"] })).toContain(
      "arguments of t.all: /e: an array of 2 is not one of a, b",
    );
  });
});
