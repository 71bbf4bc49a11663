// The records the runtime writes beside the facts: the loop's binding to its task pack, the end of
// each passage, the proposal / review / execution records, and the run journal (run and step
// started) that makes resume after a crash exact. Every one is content-addressed.
import type { LedgerRecord } from "../core/ports/ledger-store.js";
import type { RecordSigner } from "../core/ports/signer.js";
import { contentRef, digestOfBytes } from "../core/records/canonical.js";
import { type AdmittedBy, buildExecution } from "../core/records/execution.js";
import { toLedgerRecord } from "../core/records/ledger-record.js";
import { RECORD_KIND_TABLE } from "../core/records/record-kinds.js";
import type { RunReportBody } from "../core/records/run-bodies.js";
import { publicKeyOf, signRecord } from "../core/records/signature.js";

export const RECORD_PREFIX = {
  binding: RECORD_KIND_TABLE.binding.prefix,
  passageEnd: RECORD_KIND_TABLE.passageEnd.prefix,
  runStarted: RECORD_KIND_TABLE.runStarted.prefix,
  stepStarted: RECORD_KIND_TABLE.stepStarted.prefix,
  runReport: RECORD_KIND_TABLE.runReport.prefix,
  driveTrace: RECORD_KIND_TABLE.driveTrace.prefix,
  changeset: RECORD_KIND_TABLE.changeset.prefix,
} as const;

export type {
  BindingBody,
  CheckRecord,
  DriveTraceBody,
  NetworkReport,
  PassageEndBody,
  ReportedConnection,
  RunReportBody,
  RunStartedBody,
  StepRecord,
  StepStartedBody,
} from "../core/records/run-bodies.js";

export type RecordKind = keyof typeof RECORD_PREFIX;

const REF_FIELD = "ref";

/** A content-addressed record of one kind: its ref is the digest of its body. */
export function makeRecord(kind: RecordKind, query: string, body: object): LedgerRecord {
  const ref = contentRef(RECORD_PREFIX[kind], body as Record<string, unknown>, REF_FIELD);
  return { ref, kind, query, body };
}

/** The run's outcome as its execution record (docs/spec/records.md) and the report beside it. */
export async function runRecords(
  report: Omit<RunReportBody, "execution/ref">,
  startedAt: string,
  endedAt: string,
  signer: RecordSigner | undefined,
  admitted?: AdmittedBy,
): Promise<{ execution: LedgerRecord; report: LedgerRecord }> {
  const empty = digestOfBytes(new Uint8Array());
  const built = buildExecution({
    query: report["query/id"],
    proposalRef: report["proposal/ref"],
    environmentRef: report["environment/ref"],
    steps: report.steps.map((s) => ({
      id: s["step/id"],
      effectClass: s.class,
      exitStatus: s["exit/code"] ?? null,
      stdoutDigest: s["stdout/digest"] ?? empty,
      stderrDigest: s["stderr/digest"] ?? empty,
      truncated: s.truncated ?? false,
    })),
    checks: report.checks.map((c) => ({
      id: c.name,
      passed: c.passed,
      exitStatus: c["exit/code"] ?? null,
      outputDigest: c["output/digest"] ?? digestOfBytes(new TextEncoder().encode(c.detail)),
      truncated: c.truncated ?? false,
    })),
    outcome: report.outcome,
    ...(report["refusal/code"] === undefined ? {} : { refusalCode: report["refusal/code"] }),
    startedAt,
    endedAt,
    ...(admitted === undefined ? {} : { admittedBy: admitted }),
  });
  const execution = toLedgerRecord("execution", await signed(built, signer));
  return {
    execution,
    report: makeRecord("runReport", report["query/id"], {
      ...report,
      "execution/ref": execution.ref,
    }),
  };
}

/** The record signed by the signer when there is one. */
export async function signed<T extends object>(
  record: T,
  signer: RecordSigner | undefined,
): Promise<T> {
  return signer === undefined ? record : signer.sign(record);
}

/**
 * A signer over an Ed25519 secret key (32 bytes): Ed25519 is deterministic, so the same record is
 * signed to the same bytes. The key never leaves the signer.
 */
export function keySigner(secretKey: Uint8Array): RecordSigner {
  const key = new Uint8Array(secretKey);
  return { sign: (record) => signRecord(record, key), publicKey: () => publicKeyOf(key) };
}
