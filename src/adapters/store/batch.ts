// What every store checks and computes the same way: the shape of an append batch, the hash chain
// over its facts, and how facts (JCS text) and record bodies (JSON text) are written.

import { chainHash, GENESIS_HASH } from "../../core/loop/chain.js";
import { chargeKeyOf, type Fact } from "../../core/loop/types.js";
import type {
  AppendBatch,
  LedgerRecord,
  OperatorAct,
  StoredFact,
} from "../../core/ports/ledger-store.js";
import { canonicalJson } from "../../core/records/canonical.js";
import { WarrantError } from "../../core/result.js";

/**
 * A malformed batch is a bug in the caller (the decider numbers facts), so it throws: facts must be
 * non-empty, belong to `batch.query` and be numbered expectedLastSequence+1, +2, ….
 */
export function assertBatchShape(batch: AppendBatch): void {
  const { query, expectedLastSequence, facts } = batch;
  if (!Number.isSafeInteger(expectedLastSequence) || expectedLastSequence < 0) {
    throw new WarrantError(
      "store/batch-invalid",
      `expectedLastSequence must be a non-negative integer, got ${String(expectedLastSequence)}`,
    );
  }
  if (facts.length === 0) {
    throw new WarrantError("store/batch-invalid", "an append carries at least one fact");
  }
  facts.forEach((fact, i) => {
    if (fact["query/id"] !== query) {
      throw new WarrantError(
        "store/batch-invalid",
        `fact ${i} belongs to ${fact["query/id"]}, not to ${query}`,
      );
    }
    if (fact.sequence !== expectedLastSequence + i + 1) {
      throw new WarrantError(
        "store/batch-invalid",
        `fact ${i} has sequence ${fact.sequence}; expected ${expectedLastSequence + i + 1}`,
      );
    }
  });
  for (const record of batch.records ?? []) assertRecordShape(record, query);
}

export function assertRecordShape(record: LedgerRecord, query?: string): void {
  if (typeof record.ref !== "string" || record.ref.length === 0) {
    throw new WarrantError("store/batch-invalid", "a record needs a non-empty ref");
  }
  if (query !== undefined && record.query !== query) {
    throw new WarrantError(
      "store/batch-invalid",
      `record ${record.ref} belongs to ${record.query}, not to ${query}`,
    );
  }
}

/** Chain the batch's facts onto `previousHash` (GENESIS_HASH for a loop's first fact). */
export function chainFacts(previousHash: string | undefined, facts: readonly Fact[]): StoredFact[] {
  let prev = previousHash ?? GENESIS_HASH;
  return facts.map((fact) => {
    const hash = chainHash(prev, fact);
    prev = hash;
    return { fact, chargeKey: chargeKeyOf(fact.step), hash };
  });
}

/** Charge keys repeated inside one batch (the first repeat), if any. */
export function repeatedChargeKey(stored: readonly StoredFact[]): string | undefined {
  const seen = new Set<string>();
  for (const s of stored) {
    if (seen.has(s.chargeKey)) return s.chargeKey;
    seen.add(s.chargeKey);
  }
  return undefined;
}

/** The stored text of a record body or a fact: JCS, so equal values are equal text. */
export function storedText(value: unknown): string {
  return canonicalJson(value);
}

/**
 * A record as stored: its body as JSON text. The ref already commits to the body's canonical form,
 * so the text need not be canonical; canonical forms are compared only when a ref comes again
 * with different text (see sameRecord).
 */
export interface StoredRecord {
  readonly ref: string;
  readonly kind: string;
  readonly query: string;
  readonly body: string;
}

/**
 * Records to store, once each: a ref repeated with the same content is dropped, a ref repeated with
 * other content throws `store/record-conflict`.
 */
export function toStoredRecords(records: readonly LedgerRecord[]): StoredRecord[] {
  const byRef = new Map<string, StoredRecord>();
  for (const r of records) {
    const body = r.text ?? recordText(r.body);
    const s: StoredRecord = { ref: r.ref, kind: r.kind, query: r.query, body };
    const seen = byRef.get(s.ref);
    if (seen === undefined) byRef.set(s.ref, s);
    else if (!sameRecord(seen, s)) throw recordConflict(s.ref);
  }
  return [...byRef.values()];
}

function recordText(body: unknown): string {
  const text = JSON.stringify(body);
  if (text === undefined)
    throw new WarrantError("store/batch-invalid", "a record body has no JSON form");
  return text;
}

/** Same kind, query and body: equal text, or else equal canonical (JCS) forms of the two texts. */
export function sameRecord(a: StoredRecord, b: StoredRecord): boolean {
  if (a.kind !== b.kind || a.query !== b.query) return false;
  return (
    a.body === b.body ||
    canonicalJson(JSON.parse(a.body) as unknown) === canonicalJson(JSON.parse(b.body) as unknown)
  );
}

export function fromStoredRecord(r: StoredRecord): LedgerRecord {
  return { ref: r.ref, kind: r.kind, query: r.query, body: JSON.parse(r.body) as unknown };
}

/** Order of loop ids in listLoops: by UTF-8 bytes, as SQLite's BINARY and PostgreSQL's "C". */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/**
 * A ref names one body for ever. Another body under a stored ref means the caller computed the
 * ref wrongly: a bug, so it throws (and rolls back whatever transaction it is in).
 */
export function recordConflict(ref: string): WarrantError {
  return new WarrantError(
    "store/record-conflict",
    `record ${ref} is already stored with a different kind, query or body`,
  );
}

export function sequenceConflictMessage(query: string, expected: number, actual: number): string {
  return `loop ${query} is at sequence ${actual}, not ${expected}: another writer appended first`;
}

export function chargeKeyConflictMessage(query: string, key?: string): string {
  return key === undefined
    ? `loop ${query} already has a fact with one of these charge keys`
    : `loop ${query} already has a fact with charge key "${key}"`;
}

/** An operator act as the SQL stores read it (`text` NULL when the act has none). */
export interface ActRow {
  readonly query: string;
  readonly kind: OperatorAct["kind"];
  readonly target: string;
  readonly text: string | null;
  readonly operator: string;
  readonly at: string;
}

export function actOfRow({ text, ...rest }: ActRow): OperatorAct {
  return text === null ? rest : { ...rest, text };
}
