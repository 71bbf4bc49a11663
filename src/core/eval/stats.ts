// The statistics of an eval's report and comparison, as pure functions: the Wilson score interval
// of a pass rate, the unbiased pass@k estimator, and a seeded paired bootstrap interval of a mean
// difference (the same seed gives the same interval, so a rerun prints the same numbers).

/** The 0.975 quantile of the standard normal distribution: a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

/**
 * The Wilson score interval of `passed` successes out of `n` trials, clamped to [0, 1]; [0, 1] when
 * there are no trials (nothing is known).
 */
export function wilsonInterval(passed: number, n: number, z = Z95): [number, number] {
  if (!Number.isInteger(n) || n < 0 || !Number.isInteger(passed) || passed < 0 || passed > n)
    throw new RangeError(`wilsonInterval: ${passed} of ${n} is not a count`);
  if (n === 0) return [0, 1];
  const p = passed / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  // At the edges the exact bound is 0 (or 1); rounding must not leave it a hair away.
  const low = passed === 0 ? 0 : Math.max(0, centre - half);
  const high = passed === n ? 1 : Math.min(1, centre + half);
  return [low, high];
}

/**
 * The unbiased estimator of pass@k from `n` samples of which `c` passed: 1 − C(n−c, k) / C(n, k),
 * computed as a product so that no binomial coefficient overflows.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k))
    throw new RangeError("passAtK takes integers");
  if (n < 1 || c < 0 || c > n || k < 1 || k > n)
    throw new RangeError(`passAtK: n=${n}, c=${c}, k=${k} is out of range`);
  if (n - c < k) return 1;
  // C(n−c, k) / C(n, k) = Π_{i=n−c+1}^{n} (1 − k / i)
  let ratio = 1;
  for (let i = n - c + 1; i <= n; i++) ratio *= 1 - k / i;
  return 1 - ratio;
}

/** A small seeded generator (mulberry32): uniform numbers in [0, 1), the same for the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface BootstrapOptions {
  /** The generator's seed (default 1). */
  readonly seed?: number;
  /** How many resamples (default 10 000). */
  readonly resamples?: number;
  /** The interval's confidence (default 0.95). */
  readonly confidence?: number;
}

/** The mean of `values` (0 for none). */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/**
 * A percentile bootstrap interval of the mean of paired differences `diffs` (one per task: head −
 * base): the tasks are resampled with replacement, so the pairing is kept. Deterministic for a
 * seed; [0, 0] for no pairs.
 */
export function pairedBootstrap(
  diffs: readonly number[],
  options: BootstrapOptions = {},
): [number, number] {
  const n = diffs.length;
  if (n === 0) return [0, 0];
  const resamples = options.resamples ?? 10_000;
  const confidence = options.confidence ?? 0.95;
  if (!Number.isInteger(resamples) || resamples < 1)
    throw new RangeError("pairedBootstrap: resamples must be a positive integer");
  const random = seededRandom(options.seed ?? 1);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += diffs[Math.floor(random() * n)] as number;
    means[r] = sum / n;
  }
  means.sort();
  const alpha = (1 - confidence) / 2;
  return [quantile(means, alpha), quantile(means, 1 - alpha)];
}

/** The q-quantile of sorted values, interpolated linearly between neighbours. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const at = q * (n - 1);
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (at - lo);
}

/** The median of values (NaN for none). */
export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}
