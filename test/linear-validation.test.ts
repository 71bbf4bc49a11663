// Schema validation stays linear in the value: long arrays are validated element by element with the
// same errors Ajv gives, and the work (errors copied between validators) grows with the array, not
// with its square. Work is counted, never timed.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { contractValidators, type ErrorObject } from "../src/core/contracts/ajv.js";
import { contractSources } from "../src/core/contracts/contract-sources.js";
import { MAX_ERRORS, validateLinear } from "../src/core/contracts/linear-validation.js";
import { schemaProblems } from "../src/core/definition/schema-check.js";
import { checkLoopDocument } from "../src/core/loop/check.js";

const loop = () => ({ validate: contractValidators().loop, source: contractSources().loop });
const definition = () => ({
  validate: contractValidators().agentDefinition,
  source: contractSources().agentDefinition,
});

/** The elements Array.prototype.concat copies while `fn` runs: Ajv's quadratic step, counted. */
function concatCopies(fn: () => void): number {
  const original = Array.prototype.concat;
  let copied = 0;
  Array.prototype.concat = function (this: unknown[], ...rest: unknown[]) {
    copied += this.length;
    for (const r of rest) copied += Array.isArray(r) ? r.length : 1;
    return original.apply(this, rest);
  };
  try {
    fn();
  } finally {
    Array.prototype.concat = original;
  }
  return copied;
}
afterEach(() => {
  expect(Array.prototype.concat.name).toBe("concat");
});

const key = (e: ErrorObject) => `${e.instancePath} ${e.keyword} ${e.message}`;

function loopDoc(facts: unknown[]): Record<string, unknown> {
  return { schema: "corpus-task-pack-loop.v1", "query/id": "query:q", facts };
}

const fact = (i: number) => ({
  "query/id": "query:q",
  sequence: i + 1,
  "recorded-at": "2026-12-01T10:00:00Z",
  step: { kind: "cancelled", "operator/binding-ref": "node-operator-binding:alice" },
});

const junk = fc.oneof(
  fc.constant(0),
  fc.constant(null),
  fc.constant("x"),
  fc.constant({}),
  fc.integer({ min: 0, max: 5 }).map(fact),
  fc.record({ "query/id": fc.constant(7), sequence: fc.constant(-1) }),
);

describe("validateLinear", () => {
  it("gives the errors Ajv gives, for loop documents with split arrays", () => {
    const { validate, source } = loop();
    fc.assert(
      fc.property(fc.array(junk, { minLength: 0, maxLength: 12 }), (facts) => {
        const doc = loopDoc(facts);
        const direct = validate(doc) ? [] : (validate.errors ?? []).map(key);
        const split = (validateLinear(validate, source, doc, { splitLength: 2 }) ?? []).map(key);
        expect(new Set(split)).toEqual(new Set(direct));
        expect(split.length).toBe(direct.length);
      }),
      { numRuns: 200 },
    );
  });

  it("gives the errors Ajv gives, for definitions with split arrays (nested ones too)", () => {
    const { validate, source } = definition();
    const model = fc.oneof(
      fc.constant(0),
      fc.constant({ provider: "p", model: "m" }),
      fc.constant({ provider: "", model: 1 }),
      fc.constant({ provider: "p" }),
    );
    const def = (models: unknown[], sub: unknown[]) => ({
      schema: "viper/agent-definition/v1",
      name: "n",
      framework: { name: "f" },
      models,
      subAgents: [{ schema: "viper/agent-definition/v1", name: "s", models: sub }],
    });
    fc.assert(
      fc.property(fc.array(model, { maxLength: 8 }), fc.array(model, { maxLength: 8 }), (a, b) => {
        const doc = def(a, b);
        const direct = validate(doc) ? [] : (validate.errors ?? []).map(key);
        const split = (validateLinear(validate, source, doc, { splitLength: 1 }) ?? []).map(key);
        expect(new Set(split)).toEqual(new Set(direct));
      }),
      { numRuns: 200 },
    );
  });

  it("checks the length keywords of a split array from its schema (facts: maxItems 4096)", () => {
    const { validate, source } = loop();
    const errors = validateLinear(validate, source, loopDoc(Array.from({ length: 5000 }, fact)));
    expect(errors?.find((e) => e.keyword === "maxItems")).toMatchObject({
      instancePath: "/facts",
      params: { limit: 4096 },
    });
  });

  it("stops after MAX_ERRORS errors and names the elements left unchecked", () => {
    const { validate, source } = loop();
    const errors = validateLinear(validate, source, loopDoc(new Array(100_000).fill(0))) ?? [];
    expect(errors.length).toBeLessThanOrEqual(MAX_ERRORS + 2);
    const last = errors.at(-1);
    expect(last).toMatchObject({ instancePath: "/facts", keyword: "items" });
    const listed = errors.filter((e) => e.instancePath.startsWith("/facts/")).length;
    expect(listed + (last?.params.unchecked as number)).toBe(100_000);
    expect(last?.message).toContain(`items ${listed} to 99999 were not checked`);
  });

  it("copies work linear in the array (Ajv alone: quadratic), loop facts and definition models", () => {
    const { validate, source } = loop();
    const def = definition();
    const sizes = [1_000, 4_000, 16_000, 64_000];
    // Every error kept: the work is the splitting's, not the cap's.
    const unbounded = { maxErrors: Number.POSITIVE_INFINITY };
    const linear = sizes.map(
      (n) =>
        concatCopies(() => {
          validateLinear(validate, source, loopDoc(new Array(n).fill(0)), unbounded);
          validateLinear(def.validate, def.source, { models: new Array(n).fill(0) }, unbounded);
        }) / n,
    );
    // Work per element does not grow with n.
    for (const perElement of linear) expect(perElement).toBeLessThan(4);
    // The counter sees the quadratic step: Ajv alone copies more per element as n grows.
    const direct = [1_000, 4_000].map(
      (n) => concatCopies(() => validate(loopDoc(new Array(n).fill(0)))) / n,
    );
    expect((direct[1] as number) / (direct[0] as number)).toBeGreaterThan(3);
  });

  it("checks a loop document with a 1 M-element facts array, and a definition's 1 M models", () => {
    const checked = checkLoopDocument(loopDoc(new Array(1_000_000).fill(0)));
    expect(checked.ok).toBe(false);
    if (!checked.ok) {
      expect(checked.errors.length).toBeLessThanOrEqual(MAX_ERRORS + 2);
      expect(checked.errors.some((e) => e.path === "/facts" && /not checked/.test(e.message))).toBe(
        true,
      );
    }
    const problems = schemaProblems({ models: new Array(1_000_000).fill(0) });
    expect(problems.length).toBeLessThanOrEqual(MAX_ERRORS + 2);
    expect(problems.some((p) => p.path === "/models/0")).toBe(true);
  });
});
