// createWarrant: the one composition root. It assembles a runtime from ports (store, models, tools,
// sandbox, approver, clock, signer, telemetry), with defaults that mirror the command line, and
// answers for loops: run, resume, dispatch and work, the operator's acts, and reading the ledger.
// Each drive gets its own context (its passages' tools are closed when it ends) and its own events.

import { hostname } from "node:os";
import {
  heldQueryId,
  heldRecordRef,
  type QueryId,
  type RecordRef,
  type RunRef,
  toQueryId,
} from "../core/ids.js";
import type { LoopStateName, Stop } from "../core/loop/types.js";
import type { QueuedJob } from "../core/ports/job-queue.js";
import type { LedgerRecord, LedgerStore } from "../core/ports/ledger-store.js";
import { WarrantError } from "../core/result.js";
import type { DriveResult } from "../runtime/driver.js";
import type { WarrantEventBody } from "../runtime/events.js";
import { LoopLedger } from "../runtime/loop-ledger.js";
import type { NetworkReport } from "../runtime/records.js";
import {
  bindingOf,
  driveUnderLease,
  modelOverridesOf,
  packOf,
  startLoop,
} from "../runtime/session.js";
import type { LoadedPack } from "../runtime/task-pack.js";
import { startWorker, type Worker, type WorkerEvent } from "../runtime/worker.js";
import { type Composition, compose, type DriveSettings } from "./compose.js";
import { type DefinitionCheck, definitionCheckOf, refuseProblems } from "./definition-checks.js";
import { createEvals, type Evals } from "./evals/evals.js";
import { leaseHolder, leaseTtlMs } from "./host.js";
import { loopUsage } from "./loop-usage.js";
import {
  type ActContext,
  type ActResult,
  answerLoop,
  cancelLoop,
  decideStep,
  renewLoop,
} from "./operator-acts.js";
import { operatorBindingOf } from "./operators.js";
import type { WarrantOptions } from "./options.js";
import {
  listPending,
  loopStatus,
  type PendingApproval,
  packPolicyReader,
  type Waiting,
} from "./pending.js";
import { toolchainHoldings } from "./preflight-commands.js";
import { EventLog, type LoopOutcome, type RunHandle, startHandle } from "./run-handle.js";
import type { WarrantTelemetry } from "./telemetry.js";
import { storeViews, type WarrantViews } from "./views.js";
import type { LoopView, ResumeOptions, RunEgress, RunOptions } from "./warrant-types.js";

export type { LoopView, ResumeOptions, RunEgress, RunOptions } from "./warrant-types.js";

export interface WorkOptions {
  /** Loops driven at once. */
  readonly concurrency: number;
  /** Stop on SIGINT/SIGTERM (default false). */
  readonly handleSignals?: boolean;
  /**
   * Told when a job's drive starts, finds its loop busy, ends, fails or loses its lease, when a
   * loop is dispatched again (a takeover, a shutdown) and of each phase of the shutdown.
   */
  readonly onJob?: (event: WorkerEvent) => void;
}

/**
 * Where a loop stands for an operator: `stopped`; `driving` (a live lease); `stuck` (its lease
 * expired and the loop is not stopped: its driver died or froze; a worker takes it over);
 * `queued` (a job waits for a worker); `failed` (its job used up its attempts: `requeue` it);
 * `waiting` (no lease and no job: it waits for an operator's act, a renewal, or a resume).
 */
export type LoopStatus = "stopped" | "driving" | "stuck" | "queued" | "failed" | "waiting";

export interface LoopListing {
  /** The loop's query id, as `show()`, `resume()` and the operator's acts take it. */
  readonly query: QueryId;
  readonly state: LoopStateName;
  readonly stop?: { readonly reason: Stop["reason"] };
  /** What an open loop waits for: an approval, an answer, a budget, its deadline, a blocked passage. */
  readonly waiting?: Waiting;
  readonly status: LoopStatus;
  /** The lease's holder (`<worker id>/job-<job id>` for a worker), while a lease row stands. */
  readonly heldBy?: string;
  /** When that lease expires (or expired), ISO 8601. */
  readonly leaseUntil?: string;
}

