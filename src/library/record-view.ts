// Reading one record of the ledger by its ref, with what a reader needs beside it: for an execution,
// the run report stored with it (each step's excerpt, each check's detail) and the loop's operator
// acts (who approved or denied its steps, and why). An operator act's ref
// (`warrant-operator-act:sha256:…`) is found among the acts of the store's loops.
import type { LedgerStore, OperatorAct } from "../core/ports/ledger-store.js";
import { OPERATOR_ACT_PREFIX, operatorActRef } from "../core/records/operator-act.js";

/** The kind `record` gives an operator act (acts are not records, but have content refs). */
export const OPERATOR_ACT_KIND = "operatorAct";

export interface RecordView {
  readonly ref: string;
  readonly kind: string;
  readonly query: string;
  readonly body: unknown;
  /** For an execution: the run report beside it. */
  readonly report?: { readonly ref: string; readonly body: unknown };
  /** For an execution: the operator acts on its run's steps (approvals, denials with reasons). */
  readonly acts?: readonly OperatorAct[];
}

/** The acts that approved or denied steps of the run of `proposal`. */
export function actsOnRun(acts: readonly OperatorAct[], proposal: string): OperatorAct[] {
  return acts.filter(
    (a) => (a.kind === "approve" || a.kind === "deny") && a.target.startsWith(`${proposal} `),
  );
}

/** The run report of an execution, among a loop's records. */
export function reportOf(
  records: readonly { readonly ref: string; readonly kind: string; readonly body: unknown }[],
  executionRef: string,
): { readonly ref: string; readonly body: unknown } | undefined {
  const r = records.find(
    (x) =>
      x.kind === "runReport" &&
      (x.body as { "execution/ref"?: unknown } | null)?.["execution/ref"] === executionRef,
  );
  return r === undefined ? undefined : { ref: r.ref, body: r.body };
}

/** The record `ref` names, with its context; undefined when the store holds none. */
export async function readRecordView(
  store: LedgerStore,
  ref: string,
): Promise<RecordView | undefined> {
  if (ref.startsWith(`${OPERATOR_ACT_PREFIX}:`)) {
    for (const loop of await store.listLoops()) {
      const act = (await store.readOperatorActs(loop.query)).find((a) => operatorActRef(a) === ref);
      if (act !== undefined) return { ref, kind: OPERATOR_ACT_KIND, query: act.query, body: act };
    }
    return undefined;
  }
  const record = await store.readRecord(ref);
  if (record === undefined) return undefined;
  const view: RecordView = {
    ref: record.ref,
    kind: record.kind,
    query: record.query,
    body: record.body,
  };
  if (record.kind !== "execution") return view;
  const [records, acts] = await Promise.all([
    store.listRecords(record.query),
    store.readOperatorActs(record.query),
  ]);
  const report = reportOf(records, record.ref);
  const proposal = (record.body as { "proposal/ref"?: unknown } | null)?.["proposal/ref"];
  return {
    ...view,
    ...(report === undefined ? {} : { report }),
    acts: typeof proposal === "string" ? actsOnRun(acts, proposal) : [],
  };
}
