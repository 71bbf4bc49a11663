// Measurement helpers for `npm run bench`: medians over repeated runs, never a single timing.
import { performance } from "node:perf_hooks";

export interface Timing {
  readonly medianUs: number;
  readonly p95Us: number;
  readonly minUs: number;
  readonly repeats: number;
  readonly iterations: number;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
}

export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Time `iterations` calls of `fn`, `repeats` times after `warmup` calls; µs per call. */
export function measureSync(
  fn: () => unknown,
  opts: { iterations?: number; repeats?: number; warmup?: number } = {},
): Timing {
  const iterations = opts.iterations ?? 1000;
  const repeats = opts.repeats ?? 7;
  for (let i = 0; i < (opts.warmup ?? Math.min(iterations, 200)); i++) fn();
  const per: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    for (let i = 0; i < iterations; i++) fn();
    per.push(((performance.now() - t0) * 1000) / iterations);
  }
  return summarise(per, iterations);
}

export async function measureAsync(
  fn: () => Promise<unknown>,
  opts: { iterations?: number; repeats?: number; warmup?: number } = {},
): Promise<Timing> {
  const iterations = opts.iterations ?? 100;
  const repeats = opts.repeats ?? 7;
  for (let i = 0; i < (opts.warmup ?? Math.min(iterations, 20)); i++) await fn();
  const per: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    for (let i = 0; i < iterations; i++) await fn();
    per.push(((performance.now() - t0) * 1000) / iterations);
  }
  return summarise(per, iterations);
}

function summarise(per: number[], iterations: number): Timing {
  return {
    medianUs: round(median(per)),
    p95Us: round(percentile(per, 95)),
    minUs: round(Math.min(...per)),
    repeats: per.length,
    iterations,
  };
}

/**
 * The source of `peakRssBytes()` for a child program: the process's own peak RSS, from VmHWM in
 * /proc/self/status (its own memory since exec). `process.resourceUsage().maxRSS`, the fallback
 * where there is no /proc, carries over the parent's RSS at fork time on Linux, so a child of a
 * large parent would report the parent's size.
 */
export const PEAK_RSS_SOURCE = `function peakRssBytes() {
  try {
    const m = /^VmHWM:\\s+(\\d+) kB$/m.exec(process.getBuiltinModule?.("node:fs")?.readFileSync("/proc/self/status", "utf8") ?? "");
    if (m) return Number(m[1]) * 1024;
  } catch {}
  return process.resourceUsage().maxRSS * 1024;
}`;
