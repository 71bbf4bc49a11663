// Workers over a shared store: loops are dispatched as jobs of a queue (graphile-worker over
// PostgreSQL, behind the JobQueue port); a worker drives each job's loop under the store's lease, so
// two workers never drive the same loop at once.
//
// Every worker registers itself in the store and heartbeats every third of the lease's ttl; at the
// same beat it sweeps: a loop whose lease expired while no live worker stands behind its holder (the
// worker died, or froze), or whose job a dead worker still holds, is dispatched again under its job
// key, and another worker takes it over — within about the lease's ttl, with no operator. The
// crash-safety rules do the rest (the dead attempt's environment is removed before the drive goes
// on). A worker that stops drains: it takes no more jobs, each drive ends at its next step
// boundary, its lease is released and its loop dispatched again; past the timeout the drives are
// stopped as if their leases were lost, and their loops still dispatched again.

import type { JobHandler, JobQueue, WorkerRunner } from "../core/ports/job-queue.js";
import type { LedgerStore, WorkerInfo, WorkerRegistration } from "../core/ports/ledger-store.js";
import type { Time, Timer } from "../core/ports/time.js";
import { WarrantError } from "../core/result.js";
import type { RuntimeContext } from "./context.js";
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from "./drive-defaults.js";
import type { DriveResult } from "./driver.js";
import { bindingOf, driveUnderLease, modelOverridesOf, packOf } from "./session.js";

export type WorkerEvent =
  | { readonly kind: "start"; readonly query: string; readonly holder: string }
  | { readonly kind: "end"; readonly query: string; readonly result: DriveResult }
  | { readonly kind: "busy"; readonly query: string }
  /** The loop was dispatched again: why, and (for a takeover) the holder whose lease expired. */
  | {
      readonly kind: "requeued";
      readonly query: string;
      readonly reason: "shutdown" | "expired-lease" | "orphaned-job";
      readonly holder?: string;
    }
  /** The drive's lease was lost (taken over, or its renewal failed): it stopped, wrote nothing more. */
  | { readonly kind: "lease-lost"; readonly query: string; readonly message: string }
  /** The drive failed; the queue retries the job (graphile-worker's back-off). */
  | {
      readonly kind: "failed";
      readonly query: string;
      readonly code: string;
      readonly message: string;
    }
  | {
      readonly kind: "shutdown";
      readonly query?: undefined;
      readonly phase: "draining" | "forcing" | "stopped";
      readonly timeoutMs?: number;
    };

export interface WorkerOptions {
  readonly queue: JobQueue;
  /** The shared store the jobs' loops live in. */
  readonly store: LedgerStore;
  readonly concurrency: number;
  /**
   * The context of one job's drive, for the model overrides and memory namespace its binding
   * names; `close` ends its tools.
   */
  readonly context: (
    models: Readonly<Record<string, string>>,
    namespace?: string,
  ) => Promise<RuntimeContext & { close(): Promise<void> }>;
  readonly host: string;
  readonly pid: number;
  readonly ttlMs: number;
  /** The process's time: the beat (heartbeat and sweep) and the shutdown timeout run on it. */
  readonly time: Time;
  readonly onEvent: (event: WorkerEvent) => void;
  readonly handleSignals: boolean;
}

export interface Worker extends WorkerRunner {
  /** The queue's id of this worker (graphile-worker's pool id), as `warrant workers` lists it. */
  readonly id: string;
  /**
   * Drain and stop: no more jobs; each drive ends at its next step boundary (a run in progress runs
   * to its end, a wait for an approval before a run ends at once), releases its lease and its loop
   * is dispatched again. Past `timeoutMs` the drives are stopped now (`abort`). Resolves once every
   * drive ended and the worker is deregistered.
   */
  stop(timeoutMs?: number): Promise<void>;
  /** Stop every drive now, as if its lease were lost; leases are released, loops dispatched again. */
  abort(): void;
}

