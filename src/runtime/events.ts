// The event stream of a drive: one typed event for each thing that happens, in order. It is the one
// source for every observer (the live view, a console's server-sent events, tracing spans); none of
// them reaches back into the drive. Every event carries the loop's query and the runtime clock's time.

import type { QueryId } from "../core/ids.js";
import type { LimitKey, LoopDocument, Outcome, Role, Step, Stop } from "../core/loop/types.js";
import type { ApprovalAnswer, ApprovalKind } from "../core/ports/approver.js";
import type { ModelRequest, ResponseMeta, StopKind, Usage } from "../core/ports/model-provider.js";
import type { EgressConnection } from "../core/ports/sandbox.js";
import type { Clock } from "../core/ports/time.js";
import type { ModelTarget } from "../core/turn/model-target.js";
import type { MessageType } from "../core/turn/types.js";
import type { TranscriptUsage } from "./passage-transcript.js";

/**
 * What a blocked loop waits for: a renewal (`deadline`), an answer (`operator-question`), an
 * admission, or nothing the runtime can give (`budget`: only a cancel; `model`: the model is
 * unreachable or its script is spent; `tool`: the tools the agent definition declares cannot be had,
 * an MCP server unreachable; `definition`: a part of the agent definition no longer checks, a skill
 * edited since its CID — fix it, then resume).
 */
export type BlockReason =
  | "budget"
  | "deadline"
  | "operator-question"
  | "admission"
  | "model"
  | "tool"
  | "definition";

/**
 * Where a tool a passage called comes from (`definition`: the agent definition's own skill.read,
 * memory.write and agent.<name> sub-agent tools).
 */
export type ToolKind = "workspace" | "profile" | "mcp" | "code" | "definition";

/**
 * Who answered: `auto` (approve-all policy), `prompt` (the approver's own ask, e.g. a terminal),
 * `operator` (an act posted to the ledger, from any process), `loop` (the loop was stopped or its
 * deadline passed first).
 */
export type ApprovalAnswerer = "auto" | "prompt" | "operator" | "loop";

/** Where a run spends its time. */
export type RunPhase = "sandbox-start" | "steps" | "verifier" | "sandbox-destroy";

/** A passage's totals, as its transcript records them. */
export type PassageUsage = TranscriptUsage;

interface Base {
  /** RFC 3339, from the runtime's clock. */
  readonly at: string;
  /** The loop's query id, as `show()`, `resume()` and the operator's acts take it. */
  readonly query: QueryId;
}

interface InPassage extends Base {
  readonly role: Role;
  readonly passageRef: string;
}

interface InRun extends Base {
  /** The run: its proposal's ref. */
  readonly proposalRef: string;
}

