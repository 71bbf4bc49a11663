// The nearest known names to a mistyped one, for "did you mean" in error messages.
import { describe, expect, it } from "vitest";
import { closestNames, didYouMean, editDistance } from "../../src/core/text/did-you-mean.js";

describe("did you mean", () => {
  it("measures edits: insertions, deletions, substitutions", () => {
    expect(editDistance("run-tests", "run-tests")).toBe(0);
    expect(editDistance("run-test", "run-tests")).toBe(1);
    expect(editDistance("rnu-tests", "run-tests")).toBe(2);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
  });

  it("offers the nearest names within a third of the name's length, nearest first", () => {
    const known = ["run-tests", "show-file", "run-lint"];
    expect(closestNames("run-test", known)).toEqual(["run-tests"]);
    expect(closestNames("RUN-TESTS", known)).toEqual(["run-tests"]);
    expect(closestNames("deploy", known)).toEqual([]);
    expect(closestNames("ab", ["ac", "xy"])).toEqual(["ac"]);
    expect(didYouMean("show-fil", known)).toBe(' (did you mean "show-file"?)');
    expect(didYouMean("zzz", known)).toBe("");
  });
});