/** A worker as the store's registry has it, with the loops it holds. */
export interface WorkerListing {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly started: string;
  readonly lastHeartbeat: string;
  readonly loops: readonly string[];
}

/** A record as `record()` hands it out: its ref and its loop's query typed as ids. */
export interface StoredRecord extends LedgerRecord {
  readonly ref: RecordRef;
  readonly query: QueryId;
}

/** The egress records of the run reports among `records`. */
function egressOf(records: readonly LedgerRecord[]): RunEgress[] {
  const out: RunEgress[] = [];
  for (const r of records) {
    if (r.kind !== "runReport") continue;
    const body = r.body as { "proposal/ref"?: unknown; network?: NetworkReport };
    if (typeof body.network !== "object" || body.network === null) continue;
    out.push({ "proposal/ref": String(body["proposal/ref"]), network: body.network });
  }
  return out;
}

/** Who an operator's act is recorded as. */
export interface ActOptions {
  /** An operator name, or `node-operator-binding:NAME`; default: the runtime's operator. */
  readonly operator?: string;
}

export interface Warrant {
  /** The ledger this runtime writes. */
  readonly store: LedgerStore;
  /**
   * What a reader shows of the store (statuses, records, the approval card's context, the verified
   * change, pending approvals, the change feed), without touching the store: the console's source.
   */
  readonly views: WarrantViews;
  /** Opens a loop for a task pack (a file, or a pack loaded with loadPack) and drives it. */
  run(pack: string | LoadedPack, options?: RunOptions): RunHandle;
  /** Drives a loop on from where its ledger stands (after a crash, a renewal, an answer). */
  resume(query: QueryId, options?: ResumeOptions): RunHandle;
  /** Opens a loop without driving it; its query id. */
  open(pack: string | LoadedPack, options?: RunOptions): Promise<QueryId>;
  /**
   * Checks the pack's agent definitions as a run would before opening its loop (providers, skill and
   * memory CIDs, declared tools, middleware, sub-agents): what each role runs on, the problems that
   * refuse the run, and the warnings.
   */
  checkDefinitions(pack: string | LoadedPack, options?: RunOptions): Promise<DefinitionCheck>;
  /** Opens a loop and hands it to the workers of the queue. */
  dispatch(pack: string | LoadedPack, options?: RunOptions): Promise<QueryId>;
  /**
   * Hands an open loop to the workers again (one whose job used up its attempts, say). Refuses a
   * loop the store does not hold (`loop/not-opened`) and a stopped one (`queue/loop-stopped`).
   */
  requeue(query: QueryId): Promise<void>;
  /** Drives dispatched loops until stopped (`stop()` drains, `abort()` stops the drives now). */
  work(options: WorkOptions): Promise<Worker>;
  /** The workers registered in the store, each with the loops it holds. */
  workers(): Promise<WorkerListing[]>;
  /** The loops' jobs in the queue (waiting, held, failed). */
  jobs(): Promise<readonly QueuedJob[]>;
  loops(): Promise<LoopListing[]>;
  /** A loop's document and its records, or undefined when the store holds no such loop. */
  show(query: QueryId): Promise<LoopView | undefined>;
  /**
   * A record of the ledger (a run's ref is its proposal's record ref), with its ref and its loop's
   * query as the ids they are.
   */
  record(ref: RecordRef | RunRef): Promise<StoredRecord | undefined>;
  /** Every approval waited for across the loops of the store. */
  pending(): Promise<PendingApproval[]>;
  /**
   * RUN: a proposal ref, or a unique prefix of at least 8 characters of its digest. Each act is
   * recorded with its operator: `options.operator` (a name, or `node-operator-binding:NAME`), else
   * the runtime's (`WarrantOptions.operator`, else `$WARRANT_OPERATOR`, else the login name); a
   * name that is not one is refused `operator/name-invalid`.
   */
  approve(run: string, step: string, options?: ActOptions): Promise<ActResult>;
  /** As approve; `reason` is recorded with the denial (the act's `text`). */
  deny(
    run: string,
    step: string,
    options?: ActOptions & { readonly reason?: string },
  ): Promise<ActResult>;
  renew(query: QueryId, deadline: Date | string, options?: ActOptions): Promise<ActResult>;
  cancel(query: QueryId, options?: ActOptions): Promise<ActResult>;
  answer(query: QueryId, text: string, options?: ActOptions): Promise<ActResult>;
  /** OpenTelemetry tracing of the drives: whether it is on, and flushing it. */
  readonly telemetry: WarrantTelemetry;
  /** Eval sets: run them, report and compare evals, certify tasks (docs/evals.md). */
  readonly evals: Evals;
  /** Flushes telemetry and closes the store when this runtime opened it. */
  close(): Promise<void>;
}

