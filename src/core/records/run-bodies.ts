// The bodies of the records the runtime writes beside the facts: the loop's binding to its task
// pack, the end of each passage, the run journal (run and step started), the drive's trace and the
// run report with its steps and checks. Types only: the core's reading of a ledger
// (src/core/loop/next-action.ts) and the runtime that writes them (src/runtime/records.ts) share them.
import type { Outcome, Role } from "../loop/types.js";
import type { EgressConnection } from "../ports/sandbox.js";
import type { Problem } from "../result.js";
import type { TypedMessage } from "../turn/payloads.js";

export interface BindingBody {
  readonly "query/id": string;
  readonly "binding/ref": string;
  /** Absolute path of the task-pack file and the digest of its content when the loop opened. */
  readonly "task-pack/file": string;
  readonly "task-pack/digest": string;
  /** Model URI per role: what each role runs on (never a key: keys come from the environment). */
  readonly models: Readonly<Record<string, string>>;
  /**
   * The roles whose model the run named instead of their agent definition's, by URI. Absent in
   * bindings written before definitions chose models: there every entry of `models` was given.
   */
  readonly "model/override"?: Readonly<Record<string, string>>;
  /** The namespace of namespace-scoped agent memory, when the run named one (`--namespace`). */
  readonly "memory/namespace"?: string;
  readonly "created-at": string;
}

export interface PassageEndBody {
  readonly "query/id": string;
  readonly "passage/ref": string;
  readonly role: Role;
  readonly "agent/id": string;
  readonly "evidence/digest": string;
  /** The proposal a reviewer or critic judged, or the run a summarizer summarised. */
  readonly subject?: string;
  /** For a sub-agent's passage: the passage whose `agent.<name>` call ran it. */
  readonly "parent/ref"?: string;
  /** The model URI that ran instead of the definition's (`--model`, the library's `models`). */
  readonly "model/override"?: string;
  readonly message?: TypedMessage;
  readonly failure?: { readonly code: string; readonly message: string };
  readonly "transcript/ref"?: string;
  /** Model calls the passage made (a scripted model's position after it). */
  readonly "model/calls": number;
  /** For an implementer's Plan: the host's check against the task pack. */
  readonly "plan/problems"?: readonly Problem[];
  readonly "ended-at": string;
}

export interface RunStartedBody {
  readonly "query/id": string;
  readonly "proposal/ref": string;
  readonly "environment/ref": string;
  readonly "environment/dir": string;
  readonly "started-at": string;
}

export interface StepStartedBody {
  readonly "query/id": string;
  readonly "proposal/ref": string;
  readonly "step/id": string;
  readonly index: number;
  readonly "started-at": string;
}

/**
 * A traced drive's trace context, journaled when the drive starts so that a later drive of the loop
 * (a resume after a crash, on any host) links its trace to this one.
 */
export interface DriveTraceBody {
  readonly "query/id": string;
  /** W3C `traceparent` of the drive's root span. */
  readonly traceparent: string;
  readonly holder: string;
  readonly "started-at": string;
}

export interface StepRecord {
  readonly "step/id": string;
  readonly class: "observation" | "mutation";
  readonly action: string;
  readonly status: "ok" | "failed" | "interrupted";
  readonly "exit/code"?: number | null;
  readonly "stdout/digest"?: string;
  readonly "stderr/digest"?: string;
  readonly truncated?: boolean;
  readonly "timed-out"?: boolean;
  /** The head of the output, for the implementer's next passage. */
  readonly excerpt?: string;
  readonly approval?: "approved" | "not-required";
  /** Why the host refused the step (a write escaping the workspace: workbench/patch-outside-policy). */
  readonly refusal?: string;
  /** A digest of the step's output (a command's stdout and stderr together, a read's text). */
  readonly "output/digest"?: string;
  /** What the host met and would not touch (`environment/special-file`, …). */
  readonly findings?: readonly Problem[];
  /** The resource limit the step was stopped at (its refusal is then `environment/limit`). */
  readonly limit?: { readonly resource: "memory" | "tmp" | "disk"; readonly bytes: number };
}

export interface CheckRecord {
  readonly name: string;
  readonly passed: boolean;
  readonly detail: string;
  readonly "exit/code"?: number | null;
  readonly "output/digest"?: string;
  readonly truncated?: boolean;
  /** What the change walk met and would not open (`environment/special-file`, …). */
  readonly findings?: readonly Problem[];
}

/**
 * What a run did in the detail the implementer's next passage needs (output excerpts, check
 * details), beside the execution record it explains.
 */
export interface RunReportBody {
  readonly "query/id": string;
  readonly "proposal/ref": string;
  readonly "execution/ref": string;
  readonly "environment/ref": string;
  readonly steps: readonly StepRecord[];
  readonly checks: readonly CheckRecord[];
  readonly outcome: Outcome;
  readonly "refusal/code"?: string;
  readonly "environment/destroyed": boolean;
  /** A pack with network: its allow-list and every connection the run's commands asked for. */
  readonly network?: NetworkReport;
  /** False when the run's commands ran without a seccomp filter (the weaker sandbox, allowed). */
  readonly "sandbox/seccomp"?: false;
}

/** One connection in a run report: the proxy's record and the step or check it was made during. */
export type ReportedConnection = EgressConnection & {
  readonly "step/id"?: string;
  readonly "check/name"?: string;
};

export interface NetworkReport {
  /** The pack's `network.allow`, each `host:port` in canonical form. */
  readonly allow: readonly string[];
  readonly connections: readonly ReportedConnection[];
  /** Connections past the record's bound (1000), counted only. */
  readonly omitted: number;
}
