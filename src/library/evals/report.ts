// An eval's report, computed from its manifest and the store alone: each cell's loop read from the
// ledger (outcome, tokens, passages, runs, wall time, cost at the pricing table's prices), each
// agent's pass rate with its Wilson interval and pass@k, each task's certification; and the paired
// comparison of two evals (or two agents of one) by task, with a seeded bootstrap interval.
import { cellAttemptQuery } from "../../core/eval/eval-set.js";
import { mean, median, pairedBootstrap, passAtK, wilsonInterval } from "../../core/eval/stats.js";
import { heldQueryId, type QueryId } from "../../core/ids.js";
import type { LoopDocument, Role } from "../../core/loop/types.js";
import { WarrantError } from "../../core/result.js";
import type { LoopView } from "../warrant-types.js";
import { type Certification, closedReasons, type EvalManifest } from "./book.js";
import { priceOf } from "./load.js";
import { type CloseReason, judgeWaiting, outcomeOfStop } from "./outcome.js";

/**
 * A cell's outcome in a report: `passed`, `failed` and `error` as the eval classifies them;
 * `pending` (its loop is open and nothing holds it: a run was interrupted, or is under way),
 * `not-run` (no loop yet: the set stopped at its limit, or it was never run), `quarantined` (its
 * task is not certified and the set requires certified tasks).
 */
export type ReportOutcome = "passed" | "failed" | "error" | "pending" | "not-run" | "quarantined";

export interface ReportCell {
  readonly task: string;
  readonly agent: string;
  readonly epoch: number;
  readonly key: string;
  readonly query: string;
  /** Loops opened for the cell (more than one when an infrastructure error stopped one). */
  readonly attempts: number;
  readonly outcome: ReportOutcome;
  /** The loop's stop reason, or what it waits on; null when there is no loop. */
  readonly stop: string | null;
  /** Why the eval closed the loop, when it did. */
  readonly closed?: CloseReason;
  /** The error an `error` cell ended with. */
  readonly error?: { readonly code: string; readonly message: string };
  readonly tokens: { readonly input: number; readonly output: number };
  readonly modelCalls: number;
  readonly passages: number;
  readonly runs: number;
  readonly wallMs: number;
  /** Null when a model the cell called has no price: unknown is never zero. */
  readonly costUsd: number | null;
}

export interface AgentSummary {
  readonly agent: string;
  readonly scored: number;
  readonly passed: number;
  readonly failed: number;
  readonly errors: number;
  /** passed / scored; null when nothing is scored. */
  readonly passRate: number | null;
  readonly ci95: readonly [number, number];
  /** By k as a string (1, and the number of epochs): the unbiased estimator, averaged over tasks. */
  readonly passAtK: Readonly<Record<string, number | null>>;
  readonly tokens: { readonly input: number; readonly output: number };
  readonly costUsd: number | null;
  readonly wallMsMedian: number | null;
}

export interface TaskSummary {
  readonly task: string;
  readonly certified: boolean;
  readonly quarantined: boolean;
  /** The latest certification's status, when the task was certified at all. */
  readonly certification?: Certification["status"];
}

export interface EvalReport {
  readonly schema: "warrant-eval-report.v1";
  readonly eval: string;
  readonly set: { readonly name: string; readonly digest: string };
  readonly epochs: number;
  /** `complete` (every cell scored), `limit` (the set stopped at its limit), `incomplete`. */
  readonly status: "complete" | "limit" | "incomplete";
  readonly limits: {
    readonly tokens?: number;
    readonly costUsd?: number;
    /** Which limit stopped the set, or null. */
    readonly reached: "tokens" | "costUsd" | null;
  };
  readonly totals: {
    readonly cells: number;
    readonly scored: number;
    readonly passed: number;
    readonly failed: number;
    readonly errors: number;
    readonly unscored: number;
    readonly tokens: { readonly input: number; readonly output: number };
    readonly costUsd: number | null;
  };
  readonly cells: readonly ReportCell[];
  readonly agents: readonly AgentSummary[];
  readonly tasks: readonly TaskSummary[];
  /** The cells left unscored by an infrastructure error, listed apart. */
  readonly errors: readonly {
    readonly task: string;
    readonly agent: string;
    readonly epoch: number;
    readonly query: string;
    readonly code: string;
    readonly message: string;
  }[];
}

