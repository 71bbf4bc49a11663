// Failover of `warrant worker` processes over one PostgreSQL store, with a 2 s lease: one worker is
// SIGKILLed mid-drive, one frozen (SIGSTOP) past its lease while the server restarts, one drained
// with SIGTERM. No operator acts, yet every loop stops; nothing is charged or run twice; the frozen
// worker's writes are refused once its loop was taken over; no environment or lease is left.
//
// The server is one of the test's own (test/store/private-postgres.ts), restarted with
// `pg_ctl stop -m fast` then `start`: restarting the server other test files share would fail them.
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { PrivatePostgres, postgresBinDir } from "../store/private-postgres.js";
import {
  assertNothingTwice,
  dispatch,
  loopStates,
  loopStory,
  registered,
  sql,
  takeoverTrial,
  until,
  WorkerProcess,
} from "./failover-harness.js";

const TTL_MS = 2000;
const LOOPS = 12;
const unavailable =
  postgresBinDir() === undefined ? "initdb and pg_ctl are not installed" : undefined;

// CI=true runs it whatever: a machine without PostgreSQL's binaries fails it there.
describe.skipIf(unavailable !== undefined && process.env.CI !== "true")(
  `workers fail over (lease ${TTL_MS} ms)${unavailable === undefined ? "" : `: ${unavailable}`}`,
  () => {
    let server: PrivatePostgres;
    const dirs: string[] = [];
    const workers: WorkerProcess[] = [];
    const mkdir = (label: string) => {
      const d = mkdtempSync(path.join(tmpdir(), `warrant-failover-${label}-`));
      // The sandbox's mapped user reads environments under it.
      chmodSync(d, 0o755);
      dirs.push(d);
      return d;
    };
    beforeAll(async () => {
      server = await PrivatePostgres.start();
    }, 120_000);
    afterAll(async () => {
      for (const w of workers) {
        w.signal("SIGCONT");
        if (w.child.exitCode === null && w.child.signalCode === null) w.signal("SIGKILL");
      }
      await server?.destroy();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it(`${LOOPS} loops (4 more queued later) over 3 workers: SIGKILL, SIGSTOP past the lease, a server restart, SIGTERM`, {
      timeout: 240_000,
    }, async () => {
      const schema = "failover";
      const store = `${server.url}?schema=${schema}`;
      const cwd = mkdir("cwd");
      const envDir = mkdir("env");
      const env = { WARRANT_LEASE_TTL_MS: String(TTL_MS), TMPDIR: envDir };
      const queries = await dispatch(store, cwd, LOOPS);
      expect(queries).toHaveLength(LOOPS);
      const spawnWorker = (name: string) => {
        const w = new WorkerProcess(name, store, { cwd, env });
        workers.push(w);
        return w;
      };
      const [w1, w2, w3] = ["w1", "w2", "w3"].map(spawnWorker) as [
        WorkerProcess,
        WorkerProcess,
        WorkerProcess,
      ];
      const others = () => workers.filter((w) => w !== w1);

      // 1. SIGKILL w1 in the middle of a drive (one that wrote a fact already).
      await until("w1 to be well into a drive", 60_000, () => w1.midDrive().length > 0);
      const heldByKilled = w1.inProgress();
      const killedAt = Date.now();
      w1.signal("SIGKILL");
      expect(heldByKilled.length).toBeGreaterThan(0);

      // 2. Freeze w2 mid-drive until the others have dropped it from the worker registry (silent
      // for three leases); the server restarts meanwhile.
      await until("w2 to be well into a drive", 60_000, () => w2.midDrive().length > 0);
      const heldByFrozen = w2.inProgress();
      const frozenAt = Date.now();
      w2.signal("SIGSTOP");
      // A stopped process runs nothing more: whatever it decided, it decided before this.
      const stoppedAt = Date.now();
      await server.restart();
      const restartedAt = Date.now();
      const w2pid = w2.child.pid as number;
      await until("w2 to be dropped from the registry", 60_000, async () => {
        return !(await registered(server.url, schema, w2pid).catch(() => true));
      });
      // Its loops are taken over while it sleeps.
      await until("w2's loops to be taken over", 60_000, () =>
        heldByFrozen.every((q) =>
          workers.some((w) => w !== w2 && w.starts().some((s) => s.query === q && s.at > frozenAt)),
        ),
      );
      const wokenAt = Date.now();
      w2.signal("SIGCONT");

      // 3. Drain w3 (SIGTERM) while it drives; a fresh worker joins to finish the work. On a fast
      // machine the first loops may all be done by now: more are queued so that w3 has a drive.
      queries.push(...(await dispatch(store, cwd, 4)));
      await until("w3 to drive", 60_000, () => w3.inProgress().length > 0);
      const heldByTerminated = w3.inProgress();
      const terminatedAt = new Date().toISOString();
      w3.signal("SIGTERM");
      spawnWorker("w4");
      const w3Exit = await w3.exited;

      // Every loop stops, with no operator.
      let states = new Map<string, { status: string; stop?: string }>();
      await until("every loop to stop", 150_000, async () => {
        states = await loopStates(store, cwd);
        return queries.every((q) => states.get(q)?.status === "stopped");
      }).catch(async (e: unknown) => {
        // Which loops did not stop, and what each worker said: what a failure here needs.
        const open = queries.filter((q) => states.get(q)?.status !== "stopped");
        const said = workers.map((w) => w.transcript()).join("\n\n");
        const stories = await Promise.all(open.map((q) => loopStory(store, cwd, q)));
        throw new Error(
          `${String(e)}\nnot stopped: ${JSON.stringify(open)}\n${stories.join("\n")}\n${said}`,
        );
      });
      for (const w of workers) if (w !== w1 && w !== w3) w.signal("SIGTERM");
      const exits = await Promise.all(
        workers.filter((w) => w !== w1 && w !== w3).map((w) => w.exited),
      );

      const transcripts = () => workers.map((w) => w.transcript()).join("\n\n");
      // The drained worker exited 0 and said so; its loops finished elsewhere.
      expect(w3Exit, transcripts()).toEqual({ code: 0, signal: null });
      expect(w3.lines.some((l) => l.event === "shutdown" && l.phase === "draining")).toBe(true);
      expect(w3.lines.some((l) => l.event === "shutdown" && l.phase === "stopped")).toBe(true);
      // Each drive it had ended at its step boundary and was queued again (or ended first).
      for (const q of heldByTerminated) {
        const after = w3.lines.filter((l) => l.query === q && l.at >= terminatedAt);
        expect(
          after.some(
            (l) => (l.event === "requeued" && l.reason === "shutdown") || l.event === "end",
          ),
          `${q}: released by w3\n${w3.transcript()}`,
        ).toBe(true);
      }
      for (const e of exits) expect(e, transcripts()).toEqual({ code: 0, signal: null });

      // The killed worker's loops were taken over by another worker.
      const takeovers = heldByKilled.map((q) => {
        const next = others()
          .flatMap((w) => w.starts())
          .filter((s) => s.query === q && s.at > killedAt)
          .sort((a, b) => a.at - b.at)[0];
        expect(next, `${q} taken over\n${transcripts()}`).toBeDefined();
        return (next?.at ?? 0) - killedAt;
      });

      // The frozen worker woke to a refusal: its lease was lost, and its abandoned drive decided
      // nothing after. A fact it reports on waking is one it appended before it was stopped (the
      // report was still to be printed). The loop's job may come back to it later: a drive it
      // starts then is a new one.
      const woke = new Date(wokenAt).toISOString();
      let reportedOnWaking = 0;
      for (const q of heldByFrozen) {
        const after = w2.lines.filter((l) => l.query === q && l.at >= woke);
        const again = after.findIndex((l) => l.event === "start");
        const abandoned = again < 0 ? after : after.slice(0, again);
        expect(
          abandoned.some((l) => JSON.stringify(l).includes("store/lease-lost")),
          `${q}: lease-lost after waking\n${w2.transcript()}`,
        ).toBe(true);
        for (const l of abandoned.filter((x) => x.event === "drive" && x.kind === "fact")) {
          reportedOnWaking++;
          const sequence = Number(/^fact (\d+) /.exec(String(l.text))?.[1]);
          const [row] = await sql<{ fact: string }>(
            server.url,
            `SELECT fact FROM "${schema}".warrant_facts WHERE query = $1 AND sequence = $2`,
            [q, sequence],
          );
          const fact = JSON.parse(row?.fact ?? "{}") as { "recorded-at"?: string };
          expect(
            Date.parse(fact["recorded-at"] ?? ""),
            `${q}: fact ${sequence}, reported after waking, decided before the stop\n${transcripts()}`,
          ).toBeLessThanOrEqual(stoppedAt);
        }
        expect(abandoned.filter((l) => l.event === "end")).toEqual([]);
      }

      // Nothing charged or run twice; every ledger checks.
      await assertNothingTwice(server.url, schema, queries);
      for (const q of queries) {
        const check = await runCli(["loop", "check", "--store", store, q], { cwd });
        expect(check.code, `${q}: ${check.stdout}${check.stderr}`).toBe(0);
      }
      // No environment directory and no lease row is left.
      expect(readdirSync(envDir).filter((n) => n.startsWith("warrant-env-"))).toEqual([]);
      expect(await sql(server.url, `SELECT query, holder FROM "${schema}".warrant_leases`)).toEqual(
        [],
      );

      process.stdout.write(
        `failover: takeover after SIGKILL ${takeovers.map((t) => `${t} ms`).join(", ")}; ` +
          `server restarted ${restartedAt - frozenAt} ms into the freeze; ` +
          `${reportedOnWaking} fact(s) reported on waking, each decided before the stop; ` +
          `stops: ${[...new Set([...states.values()].map((s) => s.stop))].join(", ")}\n`,
      );
    });

    it("a worker SIGKILLed mid-drive: its loop stops under another worker", {
      timeout: 180_000,
    }, async () => {
      const times = [];
      for (let trial = 0; trial < 2; trial++) {
        times.push(await takeoverTrial(server.url, `takeover_${trial}`, TTL_MS, mkdir, workers));
      }
      process.stdout.write(
        `takeover (lease ${TTL_MS} ms): ${times.map((t) => `taken over after ${t.takeoverMs} ms, stopped after ${t.stoppedMs} ms`).join("; ")}\n`,
      );
    });
  },
);
