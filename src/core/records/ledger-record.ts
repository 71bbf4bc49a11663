// Wrapping a built record as a LedgerRecord for the store: its ref, kind and query come from the
// record itself, so they cannot disagree with its body. (Passage transcripts are wrapped by the
// passage executor's transcriptRecord.)
import type { LedgerRecord } from "../ports/ledger-store.js";
import { WarrantError } from "../result.js";
import { EXECUTION_REF_FIELD } from "./execution.js";
import { PROPOSAL_REF_FIELD } from "./proposal.js";
import { REVIEW_REF_FIELD } from "./review.js";

export const RECORD_KINDS = {
  proposal: PROPOSAL_REF_FIELD,
  review: REVIEW_REF_FIELD,
  execution: EXECUTION_REF_FIELD,
} as const;
export type RecordKind = keyof typeof RECORD_KINDS;

export function toLedgerRecord(kind: RecordKind, record: object): LedgerRecord {
  const r = record as Readonly<Record<string, unknown>>;
  const ref = r[RECORD_KINDS[kind]];
  const query = r["query/id"];
  if (typeof ref !== "string" || typeof query !== "string") {
    throw new WarrantError("records/not-built", `a ${kind} record without its ref or query`);
  }
  return { ref, kind, query, body: record };
}