export { DEFAULT_SHUTDOWN_TIMEOUT_MS };

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Whether a lease holder or a job's `locked_by` belongs to one of `workers`. */
function ownedBy(name: string, workers: readonly WorkerInfo[]): boolean {
  return workers.some((w) => name === w.id || name.startsWith(`${w.id}/`));
}

/** A worker's drive holds its lease as `<worker id>/job-<job id>`; `resume` and `run` do not. */
const WORKER_HOLDER = /\/job-[^/]+$/;

/** A worker's state, shared by its job handler, its beat and its stop. */
interface WorkerState {
  readonly o: WorkerOptions;
  /** Aborted when the worker drains: no more jobs; drives end at their next step boundary. */
  readonly drain: AbortController;
  /** Aborted when the drives are stopped now, as if their leases were lost. */
  readonly force: AbortController;
  readonly started: Date;
  /** Set once the queue says who this worker is; a job waits for the registration. */
  id: string;
  readonly registration: Promise<void>;
  readonly registered: () => void;
  /** The beat under way, if any. */
  beating: Promise<void> | undefined;
  timer: Timer | undefined;
}

/** This worker as the store's registry lists it. */
function entryOf(w: WorkerState): WorkerRegistration {
  return { id: w.id, host: w.o.host, pid: w.o.pid, started: w.started };
}

/** Dispatch a loop again, saying so; a failure is said and left to the next sweep. */
async function requeue(
  w: WorkerState,
  query: string,
  reason: "shutdown" | "expired-lease" | "orphaned-job",
  holder?: string,
): Promise<void> {
  try {
    // Ahead of loops not yet started: this one was under way.
    await w.o.queue.dispatch(query, { first: true });
    w.o.onEvent({ kind: "requeued", query, reason, ...(holder === undefined ? {} : { holder }) });
  } catch (e) {
    w.o.onEvent({ kind: "failed", query, code: "queue/requeue-failed", message: messageOf(e) });
  }
}

/** The beat: heartbeat, then sweep for loops no live worker drives. */
async function beat(w: WorkerState): Promise<void> {
  const { o } = w;
  const ttl = o.ttlMs;
  const now = o.time.now();
  if (!(await o.store.heartbeatWorker(w.id, now))) await o.store.registerWorker(entryOf(w));
  if (w.drain.signal.aborted) return;
  // A worker silent for three leases is gone from the registry (it registers again if it wakes).
  await o.store.pruneWorkers(new Date(now.getTime() - 3 * ttl));
  const live = (await o.store.listWorkers()).filter(
    (x) => x.lastHeartbeat.getTime() >= now.getTime() - ttl,
  );
  const leases = await o.store.leases();
  const jobs = await o.queue.jobs();
  const leased = new Set(leases.map((l) => l.query));
  // A loop whose job a live worker holds is being taken already.
  const taken = new Set(
    jobs.filter((j) => j.lockedBy !== undefined && ownedBy(j.lockedBy, live)).map((j) => j.query),
  );
  for (const l of leases) {
    if (l.until.getTime() >= now.getTime() || taken.has(l.query)) continue;
    if (!WORKER_HOLDER.test(l.holder) || ownedBy(l.holder, live)) continue;
    await requeue(w, l.query, "expired-lease", l.holder);
  }
  // A job held for over a lease by a worker gone silent before it leased the loop.
  for (const j of jobs) {
    if (j.lockedBy === undefined || leased.has(j.query) || ownedBy(j.lockedBy, live)) continue;
    if ((j.lockedAt?.getTime() ?? 0) >= now.getTime() - ttl) continue;
    await requeue(w, j.query, "orphaned-job", j.lockedBy);
  }
}

/** Beats every third of the lease's ttl, one beat at a time. */
function startBeat(w: WorkerState): void {
  w.timer = w.o.time.every(w.o.ttlMs / 3, () => {
    if (w.beating !== undefined) return;
    // A store that is away (restarting) is tried again at the next beat.
    w.beating = beat(w)
      .catch(() => undefined)
      .finally(() => {
        w.beating = undefined;
      });
  });
}

