// A worker's beat and shutdown timeout on a manual clock (runtime/worker.ts): it heartbeats every
// third of the lease's ttl; at each beat it dispatches again a loop whose lease expired with no
// live worker behind its holder, or whose job a silent worker still holds, and drops workers silent
// for three leases; a stop past its timeout forces the drives; nothing of it runs once stopped.
//
// The job queue here is a small one held in the test, behind the JobQueue port: the worker's
// timing is what is under test. graphile-worker itself is exercised by test/e2e/workers.test.ts
// and test/e2e/failover.test.ts.
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import type { JobQueue, QueuedJob } from "../../src/core/ports/job-queue.js";
import { startWorker, type WorkerEvent } from "../../src/runtime/worker.js";
import { type ManualClock, manualClock } from "../../src/testing.js";

const TTL = 3000;
const BEAT = TTL / 3;

interface Subject {
  readonly time: ManualClock;
  readonly store: MemoryLedgerStore;
  readonly events: WorkerEvent[];
  /** Every dispatch the worker made: query and whether ahead of the others. */
  readonly dispatched: { query: string; first: boolean }[];
  /** The jobs the queue says it holds. */
  jobs: QueuedJob[];
  /** Settles the queue runner's stop (it waits for its jobs' handlers). */
  finishJobs: () => void;
  readonly worker: Awaited<ReturnType<typeof startWorker>>;
}

async function subject(): Promise<Subject> {
  const time = manualClock();
  const store = new MemoryLedgerStore();
  const events: WorkerEvent[] = [];
  let finish: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const s = {
    time,
    store,
    events,
    dispatched: [] as { query: string; first: boolean }[],
    jobs: [] as QueuedJob[],
    finishJobs: () => finish(),
  };
  const queue: JobQueue = {
    description: "a queue held in the test",
    dispatch: async (query, options) => {
      s.dispatched.push({ query, first: options?.first === true });
    },
    jobs: async () => s.jobs,
    start: async () => ({ workerId: "worker-1", promise: stopped, stop: () => stopped }),
    close: async () => {},
  };
  const worker = await startWorker({
    queue,
    store,
    concurrency: 1,
    context: () => Promise.reject(new Error("no job runs in these tests")),
    host: "host-1",
    pid: 4242,
    ttlMs: TTL,
    time,
    onEvent: (e) => events.push(e),
    handleSignals: false,
  });
  // The queue reads the jobs the test sets on this very object.
  return Object.assign(s, { worker });
}

const heartbeatOf = async (s: Subject, id: string) =>
  (await s.store.listWorkers()).find((w) => w.id === id)?.lastHeartbeat.getTime();

