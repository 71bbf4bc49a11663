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
  /**
   * The body's canonical (JCS) text, when the producer already made it to compute `ref`: a store
   * keeps this text instead of serialising `body` again.
   */
  readonly text?: string;
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
  postOperatorAct(act: OperatorAct): Promise<void>;
  readOperatorActs(query: string): Promise<readonly OperatorAct[]>;
  /**
   * Take or extend the lease to drive a loop: true when `holder` now holds it until now+ttl (free,
   * expired, or already its own); false when another holder's lease is still live.
   */
  acquireLease(query: string, holder: string, ttlMs: number, now: Date): Promise<boolean>;
  releaseLease(query: string, holder: string): Promise<void>;
  close(): Promise<void>;
}