function outcomeOf(text: string, result: DriveResult | "leased-elsewhere"): LoopOutcome {
  const query = toQueryId(text);
  if (result === "leased-elsewhere") return { status: "leased-elsewhere", query };
  if (result.status === "blocked") return { ...result, query };
  const stop = result.document.stop;
  if (stop === undefined)
    throw new WarrantError("internal/unreachable", `${query} stopped without a stop`);
  return { status: "stopped", query, stop, document: result.document };
}

/** Runs that were admitted and never concluded: a stopped loop still owes them a conclusion. */
async function unconcludedRuns(store: LedgerStore, query: string): Promise<number> {
  const steps = (await store.readFacts(query)).map((s) => s.fact.step);
  const admitted = steps.filter((s) => s.kind === "run-admitted").length;
  return admitted - steps.filter((s) => s.kind === "concluded").length;
}

export async function createWarrant(options: WarrantOptions = {}): Promise<Warrant> {
  const c: Composition = await compose(options);
  const { store } = c;
  const ttlMs = options.lease?.ttlMs ?? leaseTtlMs();
  const holder = () => options.lease?.holder ?? leaseHolder();
  // Acts are signed by the host key, resolved on the first act.
  const acts = async (o?: ActOptions): Promise<ActContext> => ({
    store: await c.actingStore(),
    operator: o?.operator === undefined ? c.operator : operatorBindingOf(o.operator),
    now: () => c.clock.now(),
  });
  /** The act, or its refusal when the operator it names is not a name. */
  const act = async (
    o: ActOptions | undefined,
    f: (context: ActContext) => Promise<ActResult>,
  ): Promise<ActResult> => {
    let context: ActContext;
    try {
      context = await acts(o);
    } catch (e) {
      if (e instanceof WarrantError && e.code === "operator/name-invalid")
        return { ok: false, code: e.code, message: e.message };
      throw e;
    }
    return f(context);
  };

  const checked = async (
    loaded: LoadedPack,
    overrides: Readonly<Record<string, string>>,
    namespace?: string,
  ) => {
    const check = definitionCheckOf(await c.preflight(loaded, overrides, namespace));
    // A toolchain is bound into every environment: one holding the store or its key is refused.
    const held = await toolchainHoldings(loaded, store.uri, options.cwd);
    return held.length === 0 ? check : { ...check, problems: [...held, ...check.problems] };
  };

  const openWith = async (
    pack: string | LoadedPack,
    o: RunOptions,
    emit: (e: WarrantEventBody) => void,
  ): Promise<{ query: QueryId; pack: LoadedPack }> => {
    const loaded = await c.pack(pack);
    const { models, overrides } = c.recordedModels(loaded, o.models);
    refuseProblems(await checked(loaded, overrides));
    const ctx = await c.context(overrides, emit);
    try {
      const query = await startLoop(ctx, loaded, models, o.query, overrides, options.namespace);
      return { query: toQueryId(query), pack: loaded };
    } finally {
      await ctx.close();
    }
  };

  /** Opens a loop and drives it; `drive` sets an approver and model URIs for this drive (an eval's). */
  const runWith = (pack: string | LoadedPack, o: RunOptions, drive?: DriveSettings): RunHandle => {
    const log = new EventLog();
    const emit = c.emitter(log);
    return startHandle(log, async (opened) => {
      const loaded = await c.pack(pack);
      const { models, overrides } = c.recordedModels(loaded, o.models);
      refuseProblems(await checked(loaded, overrides));
      const ctx = await c.context(overrides, emit, undefined, drive);
      try {
        const query = await startLoop(ctx, loaded, models, o.query, overrides, options.namespace);
        opened(toQueryId(query));
        const result = await driveUnderLease(ctx, query, loaded, { holder: holder(), ttlMs });
        return outcomeOf(query, result);
      } finally {
        await ctx.close();
      }
    });
  };

  /** Drives a loop on from its ledger, with `drive`'s settings. */
  const resumeWith = (query: QueryId, o: ResumeOptions, drive?: DriveSettings): RunHandle => {
    const log = new EventLog();
    const emit = c.emitter(log);
    return startHandle(log, async (opened) => {
      const probe = await new LoopLedger(store).document(query, c.clock.now());
      if (probe === undefined)
        throw new WarrantError("loop/not-opened", `no loop ${query} in ${store.uri}`);
      opened(query);
      if (probe.state === "stopped" && (await unconcludedRuns(store, query)) === 0) {
        const stop = probe.stop;
        if (stop !== undefined) emit({ kind: "stop", query, reason: stop.reason, document: probe });
        return outcomeOf(query, { status: "stopped", document: probe });
      }
      const binding = await bindingOf(c, query);
      const overrides = modelOverridesOf(binding);
      const namespace = binding["memory/namespace"];
      const ctx = await c.context(overrides, emit, namespace, drive);
      try {
        const pack = await packOf(ctx, binding);
        // A skill or memory edited since the loop opened is refused before any further charge.
        refuseProblems(await checked(pack, overrides, namespace));
        const result = await driveUnderLease(ctx, query, pack, {
          holder: holder(),
          ttlMs,
          waitMs: o.waitMs ?? ttlMs + 1000,
        });
        return outcomeOf(query, result);
      } finally {
        await ctx.close();
      }
    });
  };

  const warrant: Warrant = {
    store,
    views: storeViews(store, c.clock),
    run: (pack, o = {}) => runWith(pack, o),
    resume: (query, o = {}) => resumeWith(query, o),
    async open(pack, o = {}) {
      return (await openWith(pack, o, c.emitter())).query;
    },
    async checkDefinitions(pack, o = {}) {
      const loaded = await c.pack(pack);
      return checked(loaded, c.recordedModels(loaded, o.models).overrides);
    },
    async dispatch(pack, o = {}) {
      const queue = c.queue();
      const { query } = await openWith(pack, o, c.emitter());
      await queue.dispatch(query);
      return query;
    },
    async requeue(query) {
      const doc = await new LoopLedger(store).document(query, c.clock.now());
      if (doc === undefined)
        throw new WarrantError("loop/not-opened", `no loop ${query} in ${store.uri}`);
      if (doc.state === "stopped")
        throw new WarrantError(
          "queue/loop-stopped",
          `${query} stopped (${doc.stop?.reason ?? "stopped"}); a stopped loop is not driven again`,
        );
      await c.queue().dispatch(query);
    },
    async work(o) {
      return startWorker({
        queue: c.queue(),
        store,
        concurrency: o.concurrency,
        host: hostname(),
        pid: process.pid,
        ttlMs,
        time: c.time,
        handleSignals: o.handleSignals ?? false,
        context: (models, namespace) => c.context(models, c.emitter(), namespace),
        onEvent: (e) => o.onJob?.(e),
      });
    },
    async workers() {
      return (await store.listWorkers()).map((w) => ({
        id: w.id,
        host: w.host,
        pid: w.pid,
        started: w.started.toISOString(),
        lastHeartbeat: w.lastHeartbeat.toISOString(),
        loops: w.loops,
      }));
    },
    jobs: () => c.queue().jobs(),
    async loops() {
      const now = c.clock.now();
      const policies = packPolicyReader();
      const leases = new Map((await store.leases()).map((l) => [l.query, l]));
      const jobs = c.hasQueue()
        ? new Map((await c.queue().jobs()).map((j) => [j.query, j]))
        : new Map<string, QueuedJob>();
      const rows: LoopListing[] = [];
      for (const l of await store.listLoops()) {
        const seen = await loopStatus(store, l.query, now, policies);
        if (seen === undefined) continue;
        const doc = seen.document;
        const lease = leases.get(l.query);
        const job = jobs.get(l.query);
        const status = statusOf(doc.state === "stopped", lease?.until, job, c.time.now());
        rows.push({
          query: heldQueryId(l.query),
          state: doc.state,
          ...(doc.stop === undefined ? {} : { stop: { reason: doc.stop.reason } }),
          status,
          ...(lease === undefined
            ? {}
            : { heldBy: lease.holder, leaseUntil: lease.until.toISOString() }),
          ...(seen.waiting === undefined ? {} : { waiting: seen.waiting }),
        });
      }
      return rows;
    },
    async show(query) {
      const loop = await new LoopLedger(store).document(query, c.clock.now());
      if (loop === undefined) return undefined;
      const stored = await store.listRecords(query);
      const records = stored.map((r) => ({ ref: heldRecordRef(r.ref), kind: r.kind }));
      const egress = egressOf(stored);
      const waiting =
        loop.state === "stopped"
          ? undefined
          : (await loopStatus(store, query, c.clock.now()))?.waiting;
      return {
        loop,
        records,
        usage: loopUsage(stored),
        ...(egress.length === 0 ? {} : { egress }),
        ...(waiting === undefined ? {} : { waiting }),
      };
    },
    async record(ref) {
      const r = await store.readRecord(ref);
      return r === undefined
        ? undefined
        : { ...r, ref: heldRecordRef(r.ref), query: heldQueryId(r.query) };
    },
    pending: () => listPending(store, c.clock.now()),
    approve: (run, step, o) => act(o, (x) => decideStep(x, run, step, "approve")),
    deny: (run, step, o) => act(o, (x) => decideStep(x, run, step, "deny", o?.reason)),
    renew: (query, deadline, o) => act(o, (x) => renewLoop(x, query, new Date(deadline))),
    cancel: (query, o) => act(o, (x) => cancelLoop(x, query)),
    answer: (query, text, o) => act(o, (x) => answerLoop(x, query, text)),
    telemetry: {
      enabled: c.telemetry.enabled,
      flush: () => c.telemetry.flush(),
      interrupted: () => c.telemetry.interrupted(),
    },
    close: () => c.close(),
    get evals() {
      evals ??= createEvals({
        warrant,
        runWith,
        resumeWith,
        sleep: c.time.sleep,
        clock: c.clock,
        context: () => c.context({}, c.emitter()),
        evalSpan: async (attributes) =>
          c.telemetry.enabled ? (await c.telemetry.start())?.evalSpan(attributes) : undefined,
        cwd: options.cwd,
      });
      return evals;
    },
  };
  let evals: Evals | undefined;
  return warrant;
}

/**
 * Who has an open loop in hand: a live lease drives it, an expired one left it stuck; without a
 * lease a job queues it (or failed, its attempts used up), and without a job it waits for an
 * operator. Leases bind processes: wall-clock time, not the loop's clock.
 */
function statusOf(
  stopped: boolean,
  leaseUntil: Date | undefined,
  job: QueuedJob | undefined,
  now: Date,
): LoopStatus {
  if (stopped) return "stopped";
  if (leaseUntil !== undefined) return leaseUntil.getTime() > now.getTime() ? "driving" : "stuck";
  if (job === undefined) return "waiting";
  return job.failed ? "failed" : "queued";
}