describe("a worker's beat on the process's time", () => {
  it("registers at start and heartbeats every third of the lease, not before", async () => {
    const s = await subject();
    const t0 = s.time.now().getTime();
    expect(await s.store.listWorkers()).toMatchObject([
      { id: "worker-1", host: "host-1", pid: 4242, started: new Date(t0) },
    ]);
    expect(await heartbeatOf(s, "worker-1")).toBe(t0);
    await s.time.advance(BEAT - 1);
    expect(await heartbeatOf(s, "worker-1")).toBe(t0);
    await s.time.advance(1);
    expect(await heartbeatOf(s, "worker-1")).toBe(t0 + BEAT);
    await s.time.advance(2 * BEAT);
    expect(await heartbeatOf(s, "worker-1")).toBe(t0 + 3 * BEAT);
  });

  it("registers again at the next beat when it was dropped from the registry", async () => {
    const s = await subject();
    await s.store.deregisterWorker("worker-1");
    await s.time.advance(BEAT);
    expect((await s.store.listWorkers()).map((w) => [w.id, w.lastHeartbeat.getTime()])).toEqual([
      ["worker-1", s.time.now().getTime() - BEAT],
    ]);
    // Registered again as it started; the next beat records a heartbeat.
    await s.time.advance(BEAT);
    expect(await heartbeatOf(s, "worker-1")).toBe(s.time.now().getTime());
  });

  it("dispatches again, at the first beat after it expired, a loop a dead worker's drive leased", async () => {
    const s = await subject();
    await s.store.acquireLease("query:a", "dead-worker/job-7", TTL, s.time.now());
    // A `run` or `resume` (no job holder) is not a worker's to take over.
    await s.store.acquireLease("query:b", "host:99:abc", TTL, s.time.now());
    // Expired at TTL exactly; the beat at TTL still sees it live.
    await s.time.advance(TTL);
    expect(s.dispatched).toEqual([]);
    await s.time.advance(BEAT);
    expect(s.dispatched).toEqual([{ query: "query:a", first: true }]);
    expect(s.events).toContainEqual({
      kind: "requeued",
      query: "query:a",
      reason: "expired-lease",
      holder: "dead-worker/job-7",
    });
  });

  it("leaves an expired lease alone while a live worker stands behind its holder", async () => {
    const s = await subject();
    await s.store.registerWorker({ id: "other", host: "h", pid: 1, started: s.time.now() });
    await s.store.acquireLease("query:a", "other/job-1", TTL, s.time.now());
    for (let i = 0; i < 6; i++) {
      await s.store.heartbeatWorker("other", s.time.now());
      await s.time.advance(BEAT);
    }
    expect(s.dispatched).toEqual([]);
    // Once `other` falls silent for a lease, its loop is dispatched again.
    await s.time.advance(TTL + BEAT);
    expect(s.dispatched.map((d) => d.query)).toContain("query:a");
  });

  it("dispatches again a job a silent worker held for over a lease without leasing its loop", async () => {
    const s = await subject();
    s.jobs = [
      {
        query: "query:orphan",
        id: "9",
        attempts: 1,
        maxAttempts: 25,
        runAt: s.time.now(),
        lockedBy: "gone-worker",
        lockedAt: s.time.now(),
        failed: false,
      },
    ];
    await s.time.advance(TTL);
    expect(s.dispatched).toEqual([]);
    await s.time.advance(BEAT);
    expect(s.dispatched).toEqual([{ query: "query:orphan", first: true }]);
    expect(s.events).toContainEqual({
      kind: "requeued",
      query: "query:orphan",
      reason: "orphaned-job",
      holder: "gone-worker",
    });
  });

  it("drops a worker silent for three leases from the registry", async () => {
    const s = await subject();
    await s.store.registerWorker({ id: "silent", host: "h", pid: 2, started: s.time.now() });
    await s.time.advance(3 * TTL);
    expect((await s.store.listWorkers()).map((w) => w.id)).toEqual(["silent", "worker-1"]);
    await s.time.advance(BEAT);
    expect((await s.store.listWorkers()).map((w) => w.id)).toEqual(["worker-1"]);
  });

  it("forces the drives once the shutdown timeout passes, then stops beating", async () => {
    const s = await subject();
    const stopping = s.worker.stop(5000);
    expect(s.events).toContainEqual({ kind: "shutdown", phase: "draining", timeoutMs: 5000 });
    await s.time.advance(4999);
    expect(s.events.filter((e) => e.kind === "shutdown").map((e) => e.phase)).toEqual(["draining"]);
    await s.time.advance(1);
    expect(s.events.filter((e) => e.kind === "shutdown").map((e) => e.phase)).toEqual([
      "draining",
      "forcing",
    ]);
    s.finishJobs();
    await stopping;
    expect(s.events.filter((e) => e.kind === "shutdown").map((e) => e.phase)).toEqual([
      "draining",
      "forcing",
      "stopped",
    ]);
    expect(await s.store.listWorkers()).toEqual([]);
    // No beat and no timeout left behind.
    expect(s.time.pending()).toBe(0);
  });

  it("does not force a shutdown that ends before its timeout", async () => {
    const s = await subject();
    const stopping = s.worker.stop(5000);
    s.finishJobs();
    await stopping;
    expect(s.time.pending()).toBe(0);
    await s.time.advance(10_000);
    expect(s.events.filter((e) => e.kind === "shutdown").map((e) => e.phase)).toEqual([
      "draining",
      "stopped",
    ]);
  });
});
