// Running an eval set: every cell (task × agent × epoch) one loop, opened under the query its key
// gives and driven as `warrant run` drives one (the runtime's own run and resume), so that running
// again starts nothing that has stopped and drives on what was interrupted. Each cell settles as
// passed, failed (the eval closes a loop that waits on what nobody will give it, and records why) or
// error (retried with backoff through the runtime's sleep port, unscored when the retries run out).
// The set's spend limits stop new cells from starting once reached; cells in flight finish.
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { loadPack } from "../../adapters/fs/pack-loader.js";
import { cellAttemptQuery } from "../../core/eval/eval-set.js";
import { heldQueryId, type QueryId } from "../../core/ids.js";
import type { QueuedJob } from "../../core/ports/job-queue.js";
import type { LedgerStore } from "../../core/ports/ledger-store.js";
import type { Clock } from "../../core/ports/time.js";
import { digestOfBytes } from "../../core/records/canonical.js";
import { WarrantError } from "../../core/result.js";
import type { RunEnvironments } from "../../runtime/run-environments.js";
import type { LoadedPack } from "../../runtime/task-pack.js";
import type { EvalSpan } from "../../runtime/telemetry/tracing-subscriber.js";
import type { DriveSettings } from "../compose.js";
import type { ActResult } from "../operator-acts.js";
import { EventLog, type RunHandle } from "../run-handle.js";
import type { LoopView, ResumeOptions, RunOptions } from "../warrant-types.js";
import {
  certifications,
  closedReasons,
  type EvalManifest,
  putClosed,
  putManifest,
} from "./book.js";
import type { LoadedEvalSet, PlannedCell } from "./load.js";
import { type CloseReason, judgeWaiting, outcomeOfStop } from "./outcome.js";
import {
  buildReport,
  type EvalReport,
  latestAttempt,
  limitReached,
  type ReportCell,
  reportCell,
  taskSummaries,
} from "./report.js";

export interface EvalRunOptions {
  /** Cells driven at once on this machine (default 2). */
  readonly concurrency?: number;
  /** How many times an `error` cell is tried again (default 2). */
  readonly retries?: number;
  /** The first retry's delay; each further one doubles it (default 1000 ms). */
  readonly backoffMs?: number;
  /** Queue the cells for the workers of the store's job queue instead, and wait for them. */
  readonly dispatch?: boolean;
  /** How often a dispatched cell's loop is looked at (default 250 ms). */
  readonly pollMs?: number;
}

export interface EvalProgress {
  readonly done: number;
  readonly total: number;
  readonly passed: number;
  readonly tokens: number;
  readonly costUsd: number | null;
}

interface EvalEventBase {
  readonly eval: string;
  /** RFC 3339, from the runtime's clock. */
  readonly at: string;
}

export type EvalEvent =
  | (EvalEventBase & {
      readonly kind: "eval-start";
      readonly set: { readonly name: string; readonly digest: string };
      readonly cells: number;
    })
  | (EvalEventBase & {
      readonly kind: "cell-start";
      readonly task: string;
      readonly agent: string;
      readonly epoch: number;
      readonly query: string;
      /** Whether the cell's loop was there already (driven on from its ledger). */
      readonly resumed: boolean;
    })
  | (EvalEventBase & {
      readonly kind: "cell-retry";
      readonly task: string;
      readonly agent: string;
      readonly epoch: number;
      readonly query: string;
      readonly retry: number;
      readonly delayMs: number;
      readonly code: string;
      readonly message: string;
    })
  | (EvalEventBase & {
      readonly kind: "cell-end";
      readonly cell: ReportCell;
      readonly progress: EvalProgress;
    })
  | (EvalEventBase & { readonly kind: "limit-reached"; readonly limit: "tokens" | "costUsd" })
  | (EvalEventBase & { readonly kind: "eval-end"; readonly report: EvalReport });

export interface EvalHandle extends AsyncIterable<EvalEvent> {
  /** The eval's id, once its set is loaded. */
  readonly eval: Promise<string>;
  /** The report once every cell settled (or the set stopped at its limit). */
  readonly result: Promise<EvalReport>;
}

/** What the runner needs of the runtime's façade (a `Warrant` has it). */
export interface EvalWarrant {
  readonly store: LedgerStore;
  show(query: QueryId): Promise<LoopView | undefined>;
  cancel(query: QueryId): Promise<ActResult>;
  dispatch(pack: string, options?: RunOptions): Promise<QueryId>;
  jobs(): Promise<readonly QueuedJob[]>;
  requeue(query: QueryId): Promise<void>;
}