export interface ReportSources {
  show(query: QueryId): Promise<LoopView | undefined>;
  readonly store: Parameters<typeof closedReasons>[0];
}

/** Elapsed time over a loop's facts (first to last). */
function wallMsOf(doc: LoopDocument): number {
  const first = doc.facts[0]?.["recorded-at"];
  const last = doc.facts.at(-1)?.["recorded-at"];
  if (first === undefined || last === undefined) return 0;
  return Math.max(0, Date.parse(last) - Date.parse(first));
}

function costOfView(
  view: LoopView,
  priced: Readonly<Partial<Record<Role, string>>>,
  manifest: EvalManifest,
): number | null {
  let total = 0;
  for (const [role, usage] of Object.entries(view.usage.byRole)) {
    if (usage === undefined || (usage.modelCalls === 0 && usage.inputTokens === 0)) continue;
    const model = priced[role as Role];
    const price = model === undefined ? undefined : priceOf(manifest.pricing, model);
    if (price === undefined) return null;
    if (price === "free") continue;
    const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
    total +=
      ((usage.inputTokens - cached) * price.inputPerMTok +
        cached * (price.cachedInputPerMTok ?? price.inputPerMTok) +
        usage.outputTokens * price.outputPerMTok) /
      1_000_000;
  }
  return total;
}

/** The latest loop of a cell (attempt 0, then each opened after an error stopped one). */
export async function latestAttempt(
  show: ReportSources["show"],
  key: string,
): Promise<{ query: string; attempts: number; view: LoopView | undefined }> {
  let view: LoopView | undefined;
  let attempts = 0;
  for (let a = 0; a < 100; a++) {
    const next = await show(heldQueryId(cellAttemptQuery(key, a)));
    if (next === undefined) break;
    view = next;
    attempts = a + 1;
  }
  return {
    query: cellAttemptQuery(key, Math.max(0, attempts - 1)),
    attempts,
    view,
  };
}

/** A cell as its loop stands in the ledger; `errors` carries what a run saw that left no loop. */
export async function reportCell(
  sources: ReportSources,
  manifest: EvalManifest,
  cell: EvalManifest["cells"][number],
  closed: ReadonlyMap<string, CloseReason>,
  quarantined: boolean,
  known?: { readonly code: string; readonly message: string },
): Promise<ReportCell> {
  const base = { task: cell.task, agent: cell.agent, epoch: cell.epoch, key: cell.key };
  const none = {
    tokens: { input: 0, output: 0 },
    modelCalls: 0,
    passages: 0,
    runs: 0,
    wallMs: 0,
    costUsd: 0,
  };
  if (quarantined)
    return { ...base, query: cell.query, attempts: 0, outcome: "quarantined", stop: null, ...none };
  const { query, attempts, view } = await latestAttempt(sources.show, cell.key);
  if (view === undefined)
    return {
      ...base,
      query,
      attempts,
      outcome: known === undefined ? "not-run" : "error",
      stop: null,
      ...(known === undefined ? {} : { error: known }),
      ...none,
    };
  const doc = view.loop;
  const why = closed.get(query);
  let outcome: ReportOutcome;
  let stop: string;
  let error: { code: string; message: string } | undefined;
  if (doc.stop !== undefined) {
    outcome = outcomeOfStop(doc.stop);
    stop =
      doc.stop.reason === "safety-refused"
        ? `safety-refused: ${doc.stop["refusal/code"]}`
        : doc.stop.reason;
    if (outcome === "error")
      error =
        doc.stop.reason === "safety-refused"
          ? { code: doc.stop["refusal/code"], message: "the host could not contain the run" }
          : { code: "eval/interrupted", message: "the host died while a step of its run ran" };
  } else {
    const judged = judgeWaiting(view.waiting);
    stop = view.waiting === undefined ? doc.state : `waiting: ${view.waiting.reason}`;
    if (judged.kind === "error") {
      outcome = "error";
      error = { code: judged.code, message: judged.message };
    } else if (judged.kind === "close") outcome = "failed";
    else if (known !== undefined) {
      outcome = "error";
      error = known;
    } else outcome = "pending";
  }
  return {
    ...base,
    query,
    attempts,
    outcome,
    stop,
    ...(why === undefined ? {} : { closed: why }),
    ...(error === undefined ? {} : { error }),
    tokens: { input: view.usage.inputTokens, output: view.usage.outputTokens },
    modelCalls: view.usage.modelCalls,
    passages: doc.spent.passages,
    runs: doc.spent.runs,
    wallMs: wallMsOf(doc),
    costUsd: costOfView(view, cell.priced, manifest),
  };
}

