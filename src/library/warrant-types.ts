// The shapes the runtime's drives and reads take and give (`run`, `resume`, `show`), on their own so
// that what builds on the runtime (eval sets) can name them without importing the runtime itself.
import type { QueryId, RecordRef } from "../core/ids.js";
import type { LoopDocument, LoopStateName, Role, Stop } from "../core/loop/types.js";
import type { LedgerRecord } from "../core/ports/ledger-store.js";
import type { NetworkReport } from "../runtime/records.js";
import type { WorkerEvent } from "../runtime/worker.js";
import type { LoopUsage } from "./loop-usage.js";
import type { Waiting } from "./pending.js";

export interface RunOptions {
  /** The loop's query id (default `query:<pack>-<time>-<random>`). */
  readonly query?: string;
  /**
   * What the loop's binding records for each role's model (a model URI, say), read back on resume
   * as `ModelContext.recorded`. Default: each role's model id. Never a key.
   */
  readonly models?: Readonly<Partial<Record<Role, string>>>;
}

export interface ResumeOptions {
  /** How long to wait for a lease another driver holds (default: the lease's ttl and a second). */
  readonly waitMs?: number;
}

export interface LoopView {
  /** The seed-valid loop document. */
  readonly loop: LoopDocument;
  /** Each record's ref, as `record()` takes it, and kind. */
  readonly records: readonly { readonly ref: RecordRef; readonly kind: string }[];
  /** Model calls and tokens, summed from the passage transcripts, per role and in all. */
  readonly usage: LoopUsage;
  /** Each run of a pack with network: its report's egress record (absent when there is none). */
  readonly egress?: readonly RunEgress[];
  /**
   * What the open loop waits on, as `loops()` says it (a failed passage's code and message, its
   * model's last refused answer among them); absent once stopped or when nothing holds it.
   */
  readonly waiting?: Waiting;
}

export interface RunEgress {
  readonly "proposal/ref": string;
  readonly network: NetworkReport;
}

export interface WorkOptions {
  /** Loops driven at once. */
  readonly concurrency: number;
  /** Stop on SIGINT/SIGTERM (default false). */
  readonly handleSignals?: boolean;
  /**
   * Told when a job's drive starts, finds its loop busy, ends, fails or loses its lease, when a
   * loop is dispatched again (a takeover, a shutdown) and of each phase of the shutdown.
   */
  readonly onJob?: (event: WorkerEvent) => void;
}

/**
 * Where a loop stands for an operator: `stopped`; `driving` (a live lease); `stuck` (its lease
 * expired and the loop is not stopped: its driver died or froze; a worker takes it over);
 * `queued` (a job waits for a worker); `failed` (its job used up its attempts: `requeue` it);
 * `waiting` (no lease and no job: it waits for an operator's act, a renewal, or a resume).
 */
export type LoopStatus = "stopped" | "driving" | "stuck" | "queued" | "failed" | "waiting";

export interface LoopListing {
  /** The loop's query id, as `show()`, `resume()` and the operator's acts take it. */
  readonly query: QueryId;
  readonly state: LoopStateName;
  readonly stop?: { readonly reason: Stop["reason"] };
  /** What an open loop waits for: an approval, an answer, a budget, its deadline, a blocked passage. */
  readonly waiting?: Waiting;
  readonly status: LoopStatus;
  /** The lease's holder (`<worker id>/job-<job id>` for a worker), while a lease row stands. */
  readonly heldBy?: string;
  /** When that lease expires (or expired), ISO 8601. */
  readonly leaseUntil?: string;
}

/** A worker as the store's registry has it, with the loops it holds. */
export interface WorkerListing {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly started: string;
  readonly lastHeartbeat: string;
  readonly loops: readonly string[];
}

/** A record as `record()` hands it out: its ref and its loop's query typed as ids. */
export interface StoredRecord extends LedgerRecord {
  readonly ref: RecordRef;
  readonly query: QueryId;
}

/** Who an operator's act is recorded as. */
export interface ActOptions {
  /** An operator name, or `node-operator-binding:NAME`; default: the runtime's operator. */
  readonly operator?: string;
}