/** What the runner needs of the runtime: its drives with an approval policy, its ports. */
export interface EvalRuntime {
  readonly warrant: EvalWarrant;
  runWith(pack: string | LoadedPack, o: RunOptions, drive?: DriveSettings): RunHandle;
  resumeWith(query: QueryId, o: ResumeOptions, drive?: DriveSettings): RunHandle;
  readonly sleep: (ms: number) => Promise<void>;
  readonly clock: Clock;
  /** The eval's `warrant.eval` span when drives are traced (each cell a span under it). */
  readonly evalSpan?: (attributes: SpanAttributes) => Promise<EvalSpan | undefined>;
  /**
   * A context over the runtime's sandbox: with it, an eval that drives its cells here pins each
   * task's baseline once, for all its cells, instead of once per cell.
   */
  readonly context?: () => Promise<{
    readonly sandbox: Pick<RunEnvironments, "hold">;
    close(): Promise<void>;
  }>;
}

/**
 * Pins every task's baseline through one context held for the eval (only when the cells are
 * driven here, on this sandbox); the returned function gives them back. A baseline that cannot be
 * pinned is left to each cell's run, which then reports why as it always did.
 */
async function holdBaselines(rt: EvalRuntime, loaded: LoadedEvalSet): Promise<() => Promise<void>> {
  if (rt.context === undefined) return async () => undefined;
  // Holding is an economy only: without a context, each cell's run pins and reports as it would.
  const ctx = await rt.context().catch(() => undefined);
  if (ctx === undefined) return async () => undefined;
  const hold = ctx.sandbox.hold;
  if (hold !== undefined)
    for (const task of loaded.tasks)
      await hold
        .call(ctx.sandbox, task.pack.baselineDir, task.pack.pack.dependencies ?? [])
        .catch(() => undefined);
  return () => ctx.close().catch(() => undefined);
}

/** Span attributes, as the tracing subscriber takes them. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

export function manifestOfSet(loaded: LoadedEvalSet): EvalManifest {
  return {
    schema: "warrant-eval-manifest.v1",
    eval: loaded.id,
    set: { name: loaded.set.name, digest: loaded.set.digest, file: loaded.file },
    epochs: loaded.set.epochs,
    limits: loaded.set.limits,
    requireCertified: loaded.set.requireCertified,
    tasks: loaded.tasks.map((t) => ({
      task: t.id,
      packDigest: t.pack.digest,
      ...(t.oracle === undefined ? {} : { oracleDigest: oracleDigestOf(t.oracle) }),
    })),
    agents: loaded.agents,
    cells: loaded.cells.map((c) => ({
      task: c.task,
      agent: c.agent,
      epoch: c.epoch,
      key: c.key,
      query: c.query,
      priced: c.config.priced,
    })),
    ...(loaded.pricing === undefined ? {} : { pricing: loaded.pricing }),
  };
}

/** The digest of an oracle diff's bytes (a certification holds for these bytes only). */
export function oracleDigestOf(file: string): string {
  return digestOfBytes(new Uint8Array(readFileSync(file)));
}

/**
 * The pack file a cell's loop opens: the task's own, or beside it a copy whose agents are the
 * configuration's (named by the configuration's digest, written once), so that a resumed loop reads
 * the same agents from the file its binding names.
 */
async function cellPackFile(loaded: LoadedEvalSet, cell: PlannedCell): Promise<string> {
  return (await cellPackSource(loaded, cell)).file;
}

/**
 * The pack a cell's loop opens: the task's own pack as the set loaded it, or the configuration's
 * copy of it (cellPackFile) to be loaded from its file.
 */
async function cellPackSource(
  loaded: LoadedEvalSet,
  cell: PlannedCell,
): Promise<{ readonly file: string; readonly pack?: LoadedPack }> {
  const task = loaded.tasks.find((t) => t.id === cell.task);
  if (task === undefined) throw new WarrantError("internal/unreachable", `no task ${cell.task}`);
  const replaced = Object.entries(cell.config.agents);
  if (replaced.length === 0) return { file: task.pack.file, pack: task.pack };
  const doc = structuredClone(task.pack.pack.document) as { agents: Record<string, string> };
  const dir = path.dirname(task.pack.file);
  for (const [role, rel] of Object.entries(doc.agents)) doc.agents[role] = path.resolve(dir, rel);
  for (const [role, agent] of replaced) if (agent !== undefined) doc.agents[role] = agent.path;
  const suffix = cell.config.digest.slice("sha256:".length, "sha256:".length + 12);
  const file = path.join(dir, `.eval-${suffix.replace(/[^A-Za-z0-9]/g, "x")}.task-pack.json`);
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  const current = await readFile(file, "utf8").catch(() => undefined);
  if (current !== text) await writeFile(file, text);
  return { file };
}

