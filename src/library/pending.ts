// What loops wait for, read from the store alone (any process may be driving them): the approvals
// nobody has given yet (a mutation step of a started run under `hil: each-mutation`, or a run's
// admission under `admission: operator`), an unanswered question, a spent budget, a passed
// deadline. A drive asks for an approval only when the ledger says the next thing is that step, so
// this reading and the drive agree; an approval posted before the drive asks still counts.
import { readFile } from "node:fs/promises";
import {
  heldQueryId,
  heldRecordRef,
  heldRunRef,
  type QueryId,
  type RecordRef,
  type RunRef,
} from "../core/ids.js";
import {
  ADMISSION_STEP,
  approvalTarget,
  type CycleView,
  type LedgerView,
  nextAction,
  operatorDecision,
  type Policies,
} from "../core/loop/next-action.js";
import { project } from "../core/loop/project.js";
import { fold } from "../core/loop/state.js";
import type { Fact, LimitKey, LoopDocument, Role } from "../core/loop/types.js";
import type { LedgerStore, OperatorAct } from "../core/ports/ledger-store.js";
import { readLedger } from "../runtime/ledger-view.js";

export interface PendingApproval {
  /** The loop's query id, as `show()` and the operator's acts take it. */
  readonly query: QueryId;
  /** The run's proposal ref: what `approve(RUN, STEP)` and `warrant approve RUN STEP` take. */
  readonly run: RunRef;
  /** A step id of the run's plan, or `admission`. */
  readonly step: string;
  readonly kind: "mutation" | "admission";
  /** The proposal record (the plan) the run carries out, as `record()` takes it: the same ref as `run`. */
  readonly proposal: RecordRef;
  /** The plan's hypothesis. */
  readonly hypothesis?: string;
  /** The file a patch step writes. */
  readonly path?: string;
  /** One line: what approving lets happen. */
  readonly summary: string;
  /** When the loop reached the approval, as near as the ledger says (ISO time). */
  readonly waitingSince: string;
}

export type Waiting =
  | ({ readonly reason: "approval" } & Pick<PendingApproval, "run" | "step" | "kind">)
  | { readonly reason: "answer"; readonly question: string }
  | { readonly reason: "budget"; readonly counter: LimitKey }
  | { readonly reason: "deadline"; readonly deadline: string }
  | {
      /**
       * The last passage failed and the drive blocked: its model could not answer (`model`), its
       * tools could not be had (`tool`), or its agent definition no longer checks (`definition`).
       * Fix that, then resume.
       */
      readonly reason: "model" | "tool" | "definition";
      readonly role: Role;
      readonly code: string;
      readonly message: string;
    };

export interface LoopStatus {
  readonly document: LoopDocument;
  /** The name of the loop's task pack, where its file can still be read. */
  readonly task?: string;
  readonly pending: readonly PendingApproval[];
  readonly waiting?: Waiting;
}

/** The policies the pack of a loop's binding sets; read from the pack file as it is now. */
export type PolicyReader = (packFile: string | undefined) => Promise<PackPolicies>;

export interface PackPolicies extends Policies {
  readonly hil: "each-mutation" | "none";
  readonly name?: string;
}

/**
 * Reads the pack file's `hil`, `admission` and critic (once per file per reader). A pack that can
 * no longer be read is taken as asking approval of each mutation and admitting on its own.
 */
export function packPolicyReader(): PolicyReader {
  const cache = new Map<string, Promise<PackPolicies>>();
  const fallback: PackPolicies = { hil: "each-mutation", admission: "auto", critic: false };
  return (file) => {
    if (file === undefined) return Promise.resolve(fallback);
    let p = cache.get(file);
    if (p === undefined) {
      p = readFile(file, "utf8").then(
        (text) => {
          const pack = JSON.parse(text) as {
            name?: unknown;
            hil?: unknown;
            admission?: unknown;
            agents?: Record<string, unknown>;
          };
          return {
            hil: pack.hil === "none" ? "none" : "each-mutation",
            admission: pack.admission === "operator" ? "operator" : "auto",
            critic: pack.agents?.["adversarial-critic"] !== undefined,
            ...(typeof pack.name === "string" ? { name: pack.name } : {}),
          };
        },
        () => fallback,
      );
      cache.set(file, p);
    }
    return p;
  };
}

