// The performance targets (bench/README.md, "Current figures against the targets"), each read off
// one run's results as a ratio to its same-run reference: the report's `targets`, one row each.
// A row whose suite did not run (or could not measure) says so instead of a verdict.

export interface TargetRow {
  readonly target: string;
  /** What the figure is compared with, measured in the same run. */
  readonly reference: string;
  readonly measured?: number;
  /** The bound: at most (`≤`) or at least (`≥`). */
  readonly bound: number;
  readonly direction: "≤" | "≥";
  readonly verdict: "met" | "missed" | "not measured";
}

type Json = Record<string, unknown>;

/** The value at `path` in `results`, when it is a finite number. */
function at(results: Json, path: readonly string[]): number | undefined {
  let v: unknown = results;
  for (const key of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Json)[key];
  }
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function row(
  target: string,
  reference: string,
  measured: number | undefined,
  direction: "≤" | "≥",
  bound: number,
): TargetRow {
  const verdict =
    measured === undefined
      ? "not measured"
      : (direction === "≤" ? measured <= bound : measured >= bound)
        ? "met"
        : "missed";
  return {
    target,
    reference,
    ...(measured === undefined ? {} : { measured }),
    bound,
    direction,
    verdict,
  };
}

/** The largest valid input of the input suite: its peak RSS growth over its size. */
function largestValidOverInput(results: Json): number | undefined {
  const valid = (results.input as Json | undefined)?.valid;
  if (!Array.isArray(valid) || valid.length === 0) return undefined;
  const last = valid.at(-1) as Json;
  return typeof last.peakOverInput === "number" ? last.peakOverInput : undefined;
}

export function targetRows(results: Json): TargetRow[] {
  const floor = "JSON.parse + the model-turn validator (passage suite)";
  return [
    row(
      "per-turn overhead, features on, N = 100",
      floor,
      at(results, ["passage", "featuresRatiosToFloor", "turns100"]),
      "≤",
      6,
    ),
    row(
      "per-turn overhead, features on, N = 1 000",
      floor,
      at(results, ["passage", "featuresRatiosToFloor", "turns1000"]),
      "≤",
      6,
    ),
    row(
      "the best peer's warm step over Warrant's, N = 100",
      "bench:peers --quick (peers suite)",
      at(results, ["peers", "bestPeerOverWarrant"]),
      "≥",
      30,
    ),
    row(
      "tracing on over tracing off, per turn",
      "the telemetry suite's `off` variant",
      at(results, ["telemetry", "onVsOff"]),
      "≤",
      1.5,
    ),
    row(
      "peak RSS in MB, features on, N = 1 000",
      "absolute; beside it, a fresh `node` that imports nothing (nodeAloneRssMB)",
      at(results, ["passage", "features", "peakRssMB"]),
      "≤",
      64,
    ),
    row(
      "peak RSS in MB, bare executor, N = 1 000",
      "absolute; beside it, a fresh `node` that imports nothing (nodeAloneRssMB)",
      at(results, ["passage", "peakRssMB"]),
      "≤",
      64,
    ),
    row(
      "100 concurrent PostgreSQL loops over the bare INSERT loop",
      "bare INSERT loop, same pool size (store suite)",
      at(results, ["store", "concurrentThroughput", "postgres", "ratioToBare"]),
      "≥",
      0.5,
    ),
    row(
      "one PostgreSQL charge over one bare INSERT transaction",
      "bareInsertTransactionUs (store suite)",
      at(results, ["store", "decideAppendPerChargeUs", "postgres", "ratioToBareInsertTransaction"]),
      "≤",
      3,
    ),
    row(
      "sandboxed `exec true` over a bare spawn, bwrap (p50)",
      "bare spawn of true (sandbox suite)",
      at(results, ["sandbox", "bwrap", "ratioP50"]),
      "≤",
      6,
    ),
    row(
      "sandboxed `exec true` over a bare spawn, unshare (p50)",
      "bare spawn of true (sandbox suite)",
      at(results, ["sandbox", "unshare", "ratioP50"]),
      "≤",
      12,
    ),
    row(
      "validation peak RSS growth over the largest accepted input",
      "the input's size (input suite)",
      largestValidOverInput(results),
      "≤",
      10,
    ),
  ];
}
