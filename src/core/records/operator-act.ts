// The content ref of an operator act (approve, deny, answer): how an execution record names the
// approvals that admitted its mutations, binding who approved what and when.
import type { OperatorAct } from "../ports/ledger-store.js";
import { digestOf } from "./canonical.js";

export const OPERATOR_ACT_PREFIX = "warrant-operator-act";

/** `warrant-operator-act:sha256:<43>` over JCS {query, kind, target, text?, operator, at}. */
export function operatorActRef(act: OperatorAct): string {
  const { query, kind, target, text, operator, at } = act;
  return `${OPERATOR_ACT_PREFIX}:${digestOf({
    query,
    kind,
    target,
    ...(text === undefined ? {} : { text }),
    operator,
    at,
  })}`;
}