type Attempt =
  | { readonly kind: "settled" }
  | { readonly kind: "error"; readonly code: string; readonly message: string };

function errorOf(e: unknown): { code: string; message: string } {
  if (e instanceof WarrantError) return { code: e.code, message: e.message };
  return { code: "eval/drive-failed", message: e instanceof Error ? e.message : String(e) };
}

/** Why a drive or an attempt went wrong. */
type Problem = { code: string; message: string };

/** One eval being run: what its cells share. */
interface EvalRun {
  readonly rt: EvalRuntime;
  readonly loaded: LoadedEvalSet;
  readonly options: EvalRunOptions;
  readonly log: EventLog<EvalEvent>;
  readonly store: LedgerStore;
  readonly show: (query: string) => Promise<LoopView | undefined>;
  readonly retries: number;
  readonly backoffMs: number;
  readonly pollMs: number;
  readonly drive: DriveSettings;
  readonly manifest: EvalManifest;
  readonly at: () => string;
  readonly base: { readonly eval: string };
  /** Why the eval closed each loop it closed (read once from the store, then kept up here). */
  closed: Map<string, CloseReason>;
  /** The configurations' pack copies, loaded once per eval (see cellPack). */
  readonly copies: Map<string, Promise<LoadedPack | string>>;
  span: EvalSpan | undefined;
}

/** Starts an eval of a loaded set; the handle's iterators see every event from the first. */
export function startEval(
  rt: EvalRuntime,
  loaded: LoadedEvalSet,
  options: EvalRunOptions = {},
): EvalHandle {
  const concurrency = options.concurrency ?? 2;
  const retries = options.retries ?? 2;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new WarrantError("eval/concurrency", "concurrency is a positive integer");
  if (!Number.isSafeInteger(retries) || retries < 0)
    throw new WarrantError("eval/retries", "retries is an integer ≥ 0");
  const log = new EventLog<EvalEvent>();
  const r: EvalRun = {
    rt,
    loaded,
    options,
    log,
    store: rt.warrant.store,
    show: (q: string) => rt.warrant.show(heldQueryId(q)),
    retries,
    backoffMs: options.backoffMs ?? 1000,
    pollMs: options.pollMs ?? 250,
    drive: { approver: loaded.set.approval === "auto" ? "auto" : "wait", modelUris: true },
    manifest: manifestOfSet(loaded),
    at: () => rt.clock.now().toISOString(),
    base: { eval: loaded.id },
    closed: new Map(),
    copies: new Map(),
    span: undefined,
  };
  const result = runEval(r, concurrency);
  result.catch((e: unknown) => r.span?.end({}, errorOf(e).code));
  const evalId = Promise.resolve(loaded.id);
  const settled = result.then(
    (report) => {
      log.end();
      return report;
    },
    (error: unknown) => {
      log.end({ error });
      throw error;
    },
  );
  settled.catch(() => undefined);
  return {
    eval: evalId,
    result: settled,
    [Symbol.asyncIterator]: () => log[Symbol.asyncIterator](),
  };
}

/** The cells settled so far and what they spent, and the limit that stopped new cells, if any. */
interface Tally {
  /** The error each cell that settled as one ended with, by key. */
  readonly known: Map<string, Problem>;
  readonly total: number;
  done: number;
  passed: number;
  tokens: number;
  cost: number | null;
  stopped: "tokens" | "costUsd" | null;
}

