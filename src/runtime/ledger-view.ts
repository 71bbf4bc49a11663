// A pure reading of one loop's ledger (facts, records, operator acts): which passages ended, which
// cycles were reviewed, admitted, started, concluded, and so what the driver does next. Resume is
// this reading: the driver never keeps state the ledger does not hold.
import { isSubAgentId } from "../core/definition/id.js";
import type { Fact, Role, Step } from "../core/loop/types.js";
import type { LedgerRecord, OperatorAct } from "../core/ports/ledger-store.js";
import type { ProposalRecord } from "../core/records/proposal.js";
import type { ReviewRecord } from "../core/records/review.js";
import type { VerdictPayload } from "../core/turn/payloads.js";
import type {
  BindingBody,
  PassageEndBody,
  RunReportBody,
  RunStartedBody,
  StepStartedBody,
} from "./records.js";

export type ProposalBody = ProposalRecord;
export type ReviewBody = ReviewRecord & { readonly verdict: VerdictPayload };

export interface PassageView {
  readonly role: Role;
  readonly agentId: string;
  readonly ref: string;
  readonly end?: PassageEndBody;
}

export interface CycleView {
  readonly proposalRef: string;
  readonly proposal?: ProposalBody;
  readonly reviews: readonly ReviewBody[];
  readonly admitted: boolean;
  readonly runStarted?: RunStartedBody;
  readonly stepsStarted: readonly StepStartedBody[];
  /** The run's outcome once known: its execution record's ref and the report beside it. */
  readonly execution?: { readonly ref: string; readonly body: RunReportBody };
  readonly concluded?: Extract<Step, { kind: "concluded" }>;
}

export interface LedgerView {
  readonly binding?: BindingBody;
  /** The passages of the pack's agents, in charge order (sub-agents' nested ones apart). */
  readonly passages: readonly PassageView[];
  /** Sub-agents' passages, each nested in one of `passages` (their charges count all the same). */
  readonly nested: readonly PassageView[];
  readonly cycles: readonly CycleView[];
  readonly acts: readonly OperatorAct[];
  readonly cancelled: boolean;
}

export function readLedger(
  facts: readonly Fact[],
  records: readonly LedgerRecord[],
  acts: readonly OperatorAct[],
): LedgerView {
  const byKind = (kind: string) => records.filter((r) => r.kind === kind);
  const ends = new Map<string, PassageEndBody>();
  for (const r of byKind("passageEnd")) {
    const body = r.body as PassageEndBody;
    ends.set(body["passage/ref"], body);
  }
  const proposals = new Map(byKind("proposal").map((r) => [r.ref, r.body as ProposalBody]));
  const reviews = byKind("review").map((r) => r.body as ReviewBody);
  const runsStarted = byKind("runStarted").map((r) => r.body as RunStartedBody);
  const stepsStarted = byKind("stepStarted").map((r) => r.body as StepStartedBody);
  const executions = byKind("runReport").map((r) => {
    const body = r.body as RunReportBody;
    return { ref: body["execution/ref"], body };
  });
  const binding = byKind("binding")[0]?.body as BindingBody | undefined;

  const passages: PassageView[] = [];
  const nested: PassageView[] = [];
  const cycles: CycleView[] = [];
  let cancelled = false;
  for (const { step } of facts) {
    switch (step.kind) {
      case "passage-charged": {
        const end = ends.get(step["passage/ref"]);
        (isSubAgentId(step["agent/id"]) ? nested : passages).push({
          role: step.role,
          agentId: step["agent/id"],
          ref: step["passage/ref"],
          ...(end === undefined ? {} : { end }),
        });
        break;
      }
      case "cycle-opened": {
        const ref = step["proposal/ref"];
        const proposal = proposals.get(ref);
        cycles.push({
          proposalRef: ref,
          ...(proposal === undefined ? {} : { proposal }),
          reviews: reviews.filter((r) => r["proposal/ref"] === ref),
          admitted: false,
          stepsStarted: stepsStarted.filter((s) => s["proposal/ref"] === ref),
        });
        break;
      }
      case "run-admitted":
        updateCycle(cycles, step["proposal/ref"], (c) => {
          const runStarted = runsStarted.filter((r) => r["proposal/ref"] === c.proposalRef).at(-1);
          const execution = executions.find((e) => e.body["proposal/ref"] === c.proposalRef);
          return {
            ...c,
            admitted: true,
            ...(runStarted === undefined ? {} : { runStarted }),
            ...(execution === undefined ? {} : { execution }),
          };
        });
        break;
      case "concluded":
        updateCycle(cycles, step["proposal/ref"], (c) => ({ ...c, concluded: step }));
        break;
      case "cancelled":
        cancelled = true;
        break;
      case "opened":
      case "renewed":
        break;
      default:
        step satisfies never;
    }
  }
  return {
    ...(binding === undefined ? {} : { binding }),
    passages,
    nested,
    cycles,
    acts,
    cancelled,
  };
}

