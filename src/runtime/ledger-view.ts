// A pure reading of one loop's ledger (facts, records, operator acts): which passages ended, which
// cycles were reviewed, admitted, started, concluded. What the driver does next over this view is
// the core's (src/core/loop/next-action.ts).
import { isSubAgentId } from "../core/definition/id.js";
import type {
  CycleView,
  LedgerView,
  PassageView,
  ProposalBody,
  ReviewBody,
} from "../core/loop/next-action.js";
import type { Fact } from "../core/loop/types.js";
import type { LedgerRecord, OperatorAct } from "../core/ports/ledger-store.js";
import type {
  BindingBody,
  PassageEndBody,
  RunReportBody,
  RunStartedBody,
  StepStartedBody,
} from "../core/records/run-bodies.js";

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
