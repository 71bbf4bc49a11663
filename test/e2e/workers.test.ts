// Two `warrant worker` processes share one PostgreSQL: dispatched loops (each queued twice, so both
// workers reach for the same loop) all run to their end, and no loop is ever driven by both at once.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { postgresJobQueue } from "../../src/postgres.js";
import { cliPath, runCli } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { waitFor } from "../helpers/wait-for.js";
import { demoPack, scripted } from "./cli-run.js";

const pg = await postgresForTests();
const LOOPS = 4;

describe.skipIf(!pg.enabled)("warrant worker over a shared PostgreSQL", () => {
  const schemas = new TestSchemas(pg.url, "workers");
  const cwd = mkdtempSync(path.join(tmpdir(), "warrant-workers-"));
  const workers: ChildProcess[] = [];
  const made: string[] = [];
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill("SIGKILL");
    for (const uri of made) {
      await schemas.sql(`DROP SCHEMA IF EXISTS "${TestSchemas.schemaOf(uri)}_jobs" CASCADE`);
    }
    await schemas.dropAll();
    rmSync(cwd, { recursive: true, force: true });
  });

  it(`drives ${LOOPS} loops to their end, each by one worker at a time`, {
    timeout: 180_000,
  }, async () => {
    const store = schemas.uri();
    made.push(store);
    const models = ["implementer", "reviewer", "summarizer"].flatMap((r) => [
      "--model",
      scripted(r),
    ]);
    const queue = postgresJobQueue(store);
    const queries: string[] = [];
    for (let i = 0; i < LOOPS; i++) {
      const r = await runCli(["run", demoPack, ...models, "--store", store, "--dispatch"], { cwd });
      expect(r.code, r.stderr).toBe(0);
      const query = (r.stdout.trim().split("\n").at(-1) ?? "").slice("query: ".length);
      queries.push(query);
      await queue.dispatch(query); // a second job for the same loop
    }

    const logs: string[] = [];
    for (let w = 0; w < 2; w++) {
      const child = spawn(process.execPath, [cliPath, "worker", "--store", store, "--yes"], {
        cwd,
        env: { ...process.env, NO_COLOR: "1" },
      });
      logs.push("");
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        logs[w] += d;
      });
      workers.push(child);
    }
    let states: { query: string; state: string; stop?: { reason: string } }[] = [];
    // Past the deadline the assertions below say which loops did not stop.
    await waitFor(
      async () => {
        states = JSON.parse((await runCli(["loops", "--json", "--store", store], { cwd })).stdout);
        return states.length === LOOPS && states.every((s) => s.state === "stopped");
      },
      { what: "every loop to stop", timeoutMs: 150_000, intervalMs: 1000 },
    ).catch(() => undefined);
    for (const w of workers) w.kill("SIGTERM");
    await Promise.all(
      workers.map((w) => new Promise((r) => (w.exitCode === null ? w.on("close", r) : r(0)))),
    );

    expect(states.map((s) => s.stop?.reason).sort()).toEqual(Array(LOOPS).fill("succeeded"));
    // Every loop's stored ledger checks, and nothing was charged twice.
    for (const q of queries) {
      const check = await runCli(["loop", "check", "--store", store, q], { cwd });
      expect(check.code, check.stdout + check.stderr).toBe(0);
      const doc = JSON.parse((await runCli(["export", q, "--store", store], { cwd })).stdout);
      expect(doc.spent).toEqual({
        passages: 7,
        "solver-passages": 3,
        "reviewer-passages": 3,
        cycles: 3,
        runs: 2,
      });
    }
    // Drive intervals per loop, from both workers' logs: none overlaps another.
    const intervals = new Map<string, { worker: number; start: number; end: number }[]>();
    logs.forEach((log, worker) => {
      const open = new Map<string, number>();
      for (const line of log.split("\n")) {
        // `<at> <short query id> drive-start|drive-end …`: the short id is the query's random tail.
        const m = /^(\S+) (\S+) drive-(start|end)/.exec(line);
        if (m === null) continue;
        const [, at, short, kind] = m as unknown as [string, string, string, string];
        const q = queries.find((x) => x.endsWith(`-${short}`)) ?? short;
        if (kind === "start") open.set(q, Date.parse(at));
        else {
          const list = intervals.get(q) ?? [];
          list.push({ worker, start: open.get(q) ?? 0, end: Date.parse(at) });
          intervals.set(q, list);
          open.delete(q);
        }
      }
    });
    expect([...intervals.keys()].sort()).toEqual([...queries].sort());
    for (const [q, list] of intervals) {
      const sorted = [...list].sort((a, b) => a.start - b.start);
      for (let i = 1; i < sorted.length; i++) {
        expect(
          (sorted[i]?.start ?? 0) >= (sorted[i - 1]?.end ?? 0),
          `${q}: ${JSON.stringify(sorted)}`,
        ).toBe(true);
      }
    }
    // Both workers took part.
    expect(logs.every((l) => l.includes("drive-start"))).toBe(true);
  });

  it("runs the demo unchanged against PostgreSQL", { timeout: 60_000 }, async () => {
    const store = schemas.uri();
    made.push(store);
    const r = await runCli(["demo", "--store", store], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const query = (r.stdout.trim().split("\n").at(-1) ?? "").slice("query: ".length);
    expect(r.stdout).toContain("loop stopped: succeeded");
    const check = await runCli(["loop", "check", "--store", store, query], { cwd });
    expect(check.code, check.stdout + check.stderr).toBe(0);
  });
});
