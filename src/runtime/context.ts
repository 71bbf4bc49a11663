// What one drive works with: the loop over its store, the passage runner, the run environments,
// task-pack loading, and the RuntimeContext that carries them with the ports of src/core/ports
// (store, sandbox, approver, signer, time). createWarrant (src/library) composes it from adapters.

import type { Decision, LoopCommand, LoopDocument, Role } from "../core/loop/types.js";
import type { Approver } from "../core/ports/approver.js";
import type { LedgerRecord, LedgerStore } from "../core/ports/ledger-store.js";
import type { Random } from "../core/ports/random.js";
import type { RecordSigner } from "../core/ports/signer.js";
import type { Clock, Time } from "../core/ports/time.js";
import type { Problem, Result } from "../core/result.js";
import type { TypedMessage } from "../core/turn/payloads.js";
import type { Emit, PassageUsage } from "./events.js";
import type { RunEnvironments } from "./run-environments.js";
import type { LoadedPack } from "./task-pack.js";

/** The loop core over a store: decide, append (with records in the same transaction), fold. */
export interface LoopPort {
  execute(
    query: string,
    command: LoopCommand,
    now: Date,
    records?: readonly LedgerRecord[],
  ): Promise<Decision>;
  document(query: string, now: Date): Promise<LoopDocument | undefined>;
}

/**
 * What a passage may write beside its own end: memory versions (`memory.write`) and the charges and
 * records of sub-agents' nested passages. The drive's own (fenced, signing) store and loop.
 */
export interface PassageLedger {
  readonly store: LedgerStore;
  readonly loop: LoopPort;
  readonly now: () => Date;
}

/** One passage to run: the evidence is fixed before the first model call. */
export interface PassageRequest {
  readonly query: string;
  readonly role: Role;
  readonly agentId: string;
  readonly passageRef: string;
  /** The brief the agent sees: task statement plus the evidence (earlier proposals, reviews, runs). */
  readonly evidence: string;
  readonly pack: LoadedPack;
  /** Model calls made by this role's earlier, ended passages (see ModelForPassage). */
  readonly priorCalls: number;
  /** Where memory writes and sub-agents' passages go; without it an agent that has either fails. */
  readonly ledger?: PassageLedger;
  /**
   * The host's check of the message that would end the passage (a Plan against the pack): a
   * refused one is answered as a repair inside the passage while its repairs last.
   */
  readonly checkMessage?: (message: TypedMessage) => readonly Problem[];
}

export type PassageOutcome =
  | {
      readonly ok: true;
      readonly message: TypedMessage;
      /** The passage transcript record (kind `transcript`), stored beside the facts. */
      readonly transcript?: LedgerRecord;
      readonly modelCalls?: number;
      readonly usage?: PassageUsage;
      /** The model URI that ran instead of the definition's. */
      readonly modelOverride?: string;
    }
  | {
      readonly ok: false;
      readonly code: string;
      readonly message: string;
      readonly transcript?: LedgerRecord;
      readonly modelCalls?: number;
      readonly usage?: PassageUsage;
      readonly modelOverride?: string;
    };

export interface PassageRunner {
  run(request: PassageRequest): Promise<PassageOutcome>;
}

/**
 * Reads a task pack from where it lives (its file, its baseline folder, its agent definitions) and
 * validates it; a loop's pack is read again on resume from the file its binding names.
 */
export type PackLoader = (file: string) => Promise<Result<LoadedPack>>;

export interface RuntimeContext {
  readonly store: LedgerStore;
  readonly loop: LoopPort;
  readonly passages: PassageRunner;
  /** The drive's run environments, over the Sandbox port. */
  readonly sandbox: RunEnvironments;
  readonly approver: Approver;
  /** The loop's clock: deadlines, record times (a test moves it). */
  readonly clock: Clock;
  /**
   * The process's time: the lease's acquisition, waits and renewals (leases bind processes, so it
   * is wall-clock time, not the loop's clock).
   */
  readonly time: Time;
  /** Randomness (a lost append's backoff, a new loop's id); the system's when absent. */
  readonly random?: Random;
  readonly emit: Emit;
  /** The operator binding acting for this host (`node-operator-binding:…`). */
  readonly operator: string;
  /** Signs proposals and execution records when given. */
  readonly signer?: RecordSigner;
  /** Signs the loop's chain head; called when a drive stops or blocks (see signing-store.ts). */
  readonly sealHead?: (query: string, reason: "stop" | "block") => Promise<void>;
  /** Reads a loop's task pack again on resume. */
  readonly loadPack: PackLoader;
  /**
   * The W3C `traceparent` of the span that traces a drive of `query`, when a tracing subscriber
   * follows the events; the drive journals it (a `driveTrace` record) so a later drive links to it.
   * Absent when nothing traces: then nothing is read or written for tracing.
   */
  readonly traceparent?: (query: string) => string | undefined;
}