function sumCost(values: readonly (number | null)[]): number | null {
  let total = 0;
  for (const v of values) {
    if (v === null) return null;
    total += v;
  }
  return total;
}

/** An agent's summary over its scored cells. */
export function summarizeAgent(
  agent: string,
  cells: readonly ReportCell[],
  epochs: number,
): AgentSummary {
  const mine = cells.filter((c) => c.agent === agent && c.outcome !== "quarantined");
  const passed = mine.filter((c) => c.outcome === "passed").length;
  const failed = mine.filter((c) => c.outcome === "failed").length;
  const errors = mine.filter((c) => c.outcome === "error").length;
  const scored = passed + failed;
  const byTask = new Map<string, { n: number; c: number }>();
  for (const cell of mine) {
    if (cell.outcome !== "passed" && cell.outcome !== "failed") continue;
    const t = byTask.get(cell.task) ?? { n: 0, c: 0 };
    t.n++;
    if (cell.outcome === "passed") t.c++;
    byTask.set(cell.task, t);
  }
  const atK: Record<string, number | null> = {};
  for (const k of [...new Set([1, epochs])]) {
    const values = [...byTask.values()].filter((t) => t.n >= k).map((t) => passAtK(t.n, t.c, k));
    atK[String(k)] = values.length === 0 ? null : mean(values);
  }
  const scoredCells = mine.filter((c) => c.outcome === "passed" || c.outcome === "failed");
  return {
    agent,
    scored,
    passed,
    failed,
    errors,
    passRate: scored === 0 ? null : passed / scored,
    ci95: wilsonInterval(passed, scored),
    passAtK: atK,
    tokens: {
      input: mine.reduce((s, c) => s + c.tokens.input, 0),
      output: mine.reduce((s, c) => s + c.tokens.output, 0),
    },
    costUsd: sumCost(mine.map((c) => c.costUsd)),
    wallMsMedian: scoredCells.length === 0 ? null : median(scoredCells.map((c) => c.wallMs)),
  };
}

/** Which of the set's limits the cells' spend reached, if any. */
export function limitReached(
  limits: EvalManifest["limits"],
  tokens: number,
  costUsd: number | null,
): "tokens" | "costUsd" | null {
  if (limits.tokens !== undefined && tokens >= limits.tokens) return "tokens";
  if (limits.costUsd !== undefined && costUsd !== null && costUsd >= limits.costUsd)
    return "costUsd";
  return null;
}

/** Whether a task counts as certified for a manifest (its latest certification says so). */
export function taskSummaries(
  manifest: EvalManifest,
  certs: ReadonlyMap<string, Certification>,
): TaskSummary[] {
  return manifest.tasks.map((t) => {
    const cert =
      t.oracleDigest === undefined ? undefined : certs.get(`${t.packDigest} ${t.oracleDigest}`);
    const certified = cert?.status === "certified";
    return {
      task: t.task,
      certified,
      quarantined: manifest.requireCertified && !certified,
      ...(cert === undefined ? {} : { certification: cert.status }),
    };
  });
}

