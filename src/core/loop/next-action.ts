// What the driver does next, read from one loop's ledger alone: the view of the ledger the runtime
// folds (src/runtime/ledger-view.ts, `readLedger`) — its passages, cycles and operator acts — and
// the pure decision over it with the task pack's policies. Resume is this reading: the driver never
// keeps state the ledger does not hold.

import type { OperatorAct } from "../ports/ledger-store.js";
import type { ProposalRecord } from "../records/proposal.js";
import type { ReviewRecord } from "../records/review.js";
import type {
  BindingBody,
  PassageEndBody,
  RunReportBody,
  RunStartedBody,
  StepStartedBody,
} from "../records/run-bodies.js";
import type { VerdictPayload } from "../turn/payloads.js";
import type { Role, Step } from "./types.js";

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