interface RawStep {
  readonly id?: unknown;
  readonly action?: unknown;
  readonly path?: unknown;
  readonly profile?: unknown;
  readonly diff?: unknown;
  readonly content?: unknown;
}

function planOf(cycle: CycleView): { hypothesis?: string; steps: readonly RawStep[] } {
  const c = cycle.proposal?.candidate as { hypothesis?: unknown; steps?: unknown } | undefined;
  const steps = Array.isArray(c?.steps) ? (c.steps as RawStep[]) : [];
  return typeof c?.hypothesis === "string" ? { hypothesis: c.hypothesis, steps } : { steps };
}

function describe(step: RawStep): string {
  if (step.action === "patch") {
    const path = typeof step.path === "string" ? step.path : "?";
    return typeof step.diff === "string"
      ? `patch ${path}`
      : `write ${path} (${new TextEncoder().encode(String(step.content ?? "")).length} bytes)`;
  }
  return `command ${typeof step.profile === "string" ? step.profile : "?"}`;
}

function latest(times: readonly (string | undefined)[]): string {
  return (
    times
      .filter((t): t is string => t !== undefined)
      .sort()
      .at(-1) ?? ""
  );
}

/** The approval a loop's ledger says its drive waits for, if any (at most one per loop). */
function pendingOf(
  query: string,
  facts: readonly Fact[],
  view: LedgerView,
  policies: PackPolicies,
  acts: readonly OperatorAct[],
): PendingApproval | undefined {
  const next = nextAction(view, policies);
  const lastFactAt = facts.at(-1)?.["recorded-at"];
  if (next.kind === "await-admission") {
    const plan = planOf(next.cycle);
    return {
      query: heldQueryId(query),
      run: heldRunRef(next.cycle.proposalRef),
      step: ADMISSION_STEP,
      kind: "admission",
      proposal: heldRecordRef(next.cycle.proposalRef),
      ...(plan.hypothesis === undefined ? {} : { hypothesis: plan.hypothesis }),
      summary: `admit the run of ${next.cycle.proposalRef} (${plan.steps.length} steps)`,
      waitingSince: lastFactAt ?? "",
    };
  }
  // A run under way reads as `abandon-run` once a step started (what a resume after a crash does):
  // a live drive is still stepping through it.
  if ((next.kind !== "run" && next.kind !== "abandon-run") || policies.hil !== "each-mutation")
    return undefined;
  const cycle = next.cycle;
  // The run asks before each mutation, after its environment is made (its runStarted record), and
  // starts its steps in plan order, each journaled before it runs.
  if (cycle.runStarted === undefined) return undefined;
  const plan = planOf(cycle);
  const step = plan.steps[cycle.stepsStarted.length];
  if (step === undefined || step.action === "observe" || typeof step.id !== "string")
    return undefined;
  if (operatorDecision(acts, approvalTarget(cycle.proposalRef, step.id)) !== undefined)
    return undefined;
  return {
    query: heldQueryId(query),
    run: heldRunRef(cycle.proposalRef),
    step: step.id,
    kind: "mutation",
    proposal: heldRecordRef(cycle.proposalRef),
    ...(plan.hypothesis === undefined ? {} : { hypothesis: plan.hypothesis }),
    ...(typeof step.path === "string" ? { path: step.path } : {}),
    summary: describe(step),
    waitingSince: latest([
      cycle.runStarted["started-at"],
      ...cycle.stepsStarted.map((s) => s["started-at"]),
    ]),
  };
}

const PASSAGE_COUNTERS = {
  implementer: ["max/passages", "max/solver-passages"],
  reviewer: ["max/passages", "max/reviewer-passages"],
} as const satisfies Record<string, readonly LimitKey[]>;

