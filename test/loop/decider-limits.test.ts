// Effective limits at their bounds (src/core/loop/limits.ts): each limit exactly at 1 and at the
// contract's maximum, one past either; stated and defaulted passages per role; no layer at all.
import { describe, expect, it } from "vitest";
import { effectiveLimits, LIMIT_MAXIMA, REQUIRED_LIMITS } from "../../src/core/loop/limits.js";
import type { LimitKey, LimitLayer } from "../../src/core/loop/types.js";

const PACK: LimitLayer = { "max/passages": 8, "max/experiments": 2, "max/wall-time-ms": 60_000 };
const codeOf = (layers: LimitLayer[]) => {
  const r = effectiveLimits(layers);
  return r.ok ? "ok" : r.refusal.code;
};
const MAXIMA: Array<[LimitKey, number]> = [
  ["max/passages", 1000],
  ["max/solver-passages", 1000],
  ["max/reviewer-passages", 1000],
  ["max/cycles", 100],
  ["max/experiments", 100],
  ["max/wall-time-ms", 86_400_000],
];

describe("effective limits at their bounds", () => {
  it("the contract's range of each limit", () => {
    expect(Object.entries(LIMIT_MAXIMA).sort()).toEqual([...MAXIMA].sort());
    expect([...REQUIRED_LIMITS].sort()).toEqual([
      "max/experiments",
      "max/passages",
      "max/wall-time-ms",
    ]);
  });
  it.each(MAXIMA)("%s: 1 and %i are accepted, 0 and one more refused", (key, max) => {
    const big = { ...PACK, "max/passages": 1000, "max/experiments": 100 };
    const low = effectiveLimits([{ ...big, [key]: 1 }]);
    expect(low.ok && low.limits[key]).toBe(1);
    const high = effectiveLimits([{ ...big, "max/wall-time-ms": 86_400_000, [key]: max }]);
    expect(high.ok && high.limits[key]).toBe(max);
    expect(codeOf([{ ...big, [key]: 0 }])).toBe("loop/limits-invalid");
    expect(codeOf([{ ...big, [key]: max + 1 }])).toBe("loop/limits-invalid");
    // In a later layer too.
    expect(codeOf([PACK, {}, { [key]: max + 1 }])).toBe("loop/limits-invalid");
  });
  it("refuses a value that is not a number", () => {
    expect(codeOf([{ ...PACK, "max/cycles": "4" as unknown as number }])).toBe(
      "loop/limits-invalid",
    );
    expect(codeOf([{ ...PACK, "max/cycles": Number.NaN }])).toBe("loop/limits-invalid");
  });
  it("a limit stated as undefined is not stated", () => {
    // The type has no undefined; a layer read from JSON-like input may.
    const unstated = (layer: Record<string, number | undefined>) => layer as LimitLayer;
    const r = effectiveLimits([
      unstated({ ...PACK, "max/cycles": undefined }),
      unstated({ "max/passages": undefined }),
    ]);
    expect(r).toEqual({
      ok: true,
      limits: {
        "max/passages": 8,
        "max/solver-passages": 8,
        "max/reviewer-passages": 8,
        "max/cycles": 8,
        "max/experiments": 2,
        "max/wall-time-ms": 60_000,
      },
    });
  });
  it("no layer at all states nothing: local-binding/incomplete", () => {
    expect(codeOf([])).toBe("local-binding/incomplete");
  });
  it("a stated reviewer limit is kept, and does not set the solver's or the cycles'", () => {
    const r = effectiveLimits([{ ...PACK, "max/reviewer-passages": 3 }]);
    expect(r.ok && r.limits).toMatchObject({
      "max/passages": 8,
      "max/solver-passages": 8,
      "max/reviewer-passages": 3,
      "max/cycles": 8,
    });
  });
  it("the binding may ask less than the task pack of any limit, and exactly as much", () => {
    for (const [key] of MAXIMA) {
      const pack = { ...PACK, [key]: 5 };
      expect(codeOf([pack, { [key]: 5 }]), key).toBe("ok");
      expect(codeOf([pack, { [key]: 4 }]), key).toBe("ok");
      expect(codeOf([pack, { [key]: 6 }]), key).toBe("local-binding/outside-package-ceiling");
    }
  });
  it("host caps are checked against the contract, not against the task pack", () => {
    expect(codeOf([PACK, { "max/passages": 2 }, { "max/passages": 9 }])).toBe("ok");
  });
  it("the refusal is a code and a message, nothing else", () => {
    const r = effectiveLimits([{ ...PACK, "max/passages": 0 }]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(Object.keys(r.refusal).sort()).toEqual(["code", "message"]);
  });
});
