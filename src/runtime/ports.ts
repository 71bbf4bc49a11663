// What the runtime needs from the pieces around it, as narrow interfaces: the loop ledger, the
// passage runner, the contained sandbox, the approver, the record signer, task-pack loading, the
// job queue and the event stream. createWarrant (src/library) composes them from adapters.
import type { LedgerRecord, LedgerStore } from "../core/loop/ledger-store.js";
import type { Decision, LoopCommand, LoopDocument, Role } from "../core/loop/types.js";
import type { Clock, Time } from "../core/ports.js";
import type { HostSigner } from "../core/records/host-records.js";
import type { Problem, Result } from "../core/result.js";
import type {
  ChangeBounds,
  EgressLog,
  EnvironmentChanges,
  LimitHit,
  ResourceLimits,
} from "../core/sandbox/sandbox-port.js";
import type { NetworkPolicy } from "../core/taskpack/network.js";
import type { TypedMessage } from "../core/turn/payloads.js";
import type { ApprovalAnswer, ApprovalKind, Emit, PassageUsage } from "./events.js";
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
  /**
   * Pins the baseline of `baselineDir` now and holds it until close(): every environment made over
   * the same folder and dependencies meanwhile, through this port or another over the same
   * sandbox, is laid over that one copy instead of a copy of its own (an eval holds each task's).
   */
  hold?(baselineDir: string, dependencies: readonly string[]): Promise<void>;
  /** Gives back the baselines pinned for this drive's environments (once the drive ends). */
  close?(): Promise<void>;
}

export interface ApprovalRequest {
  readonly query: string;
  /** The run: its proposal ref. */
  readonly run: string;
  readonly step: string;
  readonly kind: ApprovalKind;
  /** What the mutation does: a diff for a patch, the argv for a command. */
  readonly description: string;
}

export interface Approver {
  approve(request: ApprovalRequest): Promise<ApprovalAnswer>;
}

/**
 * Signs the records a drive writes (the host key), and gives the public key pinned in each loop so
 * that `loop check` verifies every signature; records are stored unsigned without one.
 */
export type RecordSigner = HostSigner;

/**
 * Reads a task pack from where it lives (its file, its baseline folder, its agent definitions) and
 * validates it; a loop's pack is read again on resume from the file its binding names.
 */
export type PackLoader = (file: string) => Promise<Result<LoadedPack>>;

/** A running worker: `promise` settles when it stops; `stop()` stops it after its current jobs. */
export interface WorkerRunner {
  readonly promise: Promise<void>;
  stop(): Promise<void>;
}

/**
 * What a worker does with one job: drive the loop it names. A rejection retries the job later.
 * `worker` is the queue's id of the worker that took it.
 */
export type JobHandler = (job: {
  readonly query: string;
  readonly id: string;
  readonly worker: string;
}) => Promise<void>;

/** A loop's job as the queue holds it. */
export interface QueuedJob {
  readonly query: string;
  readonly id: string;
  readonly attempts: number;
  readonly maxAttempts: number;
  /** When it runs (next). */
  readonly runAt: Date;
  /** The worker that holds it now, while one does, and since when. */
  readonly lockedBy?: string;
  readonly lockedAt?: Date;
  readonly lastError?: string;
  /** It used up its attempts: it runs again only when requeued. */
  readonly failed: boolean;
}

/** The queue that hands dispatched loops to workers (graphile-worker over PostgreSQL). */
export interface JobQueue {
  /** Where the queue lives, for people (never a password). */
  readonly description: string;
  /**
   * Queue the loop under its own job key: one job per loop. A waiting or failed job of the loop is
   * replaced (its attempts start again); a job some worker holds is superseded (never retried) and a
   * fresh one queued, so a loop whose worker died is driven again at once. `first`: ahead of the
   * loops not yet started (a loop taken over or released by a worker that stops).
   */
  dispatch(query: string, options?: { readonly first?: boolean }): Promise<void>;
  /** The loops' jobs still in the queue (waiting, held, failed), by query. */
  jobs(): Promise<readonly QueuedJob[]>;
  start(options: {
    readonly concurrency: number;
    readonly handler: JobHandler;
    /** Stop on SIGINT/SIGTERM (a process that is only a worker). */
    readonly handleSignals: boolean;
  }): Promise<WorkerRunner & { readonly workerId: string }>;
  /** Releases the queue's connections (dispatching reuses one pool until then). */
  close(): Promise<void>;
}

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
