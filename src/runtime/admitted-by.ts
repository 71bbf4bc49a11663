// What admitted a run, as its execution record names it: the review that accepted the proposal,
// the pack's admission and approval policies, and the approve acts that count for the run's steps
// (its admission included), read from the ledger after the run.

import type { CycleView } from "../core/loop/next-action.js";
import type { OperatorAct } from "../core/ports/ledger-store.js";
import type { AdmittedBy } from "../core/records/execution.js";
import { operatorActRef } from "../core/records/operator-act.js";
import type { LoadedPack } from "./task-pack.js";

export function admittedBy(
  cycle: CycleView,
  acts: readonly OperatorAct[],
  pack: LoadedPack,
): AdmittedBy {
  const review = cycle.reviews.filter((r) => r.verdict.decision === "accept").at(-1);
  const prefix = `${cycle.proposalRef} `;
  return {
    ...(review === undefined ? {} : { reviewRef: review["review/ref"] }),
    admission: pack.pack.admission,
    hil: pack.pack.hil,
    approvals: acts
      .filter((a) => a.kind === "approve" && a.target.startsWith(prefix))
      .map((a) => ({ step: a.target.slice(prefix.length), act: operatorActRef(a) })),
  };
}
