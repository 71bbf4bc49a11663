// The typed reader of record bodies: a body read from a store (or a bundle, or any file) is
// validated against its kind's schema (contracts/ledger-records.v1.json, precompiled) before
// anything reads its fields, so readers need no `body as X` cast and a damaged or foreign body is a
// refusal with a path, never a crash further on. Records may carry fields their schema does not
// name (they gain fields compatibly); a kind with no schema yet is read as an object only.
import type { Validator } from "../contracts/ajv-factory.js";
import * as generated from "../contracts/generated/records.js";
import type * as Wire from "../contracts/types/ledger-records.v1.js";
import { fail, ok, type Problem, type Result } from "../result.js";
import { describeAjvError } from "../turn/ajv-messages.js";
import type { LedgerRecordKind } from "./record-kinds.js";
import { DESCRIBED_KINDS, type DescribedKind } from "./record-schemas.js";

/** The body of each described kind, as its schema types it. */
export interface RecordBodies {
  readonly proposal: Wire.Proposal;
  readonly review: Wire.Review;
  readonly execution: Wire.Execution;
  readonly transcript: Wire.Transcript;
  readonly binding: Wire.Binding;
  readonly passageEnd: Wire.PassageEnd;
  readonly runStarted: Wire.RunStarted;
  readonly stepStarted: Wire.StepStarted;
  readonly runReport: Wire.RunReport;
  readonly hostKey: Wire.HostKey;
  readonly keyRotation: Wire.KeyRotation;
  readonly head: Wire.Head;
  readonly actSignature: Wire.ActSignature;
  readonly driveTrace: Wire.DriveTrace;
  readonly memoryWrite: Wire.MemoryWrite;
  readonly changeset: Wire.Changeset;
}

/** The body a reader gets for a kind: its schema's type, or a plain object for a kind without one. */
export type RecordBodyOf<K extends string> = K extends keyof RecordBodies
  ? RecordBodies[K]
  : Readonly<Record<string, unknown>>;

const VALIDATORS: Readonly<Record<DescribedKind, Validator>> = {
  proposal: generated.proposal,
  review: generated.review,
  execution: generated.execution,
  transcript: generated.transcript,
  binding: generated.binding,
  passageEnd: generated.passageEnd,
  runStarted: generated.runStarted,
  stepStarted: generated.stepStarted,
  runReport: generated.runReport,
  hostKey: generated.hostKey,
  keyRotation: generated.keyRotation,
  head: generated.head,
  actSignature: generated.actSignature,
  driveTrace: generated.driveTrace,
  memoryWrite: generated.memoryWrite,
  changeset: generated.changeset,
};

const described = (kind: string): kind is DescribedKind =>
  (DESCRIBED_KINDS as readonly string[]).includes(kind);

/** At most this many schema problems are reported for one body (a hostile body may break many). */
const MAX_PROBLEMS = 20;

/**
 * The body of a record of `kind`, validated: `records/body-invalid` (one problem per schema
 * violation, with its JSON Pointer) when it breaks its kind's schema or is not a JSON object.
 */
export function readRecordBody<K extends LedgerRecordKind>(
  kind: K,
  body: unknown,
): Result<RecordBodyOf<K>> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return fail([
      {
        code: "records/body-invalid",
        path: "",
        message: `a ${kind} record's body is not an object`,
      },
    ]);
  }
  if (!described(kind)) return ok(body as RecordBodyOf<K>);
  const validate = VALIDATORS[kind];
  if (validate(body)) return ok(body as RecordBodyOf<K>);
  const problems: Problem[] = (validate.errors ?? []).slice(0, MAX_PROBLEMS).map((e) => ({
    code: "records/body-invalid",
    path: e.instancePath,
    message: `a ${kind} record's body breaks its schema: ${describeAjvError(e, body)}`,
    detail: { keyword: e.keyword },
  }));
  return fail(problems);
}