export type WarrantEvent =
  /** A drive took the loop's lease and starts from wherever the ledger stands. */
  | (Base & {
      readonly kind: "drive-start";
      readonly pack: string;
      readonly binding: string;
      readonly holder: string;
      /** The store's URI scheme (`sqlite`, `postgres`, `memory`): never the rest of its URI. */
      readonly store: string;
      /**
       * The W3C trace contexts (`traceparent`) of this loop's earlier traced drives, oldest first,
       * as their drives journaled them; present only when this drive is traced.
       */
      readonly earlierTraces?: readonly string[];
    })
  /**
   * The drive ended: the loop stopped, blocked, another process holds its lease, or the drive
   * failed (`error`: the code; the lease lost, the store gone, …).
   */
  | (Base & {
      readonly kind: "drive-end";
      readonly status: "stopped" | "blocked" | "leased-elsewhere" | "failed";
      readonly stop?: Stop["reason"];
      readonly blocked?: BlockReason;
      readonly error?: string;
    })
  /** A fact was appended (`summary` says it in one line); the document is the loop after it. */
  | (Base & {
      readonly kind: "fact";
      readonly sequence: number;
      readonly step: Step;
      readonly summary: string;
      readonly document: LoopDocument;
    })
  | (InPassage & {
      readonly kind: "passage-start";
      readonly agentId: string;
      /** The agent definition's `version`, when it states one. */
      readonly agentVersion?: string;
      /** The passage was charged before an interruption and is run again under the same ref. */
      readonly redone: boolean;
    })
  | (InPassage & {
      readonly kind: "passage-end";
      readonly agentId: string;
      readonly outcome:
        | {
            readonly ok: true;
            readonly type: MessageType;
            /** A Plan the host refused against the task pack: the problems' codes. */
            readonly refused?: readonly string[];
          }
        | { readonly ok: false; readonly code: string; readonly message: string };
      readonly usage?: PassageUsage;
    })
  | (InPassage & {
      readonly kind: "model-call-start";
      readonly index: number;
      /** The provider's printable id (`openai:gpt-4.1`); never a key. */
      readonly provider: string;
      /** The provider's name, the model asked for and the server called. */
      readonly target: ModelTarget;
      /** The request (its conversation read up to `length`): only when content is captured. */
      readonly request?: ModelRequest;
    })
  | (InPassage & {
      readonly kind: "model-call-end";
      readonly index: number;
      readonly provider: string;
      readonly latencyMs: number;
      /** Absent when the call failed (`error`). */
      readonly stop?: StopKind;
      /** Whether the turn validated; null when the answer was not a complete turn. */
      readonly valid?: boolean | null;
      readonly usage?: Usage;
      readonly error?: string;
      /** What the provider named the response: its id, the model that answered, the finish reason. */
      readonly response?: ResponseMeta;
      /** The candidate turn as the model gave it: only when content is captured. */
      readonly output?: unknown;
    })
  | (InPassage & {
      readonly kind: "repair";
      readonly index: number;
      readonly codes: readonly string[];
    })
  | (InPassage & {
      readonly kind: "tool-call-start";
      readonly name: string;
      /** `<passage ref>#<model call>.<call>`: stable across a replay of the same passage. */
      readonly callId: string;
      readonly tool: ToolKind;
      /** The call's arguments: only when content is captured. */
      readonly args?: Readonly<Record<string, unknown>>;
    })
  | (InPassage & {
      readonly kind: "tool-call-end";
      readonly name: string;
      readonly callId: string;
      readonly tool: ToolKind;
      readonly isError: boolean;
      /** Set when the host got no answer from the tool (`tool/…`). */
      readonly code?: string;
      readonly latencyMs: number;
      /** What the model reads back: only when content is captured. */
      readonly result?: string;
    })
  | (InRun & {
      readonly kind: "run-start";
      readonly environmentRef: string;
      readonly backend: string;
      /** How the environment holds the baseline: `overlay` (copy-on-write) or `copy`. */
      readonly mode?: string;
    })
  | (InRun & { readonly kind: "run-phase"; readonly phase: RunPhase; readonly durationMs: number })
  | (InRun & {
      readonly kind: "step-start";
      readonly stepId: string;
      readonly index: number;
      readonly class: "observation" | "mutation";
      readonly action: string;
    })
  | (InRun & {
      readonly kind: "step-end";
      readonly stepId: string;
      readonly class: "observation" | "mutation";
      readonly action: string;
      readonly status: "ok" | "failed" | "interrupted";
      readonly exitCode?: number | null;
      readonly truncated?: boolean;
      readonly timedOut?: boolean;
      readonly refusal?: string;
      /**
       * Why a failed step failed beyond an exit status (a patch that does not apply, a refused
       * path, a limit): see stepFailureReason.
       */
      readonly reason?: string;
      /** The connections the step's command asked the egress proxy for (a pack with network). */
      readonly connections?: readonly EgressConnection[];
    })
  | (InRun & {
      readonly kind: "check";
      readonly name: string;
      readonly passed: boolean;
      readonly detail: string;
      /** How long the check took (a command's run, a snapshot comparison). */
      readonly durationMs: number;
    })
  | (InRun & {
      readonly kind: "run-end";
      readonly environmentRef: string;
      readonly outcome: Outcome;
      readonly refusal?: string;
      /** False when the run ended before an environment was made (nothing to destroy). */
      readonly environmentMade: boolean;
      readonly environmentDestroyed: boolean;
      /** The host stopped while a step ran: the run is concluded `unknown`, never repeated. */
      readonly interrupted: boolean;
    })
  | (InRun & {
      readonly kind: "approval-requested";
      readonly step: string;
      readonly approval: ApprovalKind;
      /** What the mutation does: a diff for a patch, the argv for a command. */
      readonly description: string;
    })
  | (InRun & {
      readonly kind: "approval-answered";
      readonly step: string;
      readonly approval: ApprovalKind;
      readonly answer: ApprovalAnswer;
      readonly by: ApprovalAnswerer;
    })
  /** A verified run's summary was not written (no budget left); the conclusion still lands. */
  | (InRun & { readonly kind: "summary-skipped"; readonly detail: string })
  /** The loop cannot go on without the operator (or a fixed model or tool). */
  | (Base & {
      readonly kind: "blocked";
      readonly reason: BlockReason;
      readonly counter?: LimitKey;
      readonly detail: string;
      readonly document: LoopDocument;
    })
  /** The drive lost its lease (a refused write or renewal): it stops at once and writes nothing more. */
  | (Base & { readonly kind: "lease-lost"; readonly code: string; readonly message: string })
  /** The loop is stopped (emitted once, when a drive finds it so). */
  | (Base & {
      readonly kind: "stop";
      readonly reason: Stop["reason"];
      readonly document: LoopDocument;
    });

export type WarrantEventKind = WarrantEvent["kind"];

type WithoutAt<T> = T extends unknown
  ? Omit<T, "at" | "query"> & { readonly query: string }
  : never;

/**
 * An event as the runtime emits it (its query a plain string, as the runtime holds it): the
 * composition stamps `at` from the clock and hands the query on as the QueryId it is.
 */
export type WarrantEventBody = WithoutAt<WarrantEvent>;

export type Emit = (event: WarrantEventBody) => void;

/**
 * Each event as its observers get it: a copy of the body with `at` stamped by `clock`. Copied and
 * added to, not spread (a spread followed by more properties costs several microseconds in V8, and
 * this runs for every event of every turn); same keys, same order. The ISO text of a millisecond is
 * made once: the events of one turn mostly share it.
 */
export function eventStamper(clock: Clock): (body: WarrantEventBody) => WarrantEvent {
  let lastMs = Number.NaN;
  let lastAt = "";
  return (body) => {
    // The query is the QueryId it was made from (the body holds it as a plain string).
    const event = Object.assign({}, body) as WarrantEvent & { at: string };
    const now = clock.now();
    const ms = now.getTime();
    if (ms !== lastMs) {
      lastMs = ms;
      lastAt = now.toISOString();
    }
    event.at = lastAt;
    return event;
  };
}