/** The eval: its manifest booked, its cells settled `concurrency` at a time, its report. */
async function runEval(r: EvalRun, concurrency: number): Promise<EvalReport> {
  const { rt, loaded, log, store, manifest, base } = r;
  r.span = await rt.evalSpan?.({
    "warrant.eval.id": loaded.id,
    "warrant.eval.set": loaded.set.name,
    "warrant.eval.cells": loaded.cells.length,
  });
  await putManifest(store, manifest);
  r.closed = new Map([...(await closedReasons(store)), ...r.closed]);
  const certs = await certifications(store);
  const quarantined = new Set(
    taskSummaries(manifest, certs)
      .filter((t) => t.quarantined)
      .map((t) => t.task),
  );
  log.push({
    kind: "eval-start",
    ...base,
    at: r.at(),
    set: { name: loaded.set.name, digest: loaded.set.digest },
    cells: loaded.cells.length,
  });
  const pending = loaded.cells.filter((c) => !quarantined.has(c.task));
  const tally: Tally = {
    known: new Map(),
    total: pending.length,
    done: 0,
    passed: 0,
    tokens: 0,
    cost: 0,
    stopped: null,
  };
  const release =
    r.options.dispatch === true || pending.length === 0
      ? async () => undefined
      : await holdBaselines(rt, loaded);
  let next = 0;
  const lane = async () => {
    for (;;) {
      if (tally.stopped !== null) return;
      const cell = pending[next++];
      if (cell === undefined) return;
      await settleCell(r, tally, cell);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, pending.length) }, lane));
  } finally {
    await release();
  }
  const report = await buildReport({ show: r.show, store }, manifest, certs, tally.known);
  r.span?.end({
    "warrant.eval.status": report.status,
    "warrant.eval.passed": report.totals.passed,
  });
  log.push({ kind: "eval-end", ...base, at: r.at(), report });
  return report;
}

/** A cell tried until it settles or its retries run out, then reported and counted. */
async function settleCell(r: EvalRun, tally: Tally, cell: PlannedCell): Promise<void> {
  const { log, manifest, base } = r;
  const cellSpan = r.span?.cell(cell.query, {
    "warrant.eval.task": cell.task,
    "warrant.eval.agent": cell.agent,
    "warrant.eval.epoch": cell.epoch,
    "warrant.eval.key": cell.key,
  });
  const last = await attemptWithRetries(r, cell);
  if (last.kind === "error") tally.known.set(cell.key, { code: last.code, message: last.message });
  else tally.known.delete(cell.key);
  const row = await reportCell(
    { show: r.show, store: r.store },
    manifest,
    manifest.cells.find((c) => c.key === cell.key) as EvalManifest["cells"][number],
    r.closed,
    false,
    tally.known.get(cell.key),
  );
  cellSpan?.end(
    { "warrant.eval.outcome": row.outcome, "warrant.eval.attempts": row.attempts },
    row.outcome === "error" ? (row.error?.code ?? "eval/error") : undefined,
  );
  tally.done++;
  if (row.outcome === "passed") tally.passed++;
  tally.tokens += row.tokens.input + row.tokens.output;
  tally.cost = tally.cost === null || row.costUsd === null ? null : tally.cost + row.costUsd;
  const { done, total, passed, tokens, cost } = tally;
  log.push({
    kind: "cell-end",
    ...base,
    at: r.at(),
    cell: row,
    progress: { done, total, passed, tokens, costUsd: cost },
  });
  const reached = limitReached(manifest.limits, tokens, cost);
  if (reached !== null && tally.stopped === null) {
    tally.stopped = reached;
    log.push({ kind: "limit-reached", ...base, at: r.at(), limit: reached });
  }
}

/** A cell's attempts, an error retried with a doubling backoff: the last one. */
async function attemptWithRetries(r: EvalRun, cell: PlannedCell): Promise<Attempt> {
  let last: Attempt = { kind: "settled" };
  for (let retry = 0; ; retry++) {
    try {
      last = await attemptCell(r, cell);
    } catch (e) {
      last = { kind: "error", ...errorOf(e) };
    }
    if (last.kind === "settled" || retry >= r.retries) return last;
    const delayMs = r.backoffMs * 2 ** retry;
    r.log.push({
      kind: "cell-retry",
      ...r.base,
      at: r.at(),
      task: cell.task,
      agent: cell.agent,
      epoch: cell.epoch,
      query: cellAttemptQuery(cell.key, 0),
      retry: retry + 1,
      delayMs,
      code: last.code,
      message: last.message,
    });
    await r.rt.sleep(delayMs);
  }
}

/** Closes a loop that waits on what nobody will give it, booking why first. */
async function closeLoop(r: EvalRun, query: string, key: string, why: CloseReason): Promise<void> {
  await putClosed(r.store, { schema: "warrant-eval-cell-closed.v1", query, key, why });
  r.closed.set(query, why);
  const done = await r.rt.warrant.cancel(heldQueryId(query));
  if (!done.ok) throw new WarrantError(done.code, done.message);
}

/**
 * What a fresh cell's loop opens: the task's pack as the set loaded it, or its configuration's
 * copy, loaded once per eval (every epoch of a configuration opens the same file); a copy that
 * does not load is passed as its file, for the run to refuse as it would refuse any pack.
 */