/** One job: its loop driven under the store's lease, with a holder of its own. */
async function runJob(
  w: WorkerState,
  { query, id: job, worker }: Parameters<JobHandler>[0],
): Promise<void> {
  const { o } = w;
  await w.registration;
  if (w.drain.signal.aborted) {
    await requeue(w, query, "shutdown");
    return;
  }
  const binding = await bindingOf(o, query);
  const ctx = await o.context(modelOverridesOf(binding), binding["memory/namespace"]);
  // One holder per job: two jobs of one worker never share a lease.
  const holder = `${worker}/job-${job}`;
  try {
    const pack = await packOf(ctx, binding);
    const result = await driveUnderLease(ctx, query, pack, {
      holder,
      ttlMs: o.ttlMs,
      // A lease a dead driver left lapses within its ttl: wait for it rather than retry later.
      waitMs: o.ttlMs + 1000,
      onLeased: () => o.onEvent({ kind: "start", query, holder }),
      stop: { drain: w.drain.signal, force: w.force.signal },
    }).finally(() => ctx.sandbox.close?.());
    if (result === "leased-elsewhere") {
      // A live driver holds the loop; it drives it on, or the sweep requeues it if it dies.
      o.onEvent({ kind: "busy", query });
      return;
    }
    o.onEvent({ kind: "end", query, result });
  } catch (e) {
    if (e instanceof WarrantError && e.code === "runtime/shutting-down") {
      await requeue(w, query, "shutdown");
      return;
    }
    if (e instanceof WarrantError && e.code === "store/lease-lost") {
      // Another worker drives the loop now: this job is done.
      o.onEvent({ kind: "lease-lost", query, message: e.message });
      return;
    }
    o.onEvent({
      kind: "failed",
      query,
      code: e instanceof WarrantError ? e.code : "runtime/failed",
      message: messageOf(e),
    });
    throw e;
  } finally {
    await ctx.close();
  }
}

export async function startWorker(o: WorkerOptions): Promise<Worker> {
  let registered: () => void = () => {};
  const registration = new Promise<void>((resolve) => {
    registered = resolve;
  });
  const w: WorkerState = {
    o,
    drain: new AbortController(),
    force: new AbortController(),
    started: o.time.now(),
    id: "",
    registration,
    registered,
    beating: undefined,
    timer: undefined,
  };
  const { drain, force } = w;
  const runner = await o.queue.start({
    concurrency: o.concurrency,
    handleSignals: o.handleSignals,
    handler: (job) => runJob(w, job),
  });

  w.id = runner.workerId;
  try {
    await o.store.registerWorker(entryOf(w));
  } catch (e) {
    // Jobs taken meanwhile go back to the queue.
    drain.abort();
    registered();
    await runner.stop();
    throw e;
  }
  registered();
  startBeat(w);

  let stopping: Promise<void> | undefined;
  let forceTimer: Timer | undefined;
  const abort = (): void => {
    if (force.signal.aborted) return;
    drain.abort();
    o.onEvent({ kind: "shutdown", phase: "forcing" });
    force.abort();
  };
  const finish = async (): Promise<void> => {
    w.timer?.cancel();
    forceTimer?.cancel();
    await w.beating;
    await o.store.deregisterWorker(w.id).catch(() => undefined);
    o.onEvent({ kind: "shutdown", phase: "stopped" });
  };
  const stop = (timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS): Promise<void> => {
    if (stopping === undefined) {
      drain.abort();
      o.onEvent({ kind: "shutdown", phase: "draining", timeoutMs });
      forceTimer = o.time.after(timeoutMs, abort);
      stopping = runner.stop().then(finish, async (e) => {
        await finish();
        throw e;
      });
    }
    return stopping;
  };
  // A runner that stops by itself (graphile-worker's own signal handling) deregisters too.
  const promise = runner.promise.then(() => stopping ?? finish());
  return { id: w.id, promise, stop, abort };
}
