// What an approver needs in front of them to decide, and what a stopped loop comes to, read from the
// store (and the pack file its binding names): the task statement; the output the implementer saw
// before it planned the run waiting for approval (the last failing checks of an earlier run, else
// its observations' output); the checks that will run after approval; the remaining budget and the
// deadline. For a stopped loop: the summarizer's Result and who approved or denied each step.
import { readFile } from "node:fs/promises";
import { ADMISSION_STEP, type CycleView } from "../core/loop/next-action.js";
import { project } from "../core/loop/project.js";
import { fold } from "../core/loop/state.js";
import type { LoopDocument } from "../core/loop/types.js";
import type { LedgerStore, OperatorAct } from "../core/ports/ledger-store.js";
import { digestOf } from "../core/records/canonical.js";
import { readLedger } from "../runtime/ledger-view.js";
import { operatorNameOf } from "./operators.js";

/** One piece of what the implementer saw: a failed check's detail, or an observation's output. */
export interface SeenOutput {
  readonly kind: "check" | "observation";
  /** The check's name, or the observation step's id. */
  readonly name: string;
  /** The run it came from (its proposal ref). */
  readonly run: string;
  readonly text: string;
}

/** A check of the pack's verifier, as it will run after approval. */
export interface PlannedCheck {
  readonly name: string;
  /** What it asks: `command run-tests exits 0`, `files matching … stay unchanged`, … */
  readonly description: string;
}

export interface BudgetLeft {
  /** The counter (`max/passages`, …), what was spent and its limit. */
  readonly counter: string;
  readonly spent: number;
  readonly limit: number;
  readonly left: number;
}

export interface ApprovalContext {
  readonly query: string;
  /** The run waiting (its proposal ref), when one was named or is waiting. */
  readonly run?: string;
  /** The task statement of the loop's pack; absent when the pack file cannot be read. */
  readonly task?: string;
  /** The pack file now differs from the one the loop opened with (its statement may too). */
  readonly packChanged?: boolean;
  /** Why the task and checks are unknown (the pack file cannot be read). */
  readonly packProblem?: string;
  /** What the implementer saw of earlier runs before it planned this one; empty for a first run. */
  readonly evidence: readonly SeenOutput[];
  readonly checks: readonly PlannedCheck[];
  readonly budget: readonly BudgetLeft[];
  readonly deadline: string;
  readonly state: LoopDocument["state"];
}

const COUNTERS = [
  ["max/passages", "passages"],
  ["max/solver-passages", "solver-passages"],
  ["max/reviewer-passages", "reviewer-passages"],
  ["max/cycles", "cycles"],
  ["max/experiments", "runs"],
] as const;

/** Each counter with what is left of it. */
export function budgetLeft(doc: LoopDocument): BudgetLeft[] {
  return COUNTERS.map(([counter, key]) => {
    const spent = doc.spent[key];
    const limit = doc.limits[counter];
    return { counter, spent, limit, left: Math.max(0, limit - spent) };
  });
}

function describeCheck(c: Record<string, unknown>): string {
  if (typeof c.command === "string") {
    const args =
      c.args === undefined || Object.keys(c.args as object).length === 0
        ? ""
        : ` with ${JSON.stringify(c.args)}`;
    return `command ${c.command}${args} exits 0`;
  }
  if (Array.isArray(c.unchanged))
    return `files matching ${c.unchanged.map(String).join(", ")} stay byte-identical`;
  if (c.onlyAllowedChanged === true) return "only files the patch policy allows change";
  return JSON.stringify(c);
}

interface PackText {
  readonly task?: string;
  readonly checks: readonly PlannedCheck[];
  readonly changed?: boolean;
  readonly problem?: string;
}

async function packText(file: string | undefined, digest: string | undefined): Promise<PackText> {
  if (file === undefined) return { checks: [], problem: "the loop's binding names no pack file" };
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  } catch (e) {
    return {
      checks: [],
      problem: `the pack file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? "not JSON"})`,
    };
  }
  const verifier = doc.verifier as { checks?: unknown } | undefined;
  const checks = (Array.isArray(verifier?.checks) ? verifier.checks : [])
    .filter((c): c is Record<string, unknown> => typeof c === "object" && c !== null)
    .map((c) => ({ name: String(c.name ?? "?"), description: describeCheck(c) }));
  let changed = false;
  try {
    changed = digest !== undefined && digestOf(doc) !== digest;
  } catch {
    changed = true;
  }
  return {
    ...(typeof doc.task === "string" ? { task: doc.task } : {}),
    checks,
    ...(changed ? { changed } : {}),
  };
}

