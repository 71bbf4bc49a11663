// Dispatch through the library API over PostgreSQL: ms per loop opened and queued by one runtime
// whose queue keeps one pool for every dispatch, against the previous way in the same run (the loop
// opened, then queued by graphile-worker's quickAddJob, which makes and ends a pool per job). The
// pack is loaded once (loadPack) and dispatched many times, as `run --dispatch --count N` does;
// `pooledFromFileMs` passes the file instead, reading and hashing the pack for every loop.
// Target: ≤ 50 ms per loop.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { loadPack } from "../../src/adapters/fs/pack-loader.js";
import { DRIVE_TASK } from "../../src/adapters/queue/graphile-job-queue.js";
import { demoPackFile } from "../../src/cli/packs.js";
import { createWarrant } from "../../src/library/create-warrant.js";
import { uriModels } from "../../src/library/uri-models.js";
import { postgresJobQueue } from "../../src/postgres.js";
import { median, round } from "../util.js";
import type { BenchSuite } from "./index.js";

const TARGET_MS = 50;
const LOOPS = 30;

async function reachable(): Promise<string | undefined> {
  for (const url of [
    process.env.WARRANT_BENCH_PG,
    process.env.WARRANT_TEST_PG,
    "postgres://postgres@127.0.0.1:5432/test",
    "postgres://root@127.0.0.1:5432/test",
  ]) {
    if (url === undefined || url === "") continue;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.end();
      return url;
    } catch {
      await client.end().catch(() => {});
    }
  }
  return undefined;
}

/** ms per loop for `LOOPS` loops, after one warm-up loop; `queue` says how each is queued. */
async function perLoop(
  url: string,
  mode: "pooled" | "pooled-file" | "per-dispatch",
): Promise<number[]> {
  const schema = `warrant_bench_dispatch_${randomBytes(4).toString("hex")}`;
  const uri = `${url}?schema=${schema}`;
  const queue = postgresJobQueue(uri);
  const warrant = await createWarrant({
    store: uri,
    models: uriModels(),
    approver: "auto",
    signer: "none",
    queue,
  });
  const { Logger, quickAddJob } = await import("graphile-worker");
  const quiet = new Logger(() => () => {});
  const loaded = await loadPack(demoPackFile());
  if (!loaded.ok) throw new Error("bench: the demo pack does not load");
  const pack = loaded.value;
  const one = async () => {
    if (mode === "pooled") {
      await warrant.dispatch(pack);
      return;
    }
    if (mode === "pooled-file") {
      await warrant.dispatch(demoPackFile());
      return;
    }
    const query = await warrant.open(pack);
    await quickAddJob(
      { connectionString: url, schema: queue.schema, logger: quiet },
      DRIVE_TASK,
      { query },
      { maxAttempts: 5 },
    );
  };
  const times: number[] = [];
  try {
    await warrant.dispatch(pack); // warm-up: schema, modules, the first connection
    for (let i = 0; i < LOOPS; i++) {
      const t0 = performance.now();
      await one();
      times.push(performance.now() - t0);
    }
  } finally {
    await warrant.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      `DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`,
    );
    await client.end();
  }
  return times;
}

export const dispatchSuite: BenchSuite = {
  name: "dispatch",
  async run() {
    const url = await reachable();
    if (url === undefined) return { skipped: "no PostgreSQL server (set WARRANT_BENCH_PG)" };
    const baseline = median(await perLoop(url, "per-dispatch"));
    const pooled = median(await perLoop(url, "pooled"));
    const fromFile = median(await perLoop(url, "pooled-file"));
    return {
      loops: LOOPS,
      perLoopMs: {
        pooled: round(pooled, 1),
        connectionPerDispatch: round(baseline, 1),
        pooledFromFile: round(fromFile, 1),
      },
      ratioVsConnectionPerDispatch: round(baseline / pooled, 2),
      targetMs: TARGET_MS,
      withinTarget: pooled <= TARGET_MS,
    };
  },
};
