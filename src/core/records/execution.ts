// Execution records (`corpus-task-pack-execution:sha256:…`): what one admitted run did, stored with
// its `concluded` fact, and what admitted it: the review that accepted the proposal, the policies it
// ran under and the operator acts that approved it. `result/digest` is taken over the outcome,
// steps and checks.

import type * as Wire from "../contracts/types/ledger-records.v1.js";
import type { Outcome } from "../loop/types.js";
import { digestOf } from "./canonical.js";
import { withContentRef } from "./content-ref.js";
import type { Unsigned } from "./unsigned.js";

export const EXECUTION_PREFIX = "corpus-task-pack-execution";
export const EXECUTION_REF_FIELD = "execution/ref";

export interface ExecutionStepInput {
  readonly id: string;
  readonly effectClass: "observation" | "mutation";
  /** null when the step never exited (killed, refused before start). */
  readonly exitStatus: number | null;
  readonly stdoutDigest: string;
  readonly stderrDigest: string;
  readonly truncated: boolean;
  /** Set when the step was refused or denied (hil/denied, …). */
  readonly refusalCode?: string;
}

export interface ExecutionCheckInput {
  readonly id: string;
  readonly passed: boolean;
  readonly exitStatus: number | null;
  readonly outputDigest: string;
  readonly truncated: boolean;
}

/** What admitted a run and its mutations. */
export interface AdmittedBy {
  /** The review that accepted the proposal. */
  readonly reviewRef?: string;
  /** `operator`: the run was admitted by an approve act for its `admission` step. */
  readonly admission: "auto" | "operator";
  /** `each-mutation`: every mutation step that ran was approved by an operator act. */
  readonly hil: "each-mutation" | "none";
  /** The approve acts that count for this run's steps (`admission` included), by act ref. */
  readonly approvals: readonly { readonly step: string; readonly act: string }[];
}

export interface ExecutionInput {
  readonly query: string;
  readonly proposalRef: string;
  readonly environmentRef: string;
  readonly steps: readonly ExecutionStepInput[];
  readonly checks: readonly ExecutionCheckInput[];
  readonly outcome: Outcome;
  /** Required when the outcome is `refused`; absent otherwise. */
  readonly refusalCode?: string;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly admittedBy?: AdmittedBy;
}

/** One step of an execution, as contracts/ledger-records.v1.json types it. */
export type ExecutionStepWire = Readonly<Wire.ExecutionStep>;

/** One check of an execution, as contracts/ledger-records.v1.json types it. */
export type ExecutionCheckWire = Readonly<Wire.ExecutionCheck>;

/** The execution record, as contracts/ledger-records.v1.json types it, with read-only lists. */
export type ExecutionRecord = Unsigned<Omit<Wire.Execution, "steps" | "checks" | "approvals">> & {
  readonly steps: readonly ExecutionStepWire[];
  readonly checks: readonly ExecutionCheckWire[];
  readonly approvals?: readonly Readonly<NonNullable<Wire.Execution["approvals"]>[number]>[];
};

function admittedToWire(a: AdmittedBy | undefined): Partial<ExecutionRecord> {
  if (a === undefined) return {};
  return {
    ...(a.reviewRef === undefined ? {} : { "review/ref": a.reviewRef }),
    admission: a.admission,
    hil: a.hil,
    approvals: a.approvals.map((x) => ({ "step/id": x.step, "act/ref": x.act })),
  };
}

function stepToWire(s: ExecutionStepInput): ExecutionStepWire {
  const base = {
    "step/id": s.id,
    class: s.effectClass,
    "exit-status": s.exitStatus,
    "stdout/digest": s.stdoutDigest,
    "stderr/digest": s.stderrDigest,
    truncated: s.truncated,
  };
  return s.refusalCode === undefined ? base : { ...base, "refusal/code": s.refusalCode };
}

function checkToWire(c: ExecutionCheckInput): ExecutionCheckWire {
  return {
    "check/id": c.id,
    passed: c.passed,
    "exit-status": c.exitStatus,
    "output/digest": c.outputDigest,
    truncated: c.truncated,
  };
}

export function buildExecution(input: ExecutionInput): ExecutionRecord {
  const steps = input.steps.map(stepToWire);
  const checks = input.checks.map(checkToWire);
  const refusal = input.refusalCode === undefined ? {} : { "refusal/code": input.refusalCode };
  const result = digestOf({ outcome: input.outcome, ...refusal, steps, checks });
  return withContentRef<ExecutionRecord, typeof EXECUTION_REF_FIELD>(
    EXECUTION_PREFIX,
    EXECUTION_REF_FIELD,
    {
      "schema/v": 1,
      "query/id": input.query,
      "proposal/ref": input.proposalRef,
      "environment/ref": input.environmentRef,
      steps,
      checks,
      outcome: input.outcome,
      ...refusal,
      "result/digest": result,
      "started-at": input.startedAt,
      "ended-at": input.endedAt,
      ...admittedToWire(input.admittedBy),
    },
  );
}
