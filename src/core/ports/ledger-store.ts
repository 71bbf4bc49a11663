// The LedgerStore port: the only way facts and records reach durable storage. Stores append and
// read; every rule is decided in the core before an append. Its leases (leases.ts) and its change
// feed (change-feed.ts) are ports of their own, with suites of their own.

import type * as Wire from "../contracts/types/ledger-records.v1.js";
import type { Fact } from "../loop/types.js";
import type { ChangeFeed } from "./change-feed.js";
import type { Fence, Leases } from "./leases.js";

/** The version of the ledger store port. */
export const LEDGER_STORE_PORT_VERSION = "v1";

import type { MemoryKey, MemoryRead, MemoryVersion } from "../records/memory-write.js";

export interface StoredFact {
  readonly fact: Fact;
  /** chargeKeyOf(fact.step): unique per loop in every store. */
  readonly chargeKey: string;
  /** chainHash(previous fact's hash or GENESIS_HASH, fact). */
  readonly hash: string;
}

/** A content-addressed, immutable record (proposal, review, execution, passage transcript). */
export interface LedgerRecord {
  /** `<prefix>:sha256:<43>`: the same ref always carries the same body. */
  readonly ref: string;
  /** The record's kind, e.g. `proposal`, `review`, `execution`, `transcript`. */
  readonly kind: string;
  readonly query: string;
  readonly body: unknown;
  /**
   * The body's canonical (JCS) text, when the producer already made it to compute `ref`: a store
   * keeps this text instead of serialising `body` again.
   */
  readonly text?: string;
}

/** A fact row exactly as stored, unparsed: what an audit reads (a tampered row may not be JSON). */
export interface RawFactRow {
  readonly sequence: number;
  readonly chargeKey: string;
  /** The stored kind column: the step's kind, kept beside the fact. */
  readonly kind: string;
  /** The fact's stored JSON text. */
  readonly text: string;
  readonly hash: string;
}

/** A record row exactly as stored, unparsed. */
export interface RawRecordRow {
  readonly ref: string;
  readonly kind: string;
  readonly query: string;
  /** The body's stored JSON text. */
  readonly text: string;
}

export interface RawLoop {
  /** In sequence order. */
  readonly facts: readonly RawFactRow[];
  /** In the order they were stored. */
  readonly records: readonly RawRecordRow[];
}

export interface AppendBatch {
  readonly query: string;
  /**
   * The sequence of the last fact the caller folded (0 for a loop with no fact). The append fails
   * with a `sequence` conflict if another writer appended first; the caller re-reads and re-decides.
   */
  readonly expectedLastSequence: number;
  /** Facts numbered expectedLastSequence+1, +2, …; usually exactly one. */
  readonly facts: readonly Fact[];
  /** Records introduced by these facts: stored in the same transaction, or not at all. */
  readonly records?: readonly LedgerRecord[];
  /**
   * The fencing token of the lease the writer drives under. The store checks it in the same
   * transaction as the write and throws WarrantError `store/lease-lost` (storing nothing) unless
   * the loop's lease is held under exactly this token. Absent: an unfenced write (a loop's first
   * `open`, an operator's `renew` or `cancel` from another terminal).
   */
  readonly fencingToken?: number;
}

/** A worker process as it announces itself. */
export interface WorkerRegistration {
  /** The worker's id: its drives take leases as `<id>` or `<id>/<drive>`. */
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly started: Date;
}

export interface WorkerInfo extends WorkerRegistration {
  readonly lastHeartbeat: Date;
  /** The loops whose lease rows name this worker or one of its drives (live or expired), by query. */
  readonly loops: readonly string[];
}

export type AppendOutcome =
  | { readonly ok: true; readonly stored: readonly StoredFact[] }
  | { readonly ok: false; readonly conflict: "sequence" | "charge-key"; readonly message: string };

/**
 * Something an operator said from another terminal while a run waits (approve, deny, answer), as
 * contracts/ledger-records.v1.json types it: `target` is what it answers (`RUN STEP` for
 * approve/deny, the question's ref for an answer).
 */
export type OperatorAct = Readonly<Wire.OperatorAct>;

/**
 * What posting an operator act did. The first act for a target (`query`, `target`) is the one that
 * counts, decided by the store atomically; a later one is not stored, and is told the act that
 * counts.
 */
export type PostedAct =
  | { readonly posted: true }
  | { readonly posted: false; readonly counting: OperatorAct };

export interface LoopSummary {
  readonly query: string;
  readonly lastSequence: number;
}

export interface LedgerStore extends Leases {
  /** The store's URI with any password removed: safe to print. */
  readonly uri: string;
  /** The store's change feed, where the store keeps one (every store of this package does). */
  changeFeed?(): ChangeFeed;
  /**
   * The public key (unpadded base64url) of the host key this store's loops are signed with, once
   * one was recorded (every store of this package keeps one; the private key never enters a store).
   */
  hostKey?(): Promise<string | undefined>;
  /**
   * Records `publicKey` as the store's host key unless one is recorded already (atomically, against
   * every writer); answers the key that is recorded.
   */
  recordHostKey?(publicKey: string): Promise<string>;
  append(batch: AppendBatch): Promise<AppendOutcome>;
  /** Facts of one loop in sequence order, from `afterSequence + 1` (default: all). */
  readFacts(query: string, afterSequence?: number): Promise<readonly StoredFact[]>;
  /**
   * Store records not introduced by a fact (transcripts, reviews). Idempotent per ref. With a
   * fence, every record must belong to `fence.query`, and the write is refused like a fenced append.
   */
  putRecords(records: readonly LedgerRecord[], fence?: Fence): Promise<void>;
  readRecord(ref: string): Promise<LedgerRecord | undefined>;
  listRecords(query: string): Promise<readonly LedgerRecord[]>;
  listLoops(): Promise<readonly LoopSummary[]>;
  /** One loop's fact and record rows as stored, unparsed, for an audit (`warrant loop check`). */
  readRawLoop(query: string): Promise<RawLoop>;
  /** Store the act if it is the first for its target (atomically, against every writer). */
  postOperatorAct(act: OperatorAct): Promise<PostedAct>;
  /** The acts that count (one per target), in the order they were posted. */
  readOperatorActs(query: string): Promise<readonly OperatorAct[]>;
  /** Announce a worker (again: its host, pid, start and heartbeat are replaced). */
  registerWorker(worker: WorkerRegistration): Promise<void>;
  /** Record a worker's heartbeat; false when it is not registered (deregistered or pruned). */
  heartbeatWorker(id: string, now: Date): Promise<boolean>;
  deregisterWorker(id: string): Promise<void>;
  /** Registered workers ordered by id, each with the loops it holds. */
  listWorkers(): Promise<readonly WorkerInfo[]>;
  /** Deregister the workers whose last heartbeat is before `before`; their ids. */
  pruneWorkers(before: Date): Promise<readonly string[]>;
  /**
   * One key of writable agent memory as passage `passageRef` reads it: the version it sees (for a
   * passage redone after a crash, the one before its earlier attempt's first write), the latest,
   * and the versions that passage already wrote.
   */
  readMemory(key: MemoryKey, passageRef: string): Promise<MemoryRead>;
  /**
   * Appends `version` (the key's latest + 1) together with its `memoryWrite` record, in one
   * transaction; false (nothing stored) when another write took that version first. With a fence,
   * refused like a fenced append (`store/lease-lost`).
   */
  appendMemory(version: MemoryVersion, record: LedgerRecord, fence?: Fence): Promise<boolean>;
  close(): Promise<void>;
}
