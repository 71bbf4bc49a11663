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

/** Starts an eval of a loaded set; the handle's iterators see every event from the first. */
export function startEval(
  rt: EvalRuntime,
  loaded: LoadedEvalSet,
  options: EvalRunOptions = {},
): EvalHandle {
  const log = new EventLog<EvalEvent>();
  const store = rt.warrant.store;
  const show = (q: string) => rt.warrant.show(heldQueryId(q));
  const concurrency = options.concurrency ?? 2;
  const retries = options.retries ?? 2;
  const backoffMs = options.backoffMs ?? 1000;
  const pollMs = options.pollMs ?? 250;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new WarrantError("eval/concurrency", "concurrency is a positive integer");
  if (!Number.isSafeInteger(retries) || retries < 0)
    throw new WarrantError("eval/retries", "retries is an integer ≥ 0");
  const drive: DriveSettings = {
    approver: loaded.set.approval === "auto" ? "auto" : "wait",
    modelUris: true,
  };
  const manifest = manifestOfSet(loaded);
  const at = () => rt.clock.now().toISOString();
  const base = { eval: loaded.id };

  /** Why the eval closed each loop it closed (read once from the store, then kept up here). */
  let closed = new Map<string, CloseReason>();
  const close = async (query: string, key: string, why: CloseReason) => {
    await putClosed(store, { schema: "warrant-eval-cell-closed.v1", query, key, why });
    closed.set(query, why);
    const r = await rt.warrant.cancel(heldQueryId(query));
    if (!r.ok) throw new WarrantError(r.code, r.message);
  };

  /**
   * What a fresh cell's loop opens: the task's pack as the set loaded it, or its configuration's
   * copy, loaded once per eval (every epoch of a configuration opens the same file); a copy that
   * does not load is passed as its file, for the run to refuse as it would refuse any pack.
   */
  const copies = new Map<string, Promise<LoadedPack | string>>();
  const cellPack = async (cell: PlannedCell): Promise<LoadedPack | string> => {
    const source = await cellPackSource(loaded, cell);
    if (source.pack !== undefined) return source.pack;
    let copy = copies.get(source.file);
    if (copy === undefined) {
      copy = loadPack(source.file).then((r) => (r.ok ? r.value : source.file));
      copies.set(source.file, copy);
    }
    return copy;
  };

  /** Drives a loop until it stops or blocks (here, or by the workers with dispatch). */
  const driveLoop = async (
    cell: PlannedCell,
    query: string,
    fresh: boolean,
  ): Promise<{ code: string; message: string } | undefined> => {
    if (options.dispatch === true) {
      try {
        if (fresh) {
          const packFile = await cellPackFile(loaded, cell);
          await rt.warrant.dispatch(packFile, { query, models: cell.config.models });
        } else {
          const jobs = await rt.warrant.jobs();
          const job = jobs.find((j) => j.query === query);
          if (job === undefined || job.failed) await rt.warrant.requeue(heldQueryId(query));
        }
      } catch (e) {
        return errorOf(e);
      }
      return waitForWorkers(query);
    }
    const handle = fresh
      ? rt.runWith(await cellPack(cell), { query, models: cell.config.models }, drive)
      : rt.resumeWith(heldQueryId(query), {}, drive);
    try {
      const outcome = await handle.result;
      if (outcome.status === "leased-elsewhere")
        return { code: "eval/leased-elsewhere", message: `another driver holds ${query}` };
      return undefined;
    } catch (e) {
      return errorOf(e);
    }
  };

  /** With dispatch: waits until the loop stopped or waits on something, or its job failed. */
  const waitForWorkers = async (
    query: string,
  ): Promise<{ code: string; message: string } | undefined> => {
    for (;;) {
      const v = await show(query);
      if (v !== undefined) {
        if (v.loop.stop !== undefined) return undefined;
        if (judgeWaiting(v.waiting).kind !== "drive") return undefined;
      }
      const job = (await rt.warrant.jobs()).find((j) => j.query === query);
      if (job?.failed === true)
        return { code: "eval/job-failed", message: `the job of ${query} used up its attempts` };
      await rt.sleep(pollMs);
    }
  };

  const attemptCell = async (cell: PlannedCell): Promise<Attempt> => {
    const latest = await latestAttempt(show, cell.key);
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
        await close(query, cell.key, judged.why);
        return { kind: "settled" };
      }
    }
    log.push({
      kind: "cell-start",
      ...base,
      at: at(),
      task: cell.task,
      agent: cell.agent,
      epoch: cell.epoch,
      query,
      resumed: view !== undefined,
    });
    const thrown = await driveLoop(cell, query, view === undefined);
    const after = await show(query);
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
      await close(query, cell.key, judged.why);
      return { kind: "settled" };
    }
    if (judged.kind === "error")
      return { kind: "error", code: judged.code, message: judged.message };
    return {
      kind: "error",
      ...(thrown ?? { code: "eval/not-settled", message: `${query} neither stopped nor waits` }),
    };
  };

  let span: EvalSpan | undefined;
  const result = (async (): Promise<EvalReport> => {
    span = await rt.evalSpan?.({
      "warrant.eval.id": loaded.id,
      "warrant.eval.set": loaded.set.name,
      "warrant.eval.cells": loaded.cells.length,
    });
    await putManifest(store, manifest);
    closed = new Map([...(await closedReasons(store)), ...closed]);
    const certs = await certifications(store);
    const quarantined = new Set(
      taskSummaries(manifest, certs)
        .filter((t) => t.quarantined)
        .map((t) => t.task),
    );
    log.push({
      kind: "eval-start",
      ...base,
      at: at(),
      set: { name: loaded.set.name, digest: loaded.set.digest },
      cells: loaded.cells.length,
    });
    const known = new Map<string, { code: string; message: string }>();
    let done = 0;
    let passed = 0;
    let tokens = 0;
    let cost: number | null = 0;
    let stopped: "tokens" | "costUsd" | null = null;
    const pending = loaded.cells.filter((c) => !quarantined.has(c.task));
    const release =
      options.dispatch === true || pending.length === 0
        ? async () => undefined
        : await holdBaselines(rt, loaded);
    const settle = async (cell: PlannedCell) => {
      const cellSpan = span?.cell(cell.query, {
        "warrant.eval.task": cell.task,
        "warrant.eval.agent": cell.agent,
        "warrant.eval.epoch": cell.epoch,
        "warrant.eval.key": cell.key,
      });
      let last: Attempt = { kind: "settled" };
      for (let retry = 0; ; retry++) {
        try {
          last = await attemptCell(cell);
        } catch (e) {
          last = { kind: "error", ...errorOf(e) };
        }
        if (last.kind === "settled" || retry >= retries) break;
        const delayMs = backoffMs * 2 ** retry;
        log.push({
          kind: "cell-retry",
          ...base,
          at: at(),
          task: cell.task,
          agent: cell.agent,
          epoch: cell.epoch,
          query: cellAttemptQuery(cell.key, 0),
          retry: retry + 1,
          delayMs,
          code: last.code,
          message: last.message,
        });
        await rt.sleep(delayMs);
      }
      if (last.kind === "error") known.set(cell.key, { code: last.code, message: last.message });
      else known.delete(cell.key);
      const row = await reportCell(
        { show, store },
        manifest,
        manifest.cells.find((c) => c.key === cell.key) as EvalManifest["cells"][number],
        closed,
        false,
        known.get(cell.key),
      );
      cellSpan?.end(
        { "warrant.eval.outcome": row.outcome, "warrant.eval.attempts": row.attempts },
        row.outcome === "error" ? (row.error?.code ?? "eval/error") : undefined,
      );
      done++;
      if (row.outcome === "passed") passed++;
      tokens += row.tokens.input + row.tokens.output;
      cost = cost === null || row.costUsd === null ? null : cost + row.costUsd;
      log.push({
        kind: "cell-end",
        ...base,
        at: at(),
        cell: row,
        progress: { done, total: pending.length, passed, tokens, costUsd: cost },
      });
      const reached = limitReached(manifest.limits, tokens, cost);
      if (reached !== null && stopped === null) {
        stopped = reached;
        log.push({ kind: "limit-reached", ...base, at: at(), limit: reached });
      }
    };
    let next = 0;
    const lane = async () => {
      for (;;) {
        if (stopped !== null) return;
        const cell = pending[next++];
        if (cell === undefined) return;
        await settle(cell);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(concurrency, pending.length) }, lane));
    } finally {
      await release();
    }
    const report = await buildReport({ show, store }, manifest, certs, known);
    span?.end({
      "warrant.eval.status": report.status,
      "warrant.eval.passed": report.totals.passed,
    });
    log.push({ kind: "eval-end", ...base, at: at(), report });
    return report;
  })();
  result.catch((e: unknown) => span?.end({}, errorOf(e).code));
  const evalId = Promise.resolve(loaded.id);
  const settled = result.then(
    (r) => {
      log.end();
      return r;
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
