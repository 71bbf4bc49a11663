// A small in-memory LedgerStore for the loop tests: enforces the expected sequence and the unique
// charge key exactly as the real stores must, and can run a hook before an append (a rival writer).
import { chainHash, GENESIS_HASH } from "../../src/core/loop/chain.js";
import { chargeKeyOf } from "../../src/core/loop/types.js";
import type { LeaseGrant, LeaseInfo } from "../../src/core/ports/leases.js";
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
  WorkerInfo,
} from "../../src/core/ports/ledger-store.js";
import type { MemoryRead } from "../../src/core/records/memory-write.js";

export class FakeStore implements LedgerStore {
  readonly uri = "memory:";
  readonly loops = new Map<string, StoredFact[]>();
  readonly records = new Map<string, LedgerRecord>();
  appends = 0;
  reads = 0;
  /** Runs once before the next append decides (to simulate another writer racing). */
  beforeAppend: (() => Promise<void>) | undefined;

  async append(batch: AppendBatch): Promise<AppendOutcome> {
    const hook = this.beforeAppend;
    this.beforeAppend = undefined;
    if (hook !== undefined) await hook();
    this.appends += 1;
    const rows = this.loops.get(batch.query) ?? [];
    if (rows.length !== batch.expectedLastSequence) {
      return { ok: false, conflict: "sequence", message: "another writer appended first" };
    }
    const keys = new Set(rows.map((r) => r.chargeKey));
    let prev = rows.at(-1)?.hash ?? GENESIS_HASH;
    const stored: StoredFact[] = [];
    for (const fact of batch.facts) {
      const chargeKey = chargeKeyOf(fact.step);
      if (keys.has(chargeKey)) {
        return { ok: false, conflict: "charge-key", message: `duplicate ${chargeKey}` };
      }
      keys.add(chargeKey);
      prev = chainHash(prev, fact);
      stored.push({ fact, chargeKey, hash: prev });
    }
    this.loops.set(batch.query, [...rows, ...stored]);
    for (const r of batch.records ?? []) this.records.set(r.ref, r);
    return { ok: true, stored };
  }
  async readFacts(query: string, afterSequence = 0): Promise<readonly StoredFact[]> {
    this.reads += 1;
    return (this.loops.get(query) ?? []).filter((r) => r.fact.sequence > afterSequence);
  }
  async putRecords(records: readonly LedgerRecord[]): Promise<void> {
    for (const r of records) this.records.set(r.ref, r);
  }
  async readRecord(ref: string): Promise<LedgerRecord | undefined> {
    return this.records.get(ref);
  }
  async listRecords(query: string): Promise<readonly LedgerRecord[]> {
    return [...this.records.values()].filter((r) => r.query === query);
  }
  async listLoops(): Promise<readonly LoopSummary[]> {
    return [...this.loops].map(([query, rows]) => ({ query, lastSequence: rows.length }));
  }
  async readRawLoop(_query: string): Promise<RawLoop> {
    return { facts: [], records: [] };
  }
  async postOperatorAct(_act: OperatorAct): Promise<PostedAct> {
    return { posted: true };
  }
  async readOperatorActs(_query: string): Promise<readonly OperatorAct[]> {
    return [];
  }
  async acquireLease(): Promise<LeaseGrant> {
    return { token: 1 };
  }
  async renewLease(): Promise<boolean> {
    return true;
  }
  async releaseLease(): Promise<void> {}
  async leases(): Promise<readonly LeaseInfo[]> {
    return [];
  }
  async registerWorker(): Promise<void> {}
  async heartbeatWorker(): Promise<boolean> {
    return true;
  }
  async deregisterWorker(): Promise<void> {}
  async listWorkers(): Promise<readonly WorkerInfo[]> {
    return [];
  }
  async pruneWorkers(): Promise<readonly string[]> {
    return [];
  }
  async readMemory(): Promise<MemoryRead> {
    return { seen: undefined, latest: undefined, written: [] };
  }
  async appendMemory(): Promise<boolean> {
    return false;
  }
  async close(): Promise<void> {}
}