async function cellPack(r: EvalRun, cell: PlannedCell): Promise<LoadedPack | string> {
  const source = await cellPackSource(r.loaded, cell);
  if (source.pack !== undefined) return source.pack;
  let copy = r.copies.get(source.file);
  if (copy === undefined) {
    copy = loadPack(source.file).then((loaded) => (loaded.ok ? loaded.value : source.file));
    r.copies.set(source.file, copy);
  }
  return copy;
}

/** Drives a loop until it stops or blocks (here, or by the workers with dispatch). */
async function driveLoop(
  r: EvalRun,
  cell: PlannedCell,
  query: string,
  fresh: boolean,
): Promise<Problem | undefined> {
  const { rt } = r;
  if (r.options.dispatch === true) {
    try {
      if (fresh) {
        const packFile = await cellPackFile(r.loaded, cell);
        await rt.warrant.dispatch(packFile, { query, models: cell.config.models });
      } else {
        const jobs = await rt.warrant.jobs();
        const job = jobs.find((j) => j.query === query);
        if (job === undefined || job.failed) await rt.warrant.requeue(heldQueryId(query));
      }
    } catch (e) {
      return errorOf(e);
    }
    return waitForWorkers(r, query);
  }
  const handle = fresh
    ? rt.runWith(await cellPack(r, cell), { query, models: cell.config.models }, r.drive)
    : rt.resumeWith(heldQueryId(query), {}, r.drive);
  try {
    const outcome = await handle.result;
    if (outcome.status === "leased-elsewhere")
      return { code: "eval/leased-elsewhere", message: `another driver holds ${query}` };
    return undefined;
  } catch (e) {
    return errorOf(e);
  }
}

/** With dispatch: waits until the loop stopped or waits on something, or its job failed. */
async function waitForWorkers(r: EvalRun, query: string): Promise<Problem | undefined> {
  for (;;) {
    const v = await r.show(query);
    if (v !== undefined) {
      if (v.loop.stop !== undefined) return undefined;
      if (judgeWaiting(v.waiting).kind !== "drive") return undefined;
    }
    const job = (await r.rt.warrant.jobs()).find((j) => j.query === query);
    if (job?.failed === true)
      return { code: "eval/job-failed", message: `the job of ${query} used up its attempts` };
    await r.rt.sleep(r.pollMs);
  }
}

/** One attempt at a cell: its latest loop judged, else driven (fresh or on), then judged. */
async function attemptCell(r: EvalRun, cell: PlannedCell): Promise<Attempt> {
  const latest = await latestAttempt(r.show, cell.key);
  let query = latest.query;
  let view = latest.view;
  if (view?.loop.stop !== undefined && outcomeOfStop(view.loop.stop) === "error") {
    query = cellAttemptQuery(cell.key, latest.attempts);
    view = undefined;
  }
  if (view?.loop.stop !== undefined) return { kind: "settled" };
  if (view !== undefined) {
    const judged = judgeWaiting(view.waiting);
    if (judged.kind === "close") {
      await closeLoop(r, query, cell.key, judged.why);
      return { kind: "settled" };
    }
  }
  r.log.push({
    kind: "cell-start",
    ...r.base,
    at: r.at(),
    task: cell.task,
    agent: cell.agent,
    epoch: cell.epoch,
    query,
    resumed: view !== undefined,
  });
  const thrown = await driveLoop(r, cell, query, view === undefined);
  return judgeDriven(r, cell, query, thrown);
}

/** How a cell's loop stands after a drive: settled, closed (settled), or an error. */
async function judgeDriven(
  r: EvalRun,
  cell: PlannedCell,
  query: string,
  thrown: Problem | undefined,
): Promise<Attempt> {
  const after = await r.show(query);
  if (after === undefined)
    return {
      kind: "error",
      ...(thrown ?? { code: "eval/not-opened", message: `${query} did not open` }),
    };
  if (after.loop.stop !== undefined) {
    if (outcomeOfStop(after.loop.stop) !== "error") return { kind: "settled" };
    const stop = after.loop.stop;
    return stop.reason === "safety-refused"
      ? {
          kind: "error",
          code: stop["refusal/code"],
          message: "the host could not contain the run",
        }
      : {
          kind: "error",
          code: "eval/interrupted",
          message: "the host died while a step of its run ran",
        };
  }
  const judged = judgeWaiting(after.waiting);
  if (judged.kind === "close") {
    await closeLoop(r, query, cell.key, judged.why);
    return { kind: "settled" };
  }
  if (judged.kind === "error") return { kind: "error", code: judged.code, message: judged.message };
  return {
    kind: "error",
    ...(thrown ?? { code: "eval/not-settled", message: `${query} neither stopped nor waits` }),
  };
}
