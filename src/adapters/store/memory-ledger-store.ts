// The in-memory LedgerStore: the same rules as the SQL stores (sequence check, unique charge keys,
// records atomic with their facts), kept in maps. Nothing survives the process.
import type {
  AppendBatch,
  AppendOutcome,
  LedgerRecord,
  LedgerStore,
  LoopSummary,
  OperatorAct,
  PostedAct,
  RawLoop,
  StoredFact,
} from "../../core/loop/ledger-store.js";
import {
  assertBatchShape,
  assertRecordShape,
  chainFacts,
  chargeKeyConflictMessage,
  compareBytes,
  fromStoredRecord,
  recordConflict,
  repeatedChargeKey,
  type StoredRecord,
  sameRecord,
  sequenceConflictMessage,
  storedText,
  toStoredRecords,
} from "./batch.js";

interface Lease {
  readonly holder: string;
  readonly expiresAt: number;
}

export class MemoryLedgerStore implements LedgerStore {
  readonly uri = "memory:";
  readonly #facts = new Map<string, StoredFact[]>();
  readonly #keys = new Map<string, Set<string>>();
  readonly #records = new Map<string, StoredRecord>();
  readonly #acts: OperatorAct[] = [];
  readonly #leases = new Map<string, Lease>();

  async append(batch: AppendBatch): Promise<AppendOutcome> {
    assertBatchShape(batch);
    const existing = this.#facts.get(batch.query) ?? [];
    if (existing.length !== batch.expectedLastSequence) {
      return {
        ok: false,
        conflict: "sequence",
        message: sequenceConflictMessage(batch.query, batch.expectedLastSequence, existing.length),
      };
    }
    const stored = chainFacts(existing.at(-1)?.hash, batch.facts);
    const keys = this.#keys.get(batch.query) ?? new Set<string>();
    const taken = stored.find((s) => keys.has(s.chargeKey))?.chargeKey ?? repeatedChargeKey(stored);
    if (taken !== undefined) {
      return {
        ok: false,
        conflict: "charge-key",
        message: chargeKeyConflictMessage(batch.query, taken),
      };
    }
    // Everything that can refuse or throw happens before the first mutation.
    const records = toStoredRecords(batch.records ?? []);
    for (const r of records) this.#checkRecord(r);
    for (const r of records) if (!this.#records.has(r.ref)) this.#records.set(r.ref, r);
    for (const s of stored) keys.add(s.chargeKey);
    this.#keys.set(batch.query, keys);
    this.#facts.set(batch.query, [...existing, ...stored.map(copyStoredFact)]);
    return { ok: true, stored };
  }

  async readFacts(query: string, afterSequence = 0): Promise<readonly StoredFact[]> {
    return (this.#facts.get(query) ?? []).slice(afterSequence).map(copyStoredFact);
  }

  async putRecords(records: readonly LedgerRecord[]): Promise<void> {
    for (const r of records) assertRecordShape(r);
    const stored = toStoredRecords(records);
    for (const r of stored) this.#checkRecord(r);
    for (const r of stored) if (!this.#records.has(r.ref)) this.#records.set(r.ref, r);
  }

  async readRecord(ref: string): Promise<LedgerRecord | undefined> {
    const r = this.#records.get(ref);
    return r === undefined ? undefined : fromStoredRecord(r);
  }

  async listRecords(query: string): Promise<readonly LedgerRecord[]> {
    return [...this.#records.values()].filter((r) => r.query === query).map(fromStoredRecord);
  }

  async listLoops(): Promise<readonly LoopSummary[]> {
    return [...this.#facts.entries()]
      .map(([query, facts]) => ({ query, lastSequence: facts.length }))
      .sort((a, b) => compareBytes(a.query, b.query));
  }

  async readRawLoop(query: string): Promise<RawLoop> {
    return {
      facts: (this.#facts.get(query) ?? []).map((s) => ({
        sequence: s.fact.sequence,
        chargeKey: s.chargeKey,
        kind: s.fact.step.kind,
        text: storedText(s.fact),
        hash: s.hash,
      })),
      records: [...this.#records.values()]
        .filter((r) => r.query === query)
        .map((r) => ({ ref: r.ref, kind: r.kind, query: r.query, text: r.body })),
    };
  }

  async postOperatorAct(act: OperatorAct): Promise<PostedAct> {
    const counting = this.#acts.find((a) => a.query === act.query && a.target === act.target);
    if (counting !== undefined) return { posted: false, counting: { ...counting } };
    this.#acts.push({ ...act });
    return { posted: true };
  }

  async readOperatorActs(query: string): Promise<readonly OperatorAct[]> {
    return this.#acts.filter((a) => a.query === query).map((a) => ({ ...a }));
  }

  async acquireLease(query: string, holder: string, ttlMs: number, now: Date): Promise<boolean> {
    const lease = this.#leases.get(query);
    const at = now.getTime();
    if (lease !== undefined && lease.holder !== holder && lease.expiresAt > at) return false;
    this.#leases.set(query, { holder, expiresAt: at + ttlMs });
    return true;
  }

  async releaseLease(query: string, holder: string): Promise<void> {
    if (this.#leases.get(query)?.holder === holder) this.#leases.delete(query);
  }

  async close(): Promise<void> {}

  #checkRecord(r: StoredRecord): void {
    const old = this.#records.get(r.ref);
    if (old !== undefined && !sameRecord(old, r)) throw recordConflict(r.ref);
  }
}

function copyStoredFact(s: StoredFact): StoredFact {
  return { fact: structuredClone(s.fact), chargeKey: s.chargeKey, hash: s.hash };
}
