import { describe, expect, it } from "vitest";
import {
  mean,
  median,
  pairedBootstrap,
  passAtK,
  quantile,
  seededRandom,
  wilsonInterval,
} from "../../src/core/eval/stats.js";

describe("wilsonInterval", () => {
  it("gives the published Wilson bounds", () => {
    const [lo, hi] = wilsonInterval(5, 10);
    expect(lo).toBeCloseTo(0.236593, 5);
    expect(hi).toBeCloseTo(0.763407, 5);
    const [lo2, hi2] = wilsonInterval(8, 20);
    expect(lo2).toBeCloseTo(0.218807, 5);
    expect(hi2).toBeCloseTo(0.613418, 5);
  });

  it("is exactly 0 below none passed and exactly 1 above all passed", () => {
    const [lo0, hi0] = wilsonInterval(0, 10);
    expect(lo0).toBe(0);
    expect(hi0).toBeCloseTo(0.277533, 5);
    const [lo1, hi1] = wilsonInterval(10, 10);
    expect(lo1).toBeCloseTo(0.722467, 5);
    expect(hi1).toBe(1);
  });

  it("knows nothing of no trials, and refuses counts that are not counts", () => {
    expect(wilsonInterval(0, 0)).toEqual([0, 1]);
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(0.5, 2)).toThrow(RangeError);
  });
});

describe("passAtK", () => {
  it("is the unbiased estimator 1 - C(n-c,k)/C(n,k)", () => {
    expect(passAtK(3, 1, 1)).toBeCloseTo(1 / 3, 12);
    expect(passAtK(3, 1, 3)).toBe(1);
    expect(passAtK(3, 0, 1)).toBe(0);
    expect(passAtK(3, 0, 3)).toBe(0);
    expect(passAtK(3, 3, 1)).toBe(1);
    expect(passAtK(5, 2, 2)).toBeCloseTo(1 - 3 / 10, 12);
    expect(passAtK(10, 3, 5)).toBeCloseTo(1 - 21 / 252, 12);
  });

  it("stays finite where the binomials would overflow", () => {
    const v = passAtK(2000, 7, 100);
    expect(v).toBeGreaterThan(0);
    expect(v).toBeLessThan(1);
  });

  it("refuses k beyond n and counts out of range", () => {
    expect(() => passAtK(3, 1, 4)).toThrow(RangeError);
    expect(() => passAtK(3, 4, 1)).toThrow(RangeError);
    expect(() => passAtK(0, 0, 1)).toThrow(RangeError);
  });
});

describe("pairedBootstrap", () => {
  it("gives a zero interval for identical sides and a point for a constant difference", () => {
    expect(pairedBootstrap([0, 0, 0, 0])).toEqual([0, 0]);
    expect(pairedBootstrap([-1, -1, -1])).toEqual([-1, -1]);
    expect(pairedBootstrap([])).toEqual([0, 0]);
  });

  it("is the same for the same seed, and depends on the seed", () => {
    const diffs = [0, 1, -1, 0.5, 0, 1, 0, -0.5, 1, 0, 0.25, -0.75, 1 / 3, 0.1, -0.2];
    const a = pairedBootstrap(diffs, { seed: 7, resamples: 999 });
    expect(pairedBootstrap(diffs, { seed: 7, resamples: 999 })).toEqual(a);
    expect(pairedBootstrap(diffs, { seed: 8, resamples: 999 })).not.toEqual(a);
    expect(a[0]).toBeLessThan(mean(diffs));
    expect(a[1]).toBeGreaterThan(mean(diffs));
  });

  it("lies wholly below zero for a consistent regression", () => {
    const [lo, hi] = pairedBootstrap([-1, -1, -1, -1, -1, -2 / 3]);
    expect(hi).toBeLessThan(0);
    expect(lo).toBeGreaterThanOrEqual(-1);
  });
});

describe("helpers", () => {
  it("seededRandom repeats its sequence and stays in [0, 1)", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    for (let i = 0; i < 100; i++) {
      const x = a();
      expect(b()).toBe(x);
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });

  it("quantile interpolates and median takes the middle", () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4], 0)).toBe(1);
    expect(quantile([1, 2, 3, 4], 1)).toBe(4);
    expect(median([5, 1, 3])).toBe(3);
    expect(median([])).toBeNaN();
  });
});
