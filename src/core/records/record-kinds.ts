// Every kind of record a loop's ledger holds, with how its content ref is made: the prefix, and
// whether the ref is a field of the record (the docs/spec/records.md records) or kept beside its body (the
// runtime's own records). The audit recomputes every ref from this table.
import { EXECUTION_PREFIX, EXECUTION_REF_FIELD } from "./execution.js";
import { PROPOSAL_PREFIX, PROPOSAL_REF_FIELD } from "./proposal.js";
import { REVIEW_PREFIX, REVIEW_REF_FIELD } from "./review.js";

/** The field a ref kept beside its body is computed without (a body never carries it). */
export const OUTSIDE_REF_FIELD = "ref";

export const RECORD_KIND_TABLE = {
  proposal: { prefix: PROPOSAL_PREFIX, refField: PROPOSAL_REF_FIELD },
  review: { prefix: REVIEW_PREFIX, refField: REVIEW_REF_FIELD },
  execution: { prefix: EXECUTION_PREFIX, refField: EXECUTION_REF_FIELD },
  transcript: { prefix: "passage-transcript", refField: undefined },
  binding: { prefix: "warrant-loop-binding", refField: undefined },
  passageEnd: { prefix: "warrant-passage-end", refField: undefined },
  runStarted: { prefix: "warrant-run-started", refField: undefined },
  stepStarted: { prefix: "warrant-step-started", refField: undefined },
  runReport: { prefix: "warrant-run-report", refField: undefined },
  memoryWrite: { prefix: "warrant-memory-write", refField: undefined },
  hostKey: { prefix: "warrant-host-key", refField: undefined },
  keyRotation: { prefix: "warrant-key-rotation", refField: undefined },
  head: { prefix: "warrant-chain-head", refField: undefined },
  actSignature: { prefix: "warrant-act-signature", refField: undefined },
  driveTrace: { prefix: "warrant-drive-trace", refField: undefined },
  changeset: { prefix: "warrant-changeset", refField: undefined },
} as const satisfies Record<string, { prefix: string; refField: string | undefined }>;

export type LedgerRecordKind = keyof typeof RECORD_KIND_TABLE;

export function isRecordKind(kind: string): kind is LedgerRecordKind {
  return Object.hasOwn(RECORD_KIND_TABLE, kind);
}

/** The kind whose prefix a ref carries (`<prefix>:sha256:…`), if any. */
export function kindOfRef(ref: string): LedgerRecordKind | undefined {
  const prefix = ref.slice(0, ref.indexOf(":sha256:"));
  for (const [kind, spec] of Object.entries(RECORD_KIND_TABLE)) {
    if (spec.prefix === prefix) return kind as LedgerRecordKind;
  }
  return undefined;
}
