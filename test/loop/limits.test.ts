// Effective limits (docs/spec/loop.md): per-field minimum, defaults, ceiling and completeness.
import { describe, expect, it } from "vitest";
import { effectiveLimits } from "../../src/core/loop/limits.js";
import type { LimitLayer } from "../../src/core/loop/types.js";

const PACK: LimitLayer = { "max/passages": 8, "max/experiments": 2, "max/wall-time-ms": 60_000 };
const limitsOf = (layers: LimitLayer[]) => {
  const r = effectiveLimits(layers);
  if (!r.ok) throw new Error(r.refusal.code);
  return r.limits;
};
const codeOf = (layers: LimitLayer[]) => {
  const r = effectiveLimits(layers);
  return r.ok ? "ok" : r.refusal.code;
};

describe("effectiveLimits", () => {
  it("fills solver and reviewer passages from passages, cycles from solver passages", () => {
    expect(limitsOf([PACK])).toEqual({
      "max/passages": 8,
      "max/solver-passages": 8,
      "max/reviewer-passages": 8,
      "max/cycles": 8,
      "max/experiments": 2,
      "max/wall-time-ms": 60_000,
    });
    expect(limitsOf([{ ...PACK, "max/solver-passages": 3 }])["max/cycles"]).toBe(3);
  });
  it("defaults are taken from the effective values, after the minimum", () => {
    const l = limitsOf([PACK, { "max/passages": 5 }, { "max/passages": 4 }]);
    expect(l["max/passages"]).toBe(4);
    expect(l["max/solver-passages"]).toBe(4);
    expect(l["max/reviewer-passages"]).toBe(4);
    expect(l["max/cycles"]).toBe(4);
  });
  it("takes the per-field minimum over every stated layer", () => {
    const l = limitsOf([
      { ...PACK, "max/cycles": 6 },
      { "max/experiments": 1 },
      { "max/wall-time-ms": 1000, "max/cycles": 2 },
    ]);
    expect(l).toMatchObject({ "max/cycles": 2, "max/experiments": 1, "max/wall-time-ms": 1000 });
  });
  it("a defaulted cycle limit stays within the contract's 100", () => {
    expect(limitsOf([{ ...PACK, "max/passages": 500 }])["max/cycles"]).toBe(100);
  });
  it("host caps above the task pack narrow nothing and are not refused", () => {
    expect(limitsOf([PACK, {}, { "max/passages": 1000 }])["max/passages"]).toBe(8);
  });
  it("refuses a binding above the task pack: local-binding/outside-package-ceiling", () => {
    expect(codeOf([PACK, { "max/experiments": 3 }])).toBe("local-binding/outside-package-ceiling");
    expect(codeOf([PACK, { "max/experiments": 2 }])).toBe("ok");
  });
  it("a binding may state what the task pack leaves open", () => {
    expect(limitsOf([PACK, { "max/cycles": 50 }])["max/cycles"]).toBe(50);
  });
  it.each(["max/passages", "max/experiments", "max/wall-time-ms"] as const)(
    "refuses when %s is stated in no layer: local-binding/incomplete",
    (key) => {
      const { [key]: _drop, ...rest } = PACK;
      expect(codeOf([rest])).toBe("local-binding/incomplete");
      expect(codeOf([rest, {}, { [key]: 5 }])).toBe("ok");
    },
  );
  it("refuses values the contract cannot carry: loop/limits-invalid", () => {
    expect(codeOf([{ ...PACK, "max/passages": 0 }])).toBe("loop/limits-invalid");
    expect(codeOf([{ ...PACK, "max/cycles": 101 }])).toBe("loop/limits-invalid");
    expect(codeOf([{ ...PACK, "max/experiments": 1.5 }])).toBe("loop/limits-invalid");
    expect(codeOf([{ ...PACK, "max/other": 1 } as LimitLayer])).toBe("loop/limits-invalid");
  });
});
