// What one drive works with: the loop over its store, the passage runner, the run environments,
// task-pack loading, and the RuntimeContext that carries them with the ports of src/core/ports
// (store, sandbox, approver, signer, time). createWarrant (src/library) composes it from adapters.

import type { Decision, LoopCommand, LoopDocument, Role } from "../core/loop/types.js";
import type { Approver } from "../core/ports/approver.js";
import type { LedgerRecord, LedgerStore } from "../core/ports/ledger-store.js";
import type {
  ChangeBounds,
  EgressLog,
  EnvironmentChanges,
  LimitHit,
  ResourceLimits,
} from "../core/ports/sandbox.js";
import type { RecordSigner } from "../core/ports/signer.js";
import type { Clock, Time } from "../core/ports/time.js";
import type { Problem, Result } from "../core/result.js";
import type { NetworkPolicy } from "../core/taskpack/network.js";
import type { TypedMessage } from "../core/turn/payloads.js";
import type { Emit, PassageUsage } from "./events.js";
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

export interface RunExecResult {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly truncated: boolean;
  readonly timedOut: boolean;
  /** `sha256:…` over the command's stdout and stderr digests. */
  readonly outputDigest: string;
  /** The resource limit that stopped the command (or that /tmp was left full at). */
  readonly limit?: LimitHit;
}

/** A fresh, contained copy of the baseline workspace, made for one run alone. */
export interface RunEnvironment {
  readonly ref: string;
  /** Host path of the environment's directory (journaled so a resumed run can destroy it). */
  readonly dir: string;
  /** How it holds its workspace: `overlay` over the pinned baseline, or a `copy`. */
  readonly mode?: string;
  /** False when its commands run without a seccomp filter (the weaker sandbox, allowed). */
  readonly seccomp?: boolean;
  exec(
    argv: readonly string[],
    opts: {
      timeoutMs: number;
      maxOutputBytes: number;
      env?: Readonly<Record<string, string>>;
    },
  ): Promise<RunExecResult>;
  readFile(path: string): Promise<Uint8Array | undefined>;
  /**
   * At most `maxBytes` of a file, `truncated` when more was there; refused with `sandbox/not-found`,
   * `environment/special-file` (a FIFO, socket or device: never opened), or a symlink escape.
   */
  read(
    path: string,
    maxBytes: number,
  ): Promise<Result<{ readonly bytes: Uint8Array; readonly truncated: boolean }>>;
  /** A regular file of the baseline as the environment was made from it (undefined: none there). */
  readBaseline?(path: string, maxBytes: number): Promise<Uint8Array | undefined>;
  /** Undefined once written; the refusal when the path leaves the workspace (a symlink escape). */
  writeFile(path: string, bytes: Uint8Array): Promise<Problem | undefined>;
  /** The digest of every regular file under the workspace, by `/`-separated relative path. */
  snapshot(): Promise<ReadonlyMap<string, string>>;
  /**
   * What changed against the baseline the environment was made from (cost: the changes), within
   * `bounds` (default DEFAULT_CHANGE_BOUNDS): past either, incomplete with an
   * `environment/too-many-changes` finding.
   */
  changes(bounds?: Partial<ChangeBounds>): Promise<EnvironmentChanges>;
  /**
   * What the environment's commands asked its egress proxy for, so far (still readable after
   * destroy); undefined, or absent, when the environment has no network.
   */
  connections?(): EgressLog | undefined;
  /** Destroys the environment; true once its directory is confirmed gone. */
  destroy(): Promise<boolean>;
}

export interface SandboxPort {
  /** The backend's name (`bwrap`, `unshare`) or undefined when nothing can contain a run. */
  readonly backend: string | undefined;
  /**
   * A fresh environment for the run `ref`. Its directory is found again by `name` (stable across a
   * restart; a leftover of that name is replaced), even when the host died before journaling it.
   */
  create(
    baselineDir: string,
    ref: string,
    name: string,
    options?: {
      readonly resources?: ResourceLimits;
      readonly network?: NetworkPolicy;
      /** Workspace folders the environment contains as they are on the host (the pack's). */
      readonly dependencies?: readonly string[];
      /** Host folders bound read-only at their own path, their `bin/` first on PATH. */
      readonly toolchains?: readonly string[];
    },
  ): Promise<RunEnvironment>;
  /** Removes a dead environment's directory (on resume); true once it is confirmed gone. */
  destroyDir(dir: string): Promise<boolean>;
  /**
   * Removes what a dead attempt left of the environment named `name`, journaled or not; true once
   * nothing is there (also when nothing ever was, or no backend exists).
   */
  discard(name: string): Promise<boolean>;
  /** The digest of every regular file under a host directory (the baseline), by relative path. */
  snapshotDir(dir: string): Promise<ReadonlyMap<string, string>>;
  /** Gives back the baselines pinned for this drive's environments (once the drive ends). */
  close?(): Promise<void>;
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
  readonly sandbox: SandboxPort;
  readonly approver: Approver;
  /** The loop's clock: deadlines, record times (a test moves it). */
  readonly clock: Clock;
  /**
   * The process's time: the lease's acquisition, waits and renewals (leases bind processes, so it
   * is wall-clock time, not the loop's clock).
   */
  readonly time: Time;
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
