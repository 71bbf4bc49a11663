// The widest loop the bounds allow: 1 366 facts build, validate against the seed schema, and check.
import { describe, expect, it } from "vitest";
import { widestFacts, widestScript } from "../../bench/suites/loop.js";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { checkLoopDocument } from "../../src/core/loop/check.js";
import { parseScript } from "../../src/core/loop/script.js";
import { simulate } from "../../src/core/loop/simulate.js";

describe("the widest loop", () => {
  it("builds 1 366 facts, every command appended, and the document validates and checks", () => {
    const script = parseScript(widestScript());
    if (!script.ok) throw new Error(JSON.stringify(script.errors));
    const sim = simulate(script.value);
    expect(sim.outcomes.every((o) => o.result === "appended")).toBe(true);
    const doc = sim.loop;
    expect(doc?.facts.length).toBe(1366);
    expect(doc?.spent).toEqual({
      passages: 1000,
      "solver-passages": 250,
      "reviewer-passages": 250,
      cycles: 100,
      runs: 100,
    });
    expect(doc?.stop?.reason).toBe("cancelled");
    expect(contractValidators().loop(doc)).toBe(true);
    expect(checkLoopDocument(JSON.parse(JSON.stringify(doc))).ok).toBe(true);
    expect(widestFacts().length).toBe(1366);
  });
});