function updateCycle(cycles: CycleView[], ref: string, f: (c: CycleView) => CycleView): void {
  const i = cycles.findIndex((c) => c.proposalRef === ref);
  const c = cycles[i];
  if (c !== undefined) cycles[i] = f(c);
}

/** What the driver does next, read from the ledger alone. */
export type NextAction =
  | { readonly kind: "implement" }
  | { readonly kind: "review"; readonly cycle: CycleView }
  | { readonly kind: "criticize"; readonly cycle: CycleView }
  | { readonly kind: "admit"; readonly cycle: CycleView }
  | { readonly kind: "run"; readonly cycle: CycleView }
  | { readonly kind: "abandon-run"; readonly cycle: CycleView }
  | { readonly kind: "finish-run"; readonly cycle: CycleView }
  | { readonly kind: "await-answer"; readonly question: PassageView }
  | { readonly kind: "await-admission"; readonly cycle: CycleView };

/** The operator-act target that answers an approval of `step` in the run of `proposal`. */
export function approvalTarget(proposal: string, step: string): string {
  return `${proposal} ${step}`;
}

export const ADMISSION_STEP = "admission";

/** The task pack's policies the next action depends on. */
export interface Policies {
  readonly admission: "auto" | "operator";
  /** The pack names an adversarial critic: an accepted proposal is criticised before admission. */
  readonly critic: boolean;
}

export function nextAction(view: LedgerView, policies: Policies): NextAction {
  const cycle = view.cycles.at(-1);
  if (cycle !== undefined && cycle.concluded === undefined) {
    if (cycle.admitted) {
      if (cycle.execution !== undefined) return { kind: "finish-run", cycle };
      if (cycle.stepsStarted.length > 0) return { kind: "abandon-run", cycle };
      return { kind: "run", cycle };
    }
    const review = cycle.reviews.at(-1);
    if (review === undefined) return { kind: "review", cycle };
    if (review.verdict.decision === "accept" && !objected(view, cycle, policies)) {
      if (policies.critic && critique(view, cycle) === undefined)
        return { kind: "criticize", cycle };
      if (policies.admission === "auto") return { kind: "admit", cycle };
      const act = operatorDecision(view.acts, approvalTarget(cycle.proposalRef, ADMISSION_STEP));
      if (act === "approve") return { kind: "admit", cycle };
      if (act === undefined) return { kind: "await-admission", cycle };
      // A denied admission sends the proposal back like a rejection.
    }
  }
  const last = [...view.passages].reverse().find((p) => p.role === "implementer" && p.end);
  const type = last?.end?.message?.type;
  if (last !== undefined && (type === "Question" || type === "DeadEnd")) {
    const answered = view.acts.some((a) => a.kind === "answer" && a.target === last.ref);
    if (!answered) return { kind: "await-answer", question: last };
  }
  return { kind: "implement" };
}

/** The ended critic passage on a proposal, if any. */
export function critique(view: LedgerView, cycle: CycleView): PassageEndBody | undefined {
  return view.passages.find(
    (p) => p.role === "adversarial-critic" && p.end?.subject === cycle.proposalRef,
  )?.end;
}

/**
 * The critic objects with a high or critical Finding (or a DeadEnd): the proposal goes back to the
 * implementer like a rejection. A critic passage that failed raises no objection.
 */
function objected(view: LedgerView, cycle: CycleView, policies: Policies): boolean {
  if (!policies.critic) return false;
  const m = critique(view, cycle)?.message;
  if (m?.type === "DeadEnd") return true;
  return (
    m?.type === "Finding" && (m.payload.severity === "high" || m.payload.severity === "critical")
  );
}

/** The first approve or deny the operator gave for a target, if any. */
export function operatorDecision(
  acts: readonly OperatorAct[],
  target: string,
): "approve" | "deny" | undefined {
  for (const a of acts) {
    if (a.target !== target) continue;
    if (a.kind === "approve" || a.kind === "deny") return a.kind;
  }
  return undefined;
}

/** The passage of a role still charged but not ended (to redo under the same ref after a crash). */
export function unfinishedPassage(view: LedgerView, role: Role): PassageView | undefined {
  return view.passages.find((p) => p.role === role && p.end === undefined);
}