/** Failed checks of a run, else the output of its observations. */
function seenIn(cycle: CycleView): SeenOutput[] {
  const report = cycle.execution?.body;
  if (report === undefined) return [];
  const run = cycle.proposalRef;
  const failed = report.checks
    .filter((c) => !c.passed)
    .map((c) => ({ kind: "check" as const, name: c.name, run, text: c.detail }));
  if (failed.length > 0) return failed;
  return report.steps
    .filter((s) => s.class === "observation" && s.excerpt !== undefined && s.excerpt !== "")
    .map((s) => ({
      kind: "observation" as const,
      name: s["step/id"],
      run,
      text: s.excerpt as string,
    }));
}

/**
 * What the approver of `run` (default: the loop's latest run) needs to decide; undefined when the
 * store holds no loop `query`.
 */
export async function approvalContext(
  store: LedgerStore,
  query: string,
  now: Date,
  run?: string,
): Promise<ApprovalContext | undefined> {
  const [stored, records, acts] = await Promise.all([
    store.readFacts(query),
    store.listRecords(query),
    store.readOperatorActs(query),
  ]);
  if (stored.length === 0) return undefined;
  const facts = stored.map((s) => s.fact);
  const doc = project(fold(facts), now);
  if (doc === undefined) return undefined;
  const view = readLedger(facts, records, acts);
  const at =
    run === undefined
      ? view.cycles.length - 1
      : view.cycles.findIndex((c) => c.proposalRef === run);
  // The runs before this one's cycle, newest first: the first with something to show.
  const before = view.cycles.slice(0, at < 0 ? view.cycles.length : at).reverse();
  const evidence = before.map(seenIn).find((s) => s.length > 0) ?? [];
  const pack = await packText(view.binding?.["task-pack/file"], view.binding?.["task-pack/digest"]);
  const waiting = at < 0 ? undefined : view.cycles[at]?.proposalRef;
  return {
    query,
    ...(waiting === undefined ? {} : { run: waiting }),
    ...(pack.task === undefined ? {} : { task: pack.task }),
    ...(pack.changed === true ? { packChanged: true } : {}),
    ...(pack.problem === undefined ? {} : { packProblem: pack.problem }),
    evidence,
    checks: pack.checks,
    budget: budgetLeft(doc),
    deadline: doc.deadline,
    state: doc.state,
  };
}

/** The summarizer's last Result. */
export interface LoopResult {
  readonly outcome: string;
  readonly summary: string;
  readonly evidence: readonly string[];
}

/** An approval or denial of a run's step, with who gave it. */
export interface StepDecision {
  readonly run: string;
  readonly step: string;
  readonly kind: "approve" | "deny";
  /** The operator's name (without `node-operator-binding:`). */
  readonly operator: string;
  readonly at: string;
  readonly text?: string;
}

export interface LoopConclusion {
  readonly result?: LoopResult;
  /** Every approval and denial of the loop's runs, in the order they were given. */
  readonly decisions: readonly StepDecision[];
}

/** The summarizer's Result (its last one) and who decided each step of the loop's runs. */
export async function loopConclusion(store: LedgerStore, query: string): Promise<LoopConclusion> {
  const [records, acts] = await Promise.all([
    store.listRecords(query),
    store.readOperatorActs(query),
  ]);
  const payload = records
    .filter((r) => r.kind === "passageEnd")
    .map((r) => r.body as { role?: unknown; message?: { type?: unknown; payload?: unknown } })
    .filter((b) => b.role === "summarizer" && b.message?.type === "Result")
    .map((b) => b.message?.payload as Record<string, unknown> | undefined)
    .at(-1);
  const result: LoopResult | undefined =
    payload === undefined
      ? undefined
      : {
          outcome: String(payload.outcome ?? ""),
          summary: String(payload.summary ?? ""),
          evidence: Array.isArray(payload.evidence) ? payload.evidence.map(String) : [],
        };
  return { ...(result === undefined ? {} : { result }), decisions: decisionsOf(acts) };
}

function decisionsOf(acts: readonly OperatorAct[]): StepDecision[] {
  return acts.flatMap((a) => {
    if (a.kind !== "approve" && a.kind !== "deny") return [];
    const cut = a.target.lastIndexOf(" ");
    return [
      {
        run: a.target.slice(0, cut),
        step: cut < 0 ? ADMISSION_STEP : a.target.slice(cut + 1),
        kind: a.kind,
        operator: operatorNameOf(a.operator),
        at: a.at,
        ...(a.text === undefined ? {} : { text: a.text }),
      },
    ];
  });
}
