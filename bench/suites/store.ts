// The ledger stores: decide + append per charge (memory, SQLite, PostgreSQL), the PostgreSQL one
// beside one bare single-row INSERT committed in its own transaction (`bareInsertTransactionUs`);
// throughput with 100 loops charged concurrently (SQLite, PostgreSQL) against a bare INSERT loop
// into the same database in the same run; and fsync calls per durable charge on SQLite, counted
// with strace.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import type { LoopCommand } from "../../src/core/loop/types.js";
import type { LedgerStore } from "../../src/core/ports/ledger-store.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { measureAsync, round } from "../util.js";
import type { BenchSuite } from "./index.js";

const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PASSAGES_PER_LOOP = 1000;
const LOOPS = 100;

function openCommand(query: string): LoopCommand {
  return {
    op: "open",
    query,
    binding: "operator-task-local-binding:bench",
    operator: "node-operator-binding:bench",
    layers: [
      { "max/passages": PASSAGES_PER_LOOP, "max/experiments": 1, "max/wall-time-ms": 86_400_000 },
    ],
  };
}

function charge(n: number): LoopCommand {
  return {
    op: "charge-passage",
    role: "implementer",
    agent: "agent:bench",
    passage: `passage:p${n}`,
  };
}

async function mustAppend(ledger: LoopLedger, query: string, command: LoopCommand): Promise<void> {
  const d = await ledger.execute(query, command, new Date());
  if (d.result !== "appended") throw new Error(`bench: ${command.op} was ${d.result}`);
}

/** µs per decide + append of one charge, loops rotated before their passage budget runs out. */
async function perCharge(store: LedgerStore, label: string): Promise<Record<string, unknown>> {
  const ledger = new LoopLedger(store);
  const iterations = 100;
  const repeats = 7;
  const warmup = 20;
  const total = iterations * repeats + warmup;
  const loops = Math.ceil(total / (PASSAGES_PER_LOOP - 10));
  const queries = Array.from({ length: loops }, (_, i) => `query:bench-${label}-${i}`);
  for (const q of queries) await mustAppend(ledger, q, openCommand(q));
  let n = 0;
  const timing = await measureAsync(
    () => {
      const q = queries[Math.floor(n / (PASSAGES_PER_LOOP - 10))] as string;
      return mustAppend(ledger, q, charge(n++));
    },
    { iterations, repeats, warmup },
  );
  return { ...timing, charges: n };
}

/** Facts/s with LOOPS loops charged at once, `each` charges per loop. */
async function concurrentCharges(store: LedgerStore, each: number): Promise<number> {
  const ledger = new LoopLedger(store);
  const queries = Array.from({ length: LOOPS }, (_, i) => `query:many-${i}`);
  for (const q of queries) await mustAppend(ledger, q, openCommand(q));
  const t0 = performance.now();
  await Promise.all(
    queries.map(async (q) => {
      for (let i = 0; i < each; i++) await mustAppend(ledger, q, charge(i));
    }),
  );
  return (LOOPS * each) / ((performance.now() - t0) / 1000);
}

function sqliteBareInsertsPerSecond(file: string, total: number): number {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec("CREATE TABLE IF NOT EXISTS bench_bare (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO bench_bare (v) VALUES (?)");
  const t0 = performance.now();
  for (let i = 0; i < total; i++) insert.run(`row ${i}`);
  const rate = total / ((performance.now() - t0) / 1000);
  db.close();
  return rate;
}

async function pgBareInsertsPerSecond(url: string, schema: string, each: number): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  try {
    const table = `"${schema}".bench_bare`;
    await pool.query(
      `CREATE TABLE ${table} (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v TEXT NOT NULL)`,
    );
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: LOOPS }, async (_, l) => {
        for (let i = 0; i < each; i++)
          await pool.query(`INSERT INTO ${table} (v) VALUES ($1)`, [`${l} ${i}`]);
      }),
    );
    return (LOOPS * each) / ((performance.now() - t0) / 1000);
  } finally {
    await pool.end();
  }
}

/**
 * µs per bare single-row INSERT committed in its own transaction (autocommit, synchronous_commit as
 * the server has it), one after another on one connection: the reference for a single charge.
 */
async function pgBareInsertTransactionUs(url: string, schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const table = `"${schema}".bench_bare_single`;
    await client.query(
      `CREATE TABLE ${table} (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v TEXT NOT NULL)`,
    );
    let n = 0;
    const timing = await measureAsync(
      () => client.query(`INSERT INTO ${table} (v) VALUES ($1)`, [`row ${n++}`]),
      { iterations: 100, repeats: 7, warmup: 20 },
    );
    return timing.medianUs;
  } finally {
    await client.end();
  }
}

/**
 * fsync + fdatasync calls in a child that opens a fresh SQLite store, opens `loops` loops and makes
 * `each` durable charges in every one of them, the loops charged concurrently.
 */
