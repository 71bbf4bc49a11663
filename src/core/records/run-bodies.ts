// The bodies of the records the runtime writes beside the facts: the loop's binding to its task
// pack, the end of each passage, the run journal (run and step started), the drive's trace and the
// run report with its steps and checks. Types only: the core's reading of a ledger
// (src/core/loop/next-action.ts) and the runtime that writes them (src/runtime/records.ts) share them.
// Each is its contract's generated type (contracts/ledger-records.v1.json), read-only, with the
// passage's message, the problems and the network report in the core's read-only types.
import type * as Wire from "../contracts/types/ledger-records.v1.js";
import type { EgressConnection } from "../ports/sandbox.js";
import type { Problem } from "../result.js";
import type { TypedMessage } from "../turn/payloads.js";
import type { Unsigned } from "./unsigned.js";

/**
 * The loop's binding to its task pack: `task-pack/file` is the absolute path of the pack file and
 * `task-pack/digest` its content's digest when the loop opened; `models` the model URI per role
 * (never a key: keys come from the environment); `model/override` the roles whose model the run
 * named instead of their agent definition's (absent in bindings written before definitions chose
 * models: there every entry of `models` was given); `memory/namespace` the namespace of
 * namespace-scoped agent memory, when the run named one (`--namespace`).
 */
export type BindingBody = Unsigned<Wire.Binding>;

/**
 * The end of a passage: `subject` is the proposal a reviewer or critic judged, or the run a
 * summarizer summarised; `parent/ref`, for a sub-agent's passage, the passage whose `agent.<name>`
 * call ran it; `model/override` the model URI that ran instead of the definition's (`--model`, the
 * library's `models`); `model/calls` the model calls the passage made (a scripted model's position
 * after it); `plan/problems`, for an implementer's Plan, the host's check against the task pack.
 */
export type PassageEndBody = Unsigned<Omit<Wire.PassageEnd, "message" | "plan/problems">> & {
  /** The message the passage ended with, in the core's read-only types of the payloads. */
  readonly message?: TypedMessage;
  readonly "plan/problems"?: readonly Problem[];
};

/** The journal of a run's start, written before its environment is used. */
export type RunStartedBody = Unsigned<Wire.RunStarted>;

/** The journal of a step's start, written before the step runs: such a run is never resumed. */
export type StepStartedBody = Unsigned<Wire.StepStarted>;

/**
 * A traced drive's trace context, journaled when the drive starts so that a later drive of the loop
 * (a resume after a crash, on any host) links its trace to this one.
 */
export type DriveTraceBody = Unsigned<Wire.DriveTrace>;

/**
 * One step of a run report: `excerpt` is the head of the output, for the implementer's next passage;
 * `refusal` why the host refused the step (a write escaping the workspace:
 * workbench/patch-outside-policy); `output/digest` a digest of its output (a command's stdout and
 * stderr together, a read's text); `findings` what the host met and would not touch
 * (`environment/special-file`, …); `limit` the resource limit the step was stopped at (its refusal is
 * then `environment/limit`).
 */
export type StepRecord = Readonly<Omit<Wire.StepReport, "findings">> & {
  readonly findings?: readonly Problem[];
};

/** One check of a run report; `findings` is what the change walk met and would not open. */
export type CheckRecord = Readonly<Omit<Wire.CheckReport, "findings">> & {
  readonly findings?: readonly Problem[];
};

/**
 * What a run did in the detail the implementer's next passage needs (output excerpts, check
 * details), beside the execution record it explains.
 */
export type RunReportBody = Unsigned<Omit<Wire.RunReport, "steps" | "checks" | "network">> & {
  readonly steps: readonly StepRecord[];
  readonly checks: readonly CheckRecord[];
  /** A pack with network: its allow-list and every connection the run's commands asked for. */
  readonly network?: NetworkReport;
};

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
