// The LedgerStore port: the only way facts and records reach durable storage. Stores append and
// read; every rule is decided in the core before an append.
import type { Fact } from "./types.js";

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
}

export type AppendOutcome =
  | { readonly ok: true; readonly stored: readonly StoredFact[] }
  | { readonly ok: false; readonly conflict: "sequence" | "charge-key"; readonly message: string };

/** Something an operator said from another terminal while a run waits (approve, deny, answer). */
export interface OperatorAct {
  readonly query: string;
  readonly kind: "approve" | "deny" | "answer";
  /** What it answers: `RUN STEP` for approve/deny, the question's ref for an answer. */
  readonly target: string;
  readonly text?: string;
  readonly operator: string;
  readonly at: string;
}

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

export interface LedgerStore {
  /** The store's URI with any password removed: safe to print. */
  readonly uri: string;
  append(batch: AppendBatch): Promise<AppendOutcome>;
  /** Facts of one loop in sequence order, from `afterSequence + 1` (default: all). */
  readFacts(query: string, afterSequence?: number): Promise<readonly StoredFact[]>;
  /** Store records not introduced by a fact (transcripts, reviews). Idempotent per ref. */
  putRecords(records: readonly LedgerRecord[]): Promise<void>;
  readRecord(ref: string): Promise<LedgerRecord | undefined>;
  listRecords(query: string): Promise<readonly LedgerRecord[]>;
  listLoops(): Promise<readonly LoopSummary[]>;
  /** One loop's fact and record rows as stored, unparsed, for an audit (`warrant loop check`). */
  readRawLoop(query: string): Promise<RawLoop>;
  /** Store the act if it is the first for its target (atomically, against every writer). */
  postOperatorAct(act: OperatorAct): Promise<PostedAct>;
  /** The acts that count (one per target), in the order they were posted. */
  readOperatorActs(query: string): Promise<readonly OperatorAct[]>;
  /**
   * Take or extend the lease to drive a loop: true when `holder` now holds it until now+ttl (free,
   * expired, or already its own); false when another holder's lease is still live.
   */
  acquireLease(query: string, holder: string, ttlMs: number, now: Date): Promise<boolean>;
  releaseLease(query: string, holder: string): Promise<void>;
  close(): Promise<void>;
}