function fsyncCalls(dir: string, loops: number, each: number): number | undefined {
  const out = path.join(dir, `strace-${loops}-${each}.txt`);
  const db = path.join(dir, `fsync-${loops}-${each}.db`);
  const imports = (p: string) => JSON.stringify(`file://${path.join(distRoot, p)}`);
  const child = `
    const { openStore } = await import(${imports("src/adapters/store/open-store.js")});
    const { LoopLedger } = await import(${imports("src/runtime/loop-ledger.js")});
    const store = await openStore(${JSON.stringify(`sqlite:${db}`)});
    const ledger = new LoopLedger(store);
    const open = ${JSON.stringify(openCommand("query:fsync"))};
    const queries = Array.from({ length: ${loops} }, (_, i) => "query:fsync-" + i);
    for (const q of queries) await ledger.execute(q, { ...open, query: q }, new Date());
    await Promise.all(queries.map(async (q) => {
      for (let i = 0; i < ${each}; i++) {
        const d = await ledger.execute(q, { op: "charge-passage", role: "implementer", agent: "agent:bench", passage: "passage:p" + i }, new Date());
        if (d.result !== "appended") throw new Error(d.result);
      }
    }));
    await store.close();`;
  const r = spawnSync(
    "strace",
    [
      "-f",
      "-c",
      "-e",
      "trace=fsync,fdatasync",
      "-o",
      out,
      process.execPath,
      "--input-type=module",
      "-e",
      child,
    ],
    { encoding: "utf8" },
  );
  if (r.error !== undefined || r.status !== 0) return undefined;
  let calls = 0;
  for (const line of readFileSync(out, "utf8").split("\n")) {
    const cols = line.trim().split(/\s+/);
    const name = cols.at(-1);
    if (name === "fsync" || name === "fdatasync") calls += Number(cols[3]);
  }
  return calls;
}

/** fsyncs per charge: the run with charges minus the same run without, over the charges. */
function fsyncsPerCharge(dir: string, loops: number, each: number): Record<string, unknown> {
  const base = fsyncCalls(dir, loops, 0);
  const loaded = fsyncCalls(dir, loops, each);
  if (base === undefined || loaded === undefined) {
    return { skipped: "strace unavailable (apt-get install strace)" };
  }
  return {
    loops,
    charges: loops * each,
    fsyncCallsWithCharges: loaded,
    fsyncCallsWithout: base,
    perCharge: round((loaded - base) / (loops * each), 4),
  };
}

async function reachablePostgres(): Promise<string | undefined> {
  const candidates = [
    process.env.WARRANT_BENCH_PG,
    process.env.WARRANT_TEST_PG,
    "postgres://postgres@127.0.0.1:5432/test",
    "postgres://root@127.0.0.1:5432/test",
  ].filter((u): u is string => u !== undefined && u !== "");
  for (const url of candidates) {
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

async function runStoreBench(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), "warrant-bench-store-"));
  const result: Record<string, unknown> = {};
  try {
    const memory = new MemoryLedgerStore();
    const sqlite = await openStore(`sqlite:${path.join(dir, "per-charge.db")}`);
    result.decideAppendPerChargeUs = {
      memory: await perCharge(memory, "memory"),
      sqlite: await perCharge(sqlite, "sqlite"),
    };
    await sqlite.close();

    // SQLite: one process, so "concurrently" interleaves 100 loops' appends on one connection.
    const each = 20;
    const sqliteMany = await openStore(`sqlite:${path.join(dir, "many.db")}`);
    const sqliteRate = await concurrentCharges(sqliteMany, each);
    await sqliteMany.close();
    const sqliteBare = sqliteBareInsertsPerSecond(path.join(dir, "many.db"), LOOPS * each);
    const throughput: Record<string, unknown> = {
      loops: LOOPS,
      chargesPerLoop: each,
      sqlite: {
        factsPerSecond: round(sqliteRate, 0),
        bareInsertsPerSecond: round(sqliteBare, 0),
        ratioToBare: round(sqliteRate / sqliteBare, 3),
      },
    };

    const url = await reachablePostgres();
    if (url === undefined) {
      (result.decideAppendPerChargeUs as Record<string, unknown>).postgres = {
        skipped: "no server",
      };
      throughput.postgres = { skipped: "no PostgreSQL server (set WARRANT_BENCH_PG)" };
    } else {
      const schema = `warrant_bench_${randomBytes(4).toString("hex")}`;
      const u = new URL(url);
      u.searchParams.set("schema", schema);
      try {
        const store = await openStore(u.toString());
        const pgCharge = await perCharge(store, "pg");
        const bareTransaction = await pgBareInsertTransactionUs(url, schema);
        (result.decideAppendPerChargeUs as Record<string, unknown>).postgres = {
          ...pgCharge,
          bareInsertTransactionUs: bareTransaction,
          ratioToBareInsertTransaction: round(Number(pgCharge.medianUs) / bareTransaction, 2),
        };
        const rate = await concurrentCharges(store, each);
        await store.close();
        const bare = await pgBareInsertsPerSecond(url, schema, each);
        throughput.postgres = {
          factsPerSecond: round(rate, 0),
          bareInsertsPerSecond: round(bare, 0),
          ratioToBare: round(rate / bare, 3),
          poolSize: 10,
        };
      } finally {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      }
    }
    result.concurrentThroughput = throughput;

    result.sqliteFsyncsPerCharge = {
      method:
        "strace -f -c -e trace=fsync,fdatasync on a child process; the same run without charges " +
        "(open, loops opened, close) subtracted",
      oneLoopSequential: fsyncsPerCharge(dir, 1, 900),
      hundredLoopsConcurrent: fsyncsPerCharge(dir, LOOPS, 9),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

export const storeSuite: BenchSuite = { name: "store", run: runStoreBench };