export async function buildReport(
  sources: ReportSources,
  manifest: EvalManifest,
  certs: ReadonlyMap<string, Certification>,
  known: ReadonlyMap<string, { code: string; message: string }> = new Map(),
): Promise<EvalReport> {
  const closed = await closedReasons(sources.store);
  const tasks = taskSummaries(manifest, certs);
  const quarantined = new Set(tasks.filter((t) => t.quarantined).map((t) => t.task));
  const cells: ReportCell[] = [];
  for (const cell of manifest.cells)
    cells.push(
      await reportCell(
        sources,
        manifest,
        cell,
        closed,
        quarantined.has(cell.task),
        known.get(cell.key),
      ),
    );
  const agents = manifest.agents.map((a) => summarizeAgent(a, cells, manifest.epochs));
  const counted = cells.filter((c) => c.outcome !== "quarantined");
  const passed = counted.filter((c) => c.outcome === "passed").length;
  const failed = counted.filter((c) => c.outcome === "failed").length;
  const errors = counted.filter((c) => c.outcome === "error").length;
  const input = counted.reduce((s, c) => s + c.tokens.input, 0);
  const output = counted.reduce((s, c) => s + c.tokens.output, 0);
  const costUsd = sumCost(counted.map((c) => c.costUsd));
  const reached = limitReached(manifest.limits, input + output, costUsd);
  const unscored = counted.length - passed - failed;
  const notRun = counted.some((c) => c.outcome === "not-run");
  return {
    schema: "warrant-eval-report.v1",
    eval: manifest.eval,
    set: { name: manifest.set.name, digest: manifest.set.digest },
    epochs: manifest.epochs,
    status: unscored === 0 ? "complete" : reached !== null && notRun ? "limit" : "incomplete",
    limits: { ...manifest.limits, reached },
    totals: {
      cells: cells.length,
      scored: passed + failed,
      passed,
      failed,
      errors,
      unscored,
      tokens: { input, output },
      costUsd,
    },
    cells,
    agents,
    tasks,
    errors: cells
      .filter((c) => c.outcome === "error")
      .map((c) => ({
        task: c.task,
        agent: c.agent,
        epoch: c.epoch,
        query: c.query,
        code: c.error?.code ?? "eval/error",
        message: c.error?.message ?? "",
      })),
  };
}

export interface CompareSide {
  readonly eval: string;
  readonly agent: string;
}

export interface Comparison {
  readonly schema: "warrant-eval-comparison.v1";
  readonly base: CompareSide;
  readonly head: CompareSide;
  /** Each task both sides scored: its pass fraction over its epochs on each side. */
  readonly tasks: readonly {
    readonly task: string;
    readonly base: number;
    readonly head: number;
  }[];
  /** The mean over tasks of head − base. */
  readonly delta: number;
  /** A 95% paired bootstrap interval of `delta` (seeded: the same inputs print the same numbers). */
  readonly ci95: readonly [number, number];
  /** The interval lies wholly below zero. */
  readonly regression: boolean;
}

/** The bootstrap's seed: fixed, so a comparison printed twice is the same. */
export const COMPARE_SEED = 20_240_601;

/** Each task's pass fraction over the scored epochs of one agent's cells. */
export function passFractions(report: EvalReport, agent: string): Map<string, number> {
  const by = new Map<string, { n: number; c: number }>();
  for (const cell of report.cells) {
    if (cell.agent !== agent) continue;
    if (cell.outcome !== "passed" && cell.outcome !== "failed") continue;
    const t = by.get(cell.task) ?? { n: 0, c: 0 };
    t.n++;
    if (cell.outcome === "passed") t.c++;
    by.set(cell.task, t);
  }
  return new Map([...by].map(([task, t]) => [task, t.c / t.n]));
}

/** The agent a side names, or the eval's only agent (`eval/agent-required` when it has several). */
export function sideAgent(report: EvalReport, agent: string | undefined, text: string): string {
  const names = report.agents.map((a) => a.agent);
  if (agent === undefined) {
    if (names.length === 1) return names[0] as string;
    throw new WarrantError(
      "eval/agent-required",
      `${text} has ${names.length} agents (${names.join(", ")}): name one as ${report.eval}:AGENT`,
    );
  }
  if (!names.includes(agent))
    throw new WarrantError(
      "eval/agent-unknown",
      `${report.eval} has no agent ${JSON.stringify(agent)} (it has ${names.join(", ")})`,
    );
  return agent;
}

export function compareReports(
  base: EvalReport,
  baseAgent: string,
  head: EvalReport,
  headAgent: string,
): Comparison {
  const b = passFractions(base, baseAgent);
  const h = passFractions(head, headAgent);
  const tasks = [...b.keys()]
    .filter((t) => h.has(t))
    .sort()
    .map((task) => ({ task, base: b.get(task) as number, head: h.get(task) as number }));
  const diffs = tasks.map((t) => t.head - t.base);
  const ci95 = pairedBootstrap(diffs, { seed: COMPARE_SEED });
  return {
    schema: "warrant-eval-comparison.v1",
    base: { eval: base.eval, agent: baseAgent },
    head: { eval: head.eval, agent: headAgent },
    tasks,
    delta: mean(diffs),
    ci95,
    regression: tasks.length > 0 && ci95[1] < 0,
  };
}