/** The counter the loop's next charge needs that is already spent, if any. */
function spentCounter(
  doc: LoopDocument,
  next: ReturnType<typeof nextAction>,
): LimitKey | undefined {
  const used: Record<LimitKey, number> = {
    "max/passages": doc.spent.passages,
    "max/solver-passages": doc.spent["solver-passages"],
    "max/reviewer-passages": doc.spent["reviewer-passages"],
    "max/cycles": doc.spent.cycles,
    "max/experiments": doc.spent.runs,
    "max/wall-time-ms": 0,
  };
  const needs: readonly LimitKey[] =
    next.kind === "implement"
      ? [...PASSAGE_COUNTERS.implementer, "max/cycles"]
      : next.kind === "review" || next.kind === "criticize"
        ? PASSAGE_COUNTERS.reviewer
        : next.kind === "admit"
          ? ["max/experiments"]
          : [];
  return needs.find((k) => used[k] >= doc.limits[k]);
}

const BLOCKING = ["model", "tool", "definition"] as const;

/**
 * What the loop waits on when its last passage failed in a way that blocks the drive (a `model/`,
 * `tool/` or `definition/` code: the next passage would fail alike until someone fixes it).
 */
function blockedPassage(view: LedgerView): Waiting | undefined {
  const last = view.passages.at(-1);
  const failure = last?.end?.failure;
  if (last === undefined || failure === undefined) return undefined;
  const reason = BLOCKING.find((r) => failure.code.startsWith(`${r}/`));
  return reason === undefined
    ? undefined
    : { reason, role: last.role, code: failure.code, message: failure.message };
}

/** A loop's document, the approval it waits for, and what it waits on (none once stopped). */
export async function loopStatus(
  store: LedgerStore,
  query: string,
  now: Date,
  policiesOf: PolicyReader = packPolicyReader(),
): Promise<LoopStatus | undefined> {
  const [stored, records, acts] = await Promise.all([
    store.readFacts(query),
    store.listRecords(query),
    store.readOperatorActs(query),
  ]);
  if (stored.length === 0) return undefined;
  // The facts just read are the loop's whole history: its document is their fold, projected.
  const facts = stored.map((s) => s.fact);
  const document = project(fold(facts), now);
  if (document === undefined) return undefined;
  const view = readLedger(facts, records, acts);
  const policies = await policiesOf(view.binding?.["task-pack/file"]);
  const base = { document, ...(policies.name === undefined ? {} : { task: policies.name }) };
  if (document.stop !== undefined) return { ...base, pending: [] };
  const pending = pendingOf(query, facts, view, policies, acts);
  const list = pending === undefined ? [] : [pending];
  const status = (waiting?: Waiting): LoopStatus => ({
    ...base,
    pending: list,
    ...(waiting === undefined ? {} : { waiting }),
  });
  if (document.state === "deadline-passed")
    return status({ reason: "deadline", deadline: document.deadline });
  if (pending !== undefined) {
    const { run, step, kind } = pending;
    return status({ reason: "approval", run, step, kind });
  }
  const next = nextAction(view, policies);
  if (next.kind === "await-answer")
    return status({ reason: "answer", question: next.question.ref });
  const blocked = blockedPassage(view);
  if (blocked !== undefined) return status(blocked);
  const counter = spentCounter(document, next);
  return status(counter === undefined ? undefined : { reason: "budget", counter });
}

/** Every approval waited for across the loops of the store, oldest wait first. */
export async function listPending(
  store: LedgerStore,
  now: Date = new Date(),
): Promise<PendingApproval[]> {
  const policies = packPolicyReader();
  const all: PendingApproval[] = [];
  for (const l of await store.listLoops()) {
    const status = await loopStatus(store, l.query, now, policies);
    if (status !== undefined) all.push(...status.pending);
  }
  return all.sort((a, b) => a.waitingSince.localeCompare(b.waitingSince));
}
