// Eval sets: the harness's overhead per cell — the cell's wall time minus its model time (each model
// call's latency) and minus the task's own command time (the run's steps and verifier) — as p50 and
// p95 over the example set's cells at concurrency 1, and cells per minute at concurrency 1, 2 and 4.
// Each concurrency runs the example's six tasks × two agents on a fresh SQLite store, with the
// host's sandbox. Target: overhead p50 ≤ 150 ms.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createWarrant } from "../../src/library/create-warrant.js";
import type { WarrantEvent } from "../../src/runtime/events.js";
import { median, percentile, round } from "../util.js";
import type { BenchSuite } from "./index.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const EXAMPLE = path.join(root, "examples/evals");
const TASKS = ["median", "clamp", "word-count", "fizzbuzz", "palindrome", "chunks"];
const TARGET_OVERHEAD_P50_MS = 150;

function setFile(dir: string, epochs: number): string {
  const scripted = (agent: string) =>
    Object.fromEntries(
      ["implementer", "reviewer", "summarizer"].map((r) => [
        r,
        `scripted:${path.join(EXAMPLE, "scripts", agent, "{task}", `${r}.jsonl`)}`,
      ]),
    );
  const file = path.join(dir, "set.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "warrant-eval-set.v1",
      name: "bench",
      approval: "auto",
      epochs,
      tasks: TASKS.map((id) => ({ id, pack: path.join(EXAMPLE, "tasks", id, "task-pack.json") })),
      agents: [
        { id: "fixer", models: scripted("fixer") },
        { id: "wrong-fixer", models: scripted("wrong-fixer") },
      ],
    }),
  );
  return file;
}

interface CellTimes {
  start: number;
  end?: number;
  modelMs: number;
  commandMs: number;
  sandboxMs: number;
  /** From the drive's start to its end. */
  driveMs: number;
  driveStart?: number;
}

async function runAt(
  concurrency: number,
  epochs: number,
): Promise<{
  cells: number;
  wallMs: number;
  overheads: number[];
  sandbox: number[];
  outsideDrive: number[];
}> {
  const dir = mkdtempSync(path.join(tmpdir(), "warrant-bench-eval-"));
  try {
    const byQuery = new Map<string, CellTimes>();
    const times = (q: string): CellTimes => {
      let t = byQuery.get(q);
      if (t === undefined) {
        t = { start: performance.now(), modelMs: 0, commandMs: 0, sandboxMs: 0, driveMs: 0 };
        byQuery.set(q, t);
      }
      return t;
    };
    const onEvent = (e: WarrantEvent) => {
      if (e.kind === "model-call-end") times(e.query).modelMs += e.latencyMs;
      else if (e.kind === "run-phase" && (e.phase === "steps" || e.phase === "verifier"))
        times(e.query).commandMs += e.durationMs;
      else if (e.kind === "run-phase") times(e.query).sandboxMs += e.durationMs;
      else if (e.kind === "drive-start") times(e.query).driveStart = performance.now();
      else if (e.kind === "drive-end") {
        const t = times(e.query);
        if (t.driveStart !== undefined) t.driveMs += performance.now() - t.driveStart;
      }
    };
    const warrant = await createWarrant({
      store: `sqlite:${path.join(dir, "ledger.db")}`,
      onEvent,
    });
    try {
      const t0 = performance.now();
      const handle = warrant.evals.run(setFile(dir, epochs), { concurrency });
      for await (const e of handle) {
        if (e.kind === "cell-start") times(e.query).start = performance.now();
        else if (e.kind === "cell-end") times(e.cell.query).end = performance.now();
      }
      const report = await handle.result;
      const wallMs = performance.now() - t0;
      if (report.status !== "complete") throw new Error(`the eval ended ${report.status}`);
      const ended = [...byQuery.values()].filter((t) => t.end !== undefined);
      const overheads = ended.map((t) => (t.end as number) - t.start - t.modelMs - t.commandMs);
      return {
        cells: report.cells.length,
        wallMs,
        overheads,
        sandbox: ended.map((t) => t.sandboxMs),
        outsideDrive: ended.map((t) => (t.end as number) - t.start - t.driveMs),
      };
    } finally {
      await warrant.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const evalSuite: BenchSuite = {
  name: "eval",
  async run() {
    const epochs = 2;
    const perConcurrency: Record<string, unknown> = {};
    let overhead: Record<string, unknown> = {};
    for (const concurrency of [1, 2, 4]) {
      const r = await runAt(concurrency, epochs);
      perConcurrency[String(concurrency)] = {
        cells: r.cells,
        wallMs: round(r.wallMs, 0),
        cellsPerMinute: round((r.cells / r.wallMs) * 60_000, 1),
      };
      if (concurrency === 1) {
        const p50 = median(r.overheads);
        overhead = {
          cells: r.overheads.length,
          p50Ms: round(p50, 1),
          p95Ms: round(percentile(r.overheads, 95), 1),
          // Parts of it: making and destroying the run's environment, and the eval's own work
          // outside the loop's drive (finding the cell's loop, closing it, its report row).
          sandboxP50Ms: round(median(r.sandbox), 1),
          outsideDriveP50Ms: round(median(r.outsideDrive), 1),
          targetP50Ms: TARGET_OVERHEAD_P50_MS,
          meetsTarget: p50 <= TARGET_OVERHEAD_P50_MS,
        };
      }
    }
    return {
      set: `${TASKS.length} tasks × 2 agents × ${epochs} epochs (examples/evals)`,
      overheadPerCell: overhead,
      concurrency: perConcurrency,
    };
  },
};
