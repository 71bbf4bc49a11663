// The operator's view of workers and their queue over a shared PostgreSQL: `workers`, `loops` with
// status/heldBy/leaseUntil and `--waiting failed`, `requeue` and its refusals; a worker taking over
// a loop whose lease a dead worker left (and a job a dead worker holds); a worker that drains on
// SIGTERM releasing a loop that waits for an approval at once.
import {
  chmodSync,
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot, runCli } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { ensureStore } from "../helpers/store.js";
import { dispatch, MODELS, until, WorkerProcess } from "./failover-harness.js";

const pg = await postgresForTests();

/** What these tests change of the demo's task pack. */
interface DemoPack {
  admission: string;
  commands: Record<string, { argv: string[] }>;
}

/** What a worker said before it exited, for the message of a failed exit check. */
function exitContext(w: WorkerProcess): string {
  const last = w.lines.slice(-8).map((l) => JSON.stringify(l));
  return `stderr:\n${w.stderr.slice(-2000)}\nlast lines:\n${last.join("\n")}`;
}

describe.skipIf(!pg.enabled)("workers, loops and requeue over a shared PostgreSQL", () => {
  const schemas = new TestSchemas(pg.url, "queue_ops");
  const cwd = mkdtempSync(path.join(tmpdir(), "warrant-queue-ops-"));
  const workers: WorkerProcess[] = [];
  const made: string[] = [];
  const newStore = () => {
    const uri = schemas.uri();
    made.push(uri);
    return { uri, schema: TestSchemas.schemaOf(uri) };
  };
  /** A copy of the demo in `name` under cwd, its agents beside it, its pack changed by `change`. */
  const demoCopy = (name: string, change: (pack: DemoPack) => void) => {
    const packDir = path.join(cwd, name);
    cpSync(path.join(repoRoot, "examples/fix-failing-test"), packDir, { recursive: true });
    cpSync(path.join(repoRoot, "examples/agents"), path.join(cwd, "agents"), { recursive: true });
    const packFile = path.join(packDir, "task-pack.json");
    const pack = JSON.parse(readFileSync(packFile, "utf8")) as DemoPack;
    change(pack);
    writeFileSync(packFile, JSON.stringify(pack));
    return packFile;
  };
  const loops = async (store: string, ...flags: string[]) => {
    const r = await runCli(["loops", "--json", "--store", store, ...flags], { cwd });
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as {
      query: string;
      status: string;
      heldBy?: string;
      leaseUntil?: string;
    }[];
  };
  afterAll(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.signal("SIGKILL");
    for (const uri of made)
      await schemas.sql(`DROP SCHEMA IF EXISTS "${TestSchemas.schemaOf(uri)}_jobs" CASCADE`);
    await schemas.dropAll();
    rmSync(cwd, { recursive: true, force: true });
  });

  it("workers lists a live worker under the queue's id; it deregisters when it stops", {
    timeout: 90_000,
  }, async () => {
    const { uri } = newStore();
    const none = await runCli(["workers", "--json", "--store", uri], { cwd });
    expect(none.code, none.stderr).toBe(0);
    expect(JSON.parse(none.stdout)).toEqual([]);
    const w = new WorkerProcess("w", uri, { cwd, env: {} });
    workers.push(w);
    await until("the worker to start", 30_000, () => w.lines.some((l) => l.event === "started"));
    const id = w.lines.find((l) => l.event === "started")?.worker as string;
    expect(id).toMatch(/^pool-[0-9a-f]+$/);
    const listed = JSON.parse(
      (await runCli(["workers", "--json", "--store", uri], { cwd })).stdout,
    );
    expect(listed).toEqual([
      {
        id,
        host: expect.any(String),
        pid: w.child.pid,
        started: expect.any(String),
        lastHeartbeat: expect.any(String),
        loops: [],
      },
    ]);
    const plain = await runCli(["workers", "--store", uri], { cwd });
    expect(plain.stdout).toContain(`${id}  host `);
    w.signal("SIGTERM");
    expect(await w.exited, exitContext(w)).toEqual({ code: 0, signal: null });
    expect(w.lines.map((l) => l.phase).filter(Boolean)).toEqual(["draining", "stopped"]);
    // Every line says when and which loop (null for the worker's own).
    for (const l of w.lines) {
      expect(typeof l.at).toBe("string");
      expect("query" in l).toBe(true);
    }
    const after = await runCli(["workers", "--json", "--store", uri], { cwd });
    expect(JSON.parse(after.stdout)).toEqual([]);
  });

  it("loops tells queued, waiting, stuck and failed apart; requeue puts a failed job back", {
    timeout: 90_000,
  }, async () => {
    const { uri, schema } = newStore();
    const [queued, waiting, stuck, failed] = await dispatch(uri, cwd, 4);
    const jobs = `"${schema}_jobs"._private_jobs`;
    // No job: the loop waits for someone. A dead worker's expired lease: stuck. Used-up attempts: failed.
    await schemas.sql(`DELETE FROM ${jobs} WHERE key = $1`, [waiting]);
    await schemas.sql(
      `INSERT INTO "${schema}".warrant_leases (query, holder, token, expires_at) ` +
        "VALUES ($1, 'pool-gone/job-1', 1, now() - interval '1 minute')",
      [stuck],
    );
    await schemas.sql(
      `UPDATE ${jobs} SET attempts = max_attempts, last_error = 'boom' WHERE key = $1`,
      [failed],
    );
    const rows = new Map((await loops(uri)).map((r) => [r.query, r]));
    expect(rows.get(queued as string)).toMatchObject({ status: "queued" });
    expect(rows.get(queued as string)?.heldBy).toBeUndefined();
    expect(rows.get(waiting as string)).toMatchObject({ status: "waiting" });
    expect(rows.get(stuck as string)).toMatchObject({
      status: "stuck",
      heldBy: "pool-gone/job-1",
      leaseUntil: expect.stringMatching(/^\d{4}-/),
    });
    expect(rows.get(failed as string)).toMatchObject({ status: "failed" });
    expect((await loops(uri, "--waiting", "failed")).map((r) => r.query)).toEqual([failed]);
    const plain = await runCli(["loops", "--store", uri], { cwd });
    // The header row, then one aligned row per loop: the stuck one names its lease's holder.
    expect(plain.stdout.split("\n")[0]).toMatch(/^QUERY +STATE +STATUS +WAITING +HELD BY$/);
    expect(plain.stdout).toMatch(new RegExp(`${stuck} +open +stuck +.+ +pool-gone/job-1 until `));

    const requeued = await runCli(["requeue", failed as string, "--json", "--store", uri], { cwd });
    expect(requeued.code, requeued.stderr).toBe(0);
    expect(JSON.parse(requeued.stdout)).toMatchObject({ query: failed, status: "requeued" });
    expect(await loops(uri, "--waiting", "failed")).toEqual([]);
    expect((await loops(uri)).find((r) => r.query === failed)?.status).toBe("queued");
    // A loop no job stands for is queued by requeue too.
    expect((await runCli(["requeue", waiting as string, "--store", uri], { cwd })).code).toBe(0);
    expect((await loops(uri)).find((r) => r.query === waiting)?.status).toBe("queued");

    const bad = await runCli(["loops", "--waiting", "approval", "--store", uri], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--waiting takes failed");
  });

  it("requeue refuses an unknown loop, a stopped loop and a store without a queue", {
    timeout: 60_000,
  }, async () => {
    const { uri } = newStore();
    const unknown = await runCli(["requeue", "query:nothing-here", "--store", uri], { cwd });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("loop/not-opened");
    expect(unknown.stdout).toBe("");
    // A store that is not there is said first (store/not-found); one that is, but has no queue,
    // is a usage error.
    const missing = await runCli(["requeue", "query:x", "--store", `sqlite:${cwd}/l.db`], { cwd });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("store/not-found");
    await ensureStore(`sqlite:${cwd}/l.db`, cwd);
    const sqlite = await runCli(["requeue", "query:x", "--store", `sqlite:${cwd}/l.db`], { cwd });
    expect(sqlite.code).toBe(2);
    expect(sqlite.stderr).toContain("need a postgres://");
    // A loop cancelled is stopped: not driven again.
    const [q] = await dispatch(uri, cwd, 1);
    expect((await runCli(["cancel", q as string, "--store", uri], { cwd })).code).toBe(0);
    const stopped = await runCli(["requeue", q as string, "--store", uri], { cwd });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain("queue/loop-stopped");
  });

  it("run --count and several packs need --dispatch", async () => {
    const demo = path.join(repoRoot, "examples/fix-failing-test/task-pack.json");
    const r = await runCli(["run", demo, ...MODELS, "--count", "2", "--store", "memory:"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("need --dispatch");
    const zero = await runCli(["run", demo, "--dispatch", "--count", "0"], { cwd });
    expect(zero.code).toBe(2);
  });

  it("a worker takes over a loop whose lease a dead worker left, and a job a dead worker holds", {
    timeout: 120_000,
  }, async () => {
    const { uri, schema } = newStore();
    const [leased, locked] = await dispatch(uri, cwd, 2);
    // A worker that died mid-drive: its lease expired, its job still locked (graphile-worker would
    // keep that lock for 4 hours). Another died after taking its job, before leasing its loop.
    await schemas.sql(
      `INSERT INTO "${schema}".warrant_leases (query, holder, token, expires_at) ` +
        "VALUES ($1, 'pool-dead/job-1', 1, now() - interval '1 second')",
      [leased],
    );
    await schemas.sql(
      `UPDATE "${schema}_jobs"._private_jobs SET locked_by = 'pool-dead', ` +
        "locked_at = now() - interval '1 minute', attempts = 1 WHERE key = ANY($1)",
      [[leased, locked]],
    );
    const w = new WorkerProcess("w", uri, { cwd, env: { WARRANT_LEASE_TTL_MS: "1000" } });
    workers.push(w);
    await until("both loops to stop", 100_000, () =>
      [leased, locked].every((q) => w.lines.some((l) => l.event === "end" && l.query === q)),
    );
    const requeued = w.lines.filter((l) => l.event === "requeued");
    expect(requeued).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          query: leased,
          reason: "expired-lease",
          holder: "pool-dead/job-1",
        }),
        expect.objectContaining({ query: locked, reason: "orphaned-job", holder: "pool-dead" }),
      ]),
    );
    for (const q of [leased, locked])
      expect(w.lines.find((l) => l.event === "end" && l.query === q)).toMatchObject({
        status: "stopped",
        stop: { reason: "succeeded" },
      });
    w.signal("SIGTERM");
    expect(await w.exited, exitContext(w)).toEqual({ code: 0, signal: null });
  });

  it("SIGTERM releases a loop that waits for an approval at once and queues it again", {
    timeout: 90_000,
  }, async () => {
    const { uri } = newStore();
    // The demo, with its admission decided by an operator.
    const packFile = demoCopy("operator-admission", (pack) => {
      pack.admission = "operator";
    });
    const r = await runCli(["run", packFile, ...MODELS, "--store", uri, "--dispatch", "--json"], {
      cwd,
    });
    expect(r.code, r.stderr).toBe(0);
    const { query } = JSON.parse(r.stdout) as { query: string };
    // No --yes: the worker waits for `warrant approve`.
    const w = new WorkerProcess("w", uri, { cwd, env: {}, yes: false });
    workers.push(w);
    await until("the admission to be awaited", 60_000, () =>
      w.lines.some(
        (l) => l.query === query && String(l.text ?? "").startsWith("waiting: approval"),
      ),
    );
    w.signal("SIGTERM");
    expect(await w.exited, exitContext(w)).toEqual({ code: 0, signal: null });
    // Released at once, not after the 30 s timeout: no forcing phase.
    expect(w.lines.some((l) => l.phase === "forcing")).toBe(false);
    expect(w.lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event: "requeued", query, reason: "shutdown" }),
      ]),
    );
    const row = (await loops(uri)).find((x) => x.query === query);
    expect(row).toMatchObject({ status: "queued" });
    expect(row?.heldBy).toBeUndefined();
  });

  /**
   * The demo whose tests take 15 s to run: a run in progress outlasts the worker's shutdown
   * timeout whatever the machine's speed (the demo's own run can end within 200 ms).
   */
  const slowPack = () =>
    demoCopy("slow-tests", (pack) => {
      pack.commands["run-tests"] = {
        ...pack.commands["run-tests"],
        argv: ["node", "-e", "setTimeout(() => {}, 15000)"],
      };
    });

  for (const how of ["a second signal", "the shutdown timeout"] as const) {
    it(`${how} stops a run in progress now: environment destroyed, lease released, loop queued`, {
      timeout: 90_000,
    }, async () => {
      const { uri, schema } = newStore();
      const envDir = mkdtempSync(path.join(tmpdir(), "warrant-queue-ops-env-"));
      chmodSync(envDir, 0o755);
      const r = await runCli(
        ["run", slowPack(), ...MODELS, "--store", uri, "--dispatch", "--json"],
        { cwd },
      );
      expect(r.code, r.stderr).toBe(0);
      const { query } = JSON.parse(r.stdout) as { query: string };
      const w = new WorkerProcess("w", uri, {
        cwd,
        env: { TMPDIR: envDir },
        shutdownTimeoutS: how === "a second signal" ? 30 : 0.2,
      });
      workers.push(w);
      try {
        // A run's environment is made: the drain would wait for the run to end.
        await until("a run to start", 60_000, () =>
          w.lines.some((l) => l.query === query && String(l.text ?? "").startsWith("run started")),
        );
        w.signal("SIGTERM");
        if (how === "a second signal") {
          await until("the drain to begin", 10_000, () =>
            w.lines.some((l) => l.phase === "draining"),
          );
          w.signal("SIGTERM");
        }
        const exit = await w.exited;
        expect(exit).toEqual({ code: how === "a second signal" ? 1 : 0, signal: null });
        expect(
          w.lines.some((l) => l.phase === "forcing"),
          w.transcript(),
        ).toBe(true);
        expect(w.lines).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ event: "requeued", query, reason: "shutdown" }),
          ]),
        );
        expect(readdirSync(envDir).filter((n) => n.startsWith("warrant-env-"))).toEqual([]);
        expect(await schemas.sql(`SELECT query FROM "${schema}".warrant_leases`)).toEqual([]);
        expect((await loops(uri)).find((r) => r.query === query)?.status).toBe("queued");
      } finally {
        rmSync(envDir, { recursive: true, force: true });
      }
    });
  }
});
