// The in-memory LedgerStore: the same rules as the SQL stores (sequence check, unique charge keys,
// records atomic with their facts, fenced writes, leases with fencing tokens, the worker registry),
// kept in maps. Nothing survives the process.

import type { ChangeFeed, FeedFact } from "../../core/ports/change-feed.js";
import type { Fence, LeaseGrant, LeaseInfo } from "../../core/ports/leases.js";
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
  WorkerRegistration,
} from "../../core/ports/ledger-store.js";
import {
  type MemoryKey,
  type MemoryRead,
  type MemoryVersion,
  memoryKeyText,
  memoryReadOf,
} from "../../core/records/memory-write.js";
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
import { assertToken, decideLease, type HeldLease, heldBy, leaseLost } from "./lease-rules.js";
import { assertMemoryShape } from "./memory-rows.js";

interface Worker {
  readonly registration: WorkerRegistration;
  readonly lastHeartbeat: number;
}

export class MemoryLedgerStore implements LedgerStore {
  readonly uri = "memory:";
  readonly #facts = new Map<string, StoredFact[]>();
  readonly #keys = new Map<string, Set<string>>();
  readonly #records = new Map<string, StoredRecord>();
  readonly #acts: OperatorAct[] = [];
  readonly #leases = new Map<string, HeldLease>();
  /** Per loop, the greatest fencing token granted: kept after a release, so none is reused. */
  readonly #lastTokens = new Map<string, number>();
  readonly #workers = new Map<string, Worker>();
  /** Writable agent memory: every version of each key, in order. */
  readonly #memory = new Map<string, MemoryVersion[]>();
  /** Every fact of every loop in append order: a fact's position is its index + 1. */
  readonly #feed: { readonly query: string; readonly fact: StoredFact }[] = [];
  /** Told after each append, record write and operator act. */
  readonly #watchers = new Set<() => void>();
  #hostKey: string | undefined;

  async hostKey(): Promise<string | undefined> {
    return this.#hostKey;
  }

  async recordHostKey(publicKey: string): Promise<string> {
    this.#hostKey ??= publicKey;
    return this.#hostKey;
  }

  #changed(): void {
    for (const w of this.#watchers) queueMicrotask(w);
  }

  changeFeed(): ChangeFeed {
    return {
      factsAfter: async (position, limit) =>
        this.#feed.slice(position, position + limit).map(
          (e, i): FeedFact => ({
            position: position + i + 1,
            query: e.query,
            fact: copyStoredFact(e.fact).fact,
          }),
        ),
      lastPosition: async () => this.#feed.length,
      watch: async (onChange) => {
        const w = () => onChange();
        this.#watchers.add(w);
        return async () => {
          this.#watchers.delete(w);
        };
      },
    };
  }

  async append(batch: AppendBatch): Promise<AppendOutcome> {
    assertBatchShape(batch);
    if (batch.fencingToken !== undefined) this.#checkFence(batch.query, batch.fencingToken);
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
    for (const f of stored) this.#feed.push({ query: batch.query, fact: copyStoredFact(f) });
    this.#changed();
    return { ok: true, stored };
  }

  async readFacts(query: string, afterSequence = 0): Promise<readonly StoredFact[]> {
    return (this.#facts.get(query) ?? []).slice(afterSequence).map(copyStoredFact);
  }

  async putRecords(records: readonly LedgerRecord[], fence?: Fence): Promise<void> {
    for (const r of records) assertRecordShape(r, fence?.query);
    if (fence !== undefined) this.#checkFence(fence.query, fence.token);
    const stored = toStoredRecords(records);
    for (const r of stored) this.#checkRecord(r);
    for (const r of stored) if (!this.#records.has(r.ref)) this.#records.set(r.ref, r);
    this.#changed();
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
    this.#changed();
    return { posted: true };
  }

  async readOperatorActs(query: string): Promise<readonly OperatorAct[]> {
    return this.#acts.filter((a) => a.query === query).map((a) => ({ ...a }));
  }

  async acquireLease(
    query: string,
    holder: string,
    ttlMs: number,
    now: Date,
  ): Promise<LeaseGrant | undefined> {
    const at = now.getTime();
    const decision = decideLease(
      this.#leases.get(query),
      this.#lastTokens.get(query) ?? 0,
      holder,
      at,
    );
    if (decision.kind === "refused") return undefined;
    this.#leases.set(query, { holder, token: decision.token, expiresAt: at + ttlMs });
    this.#lastTokens.set(query, Math.max(decision.token, this.#lastTokens.get(query) ?? 0));
    return { token: decision.token };
  }

  async renewLease(
    query: string,
    holder: string,
    token: number,
    ttlMs: number,
    now: Date,
  ): Promise<boolean> {
    const lease = this.#leases.get(query);
    if (lease?.holder !== holder || lease.token !== token) return false;
    this.#leases.set(query, { ...lease, expiresAt: now.getTime() + ttlMs });
    return true;
  }

  async releaseLease(query: string, holder: string): Promise<void> {
    if (this.#leases.get(query)?.holder === holder) this.#leases.delete(query);
  }

  async leases(): Promise<readonly LeaseInfo[]> {
    return [...this.#leases.entries()]
      .sort(([a], [b]) => compareBytes(a, b))
      .map(([query, l]) => ({
        query,
        holder: l.holder,
        token: l.token,
        until: new Date(l.expiresAt),
      }));
  }

  async registerWorker(worker: WorkerRegistration): Promise<void> {
    this.#workers.set(worker.id, {
      registration: { ...worker, started: new Date(worker.started) },
      lastHeartbeat: worker.started.getTime(),
    });
  }

  async heartbeatWorker(id: string, now: Date): Promise<boolean> {
    const w = this.#workers.get(id);
    if (w === undefined) return false;
    this.#workers.set(id, { ...w, lastHeartbeat: now.getTime() });
    return true;
  }

  async deregisterWorker(id: string): Promise<void> {
    this.#workers.delete(id);
  }

  async listWorkers(): Promise<readonly WorkerInfo[]> {
    const leases = await this.leases();
    return [...this.#workers.values()]
      .sort((a, b) => compareBytes(a.registration.id, b.registration.id))
      .map(({ registration: r, lastHeartbeat }) => ({
        id: r.id,
        host: r.host,
        pid: r.pid,
        started: new Date(r.started),
        lastHeartbeat: new Date(lastHeartbeat),
        loops: leases.filter((l) => heldBy(l.holder, r.id)).map((l) => l.query),
      }));
  }

  async pruneWorkers(before: Date): Promise<readonly string[]> {
    const gone = [...this.#workers.values()]
      .filter((w) => w.lastHeartbeat < before.getTime())
      .map((w) => w.registration.id)
      .sort(compareBytes);
    for (const id of gone) this.#workers.delete(id);
    return gone;
  }

  async readMemory(key: MemoryKey, passageRef: string): Promise<MemoryRead> {
    return memoryReadOf(this.#memory.get(memoryKeyText(key)) ?? [], passageRef);
  }

  async appendMemory(
    version: MemoryVersion,
    record: LedgerRecord,
    fence?: Fence,
  ): Promise<boolean> {
    assertMemoryShape(version, record);
    if (fence !== undefined) this.#checkFence(fence.query, fence.token);
    const [stored] = toStoredRecords([record]);
    if (stored !== undefined) this.#checkRecord(stored);
    const text = memoryKeyText(version.key);
    const versions = this.#memory.get(text) ?? [];
    if (version.version !== versions.length + 1) {
      const at = versions[version.version - 1];
      return (
        at !== undefined &&
        at.passageRef === version.passageRef &&
        at.ordinal === version.ordinal &&
        at.digest === version.digest &&
        at.query === version.query
      );
    }
    this.#memory.set(text, [...versions, structuredClone(version)]);
    if (stored !== undefined && !this.#records.has(stored.ref))
      this.#records.set(stored.ref, stored);
    return true;
  }

  async close(): Promise<void> {}

  /** Throws `store/lease-lost` unless the loop's lease is held under `token`. */
  #checkFence(query: string, token: number): void {
    assertToken(token);
    const lease = this.#leases.get(query);
    if (lease?.token !== token) throw leaseLost(query, token, lease);
  }

  #checkRecord(r: StoredRecord): void {
    const old = this.#records.get(r.ref);
    if (old !== undefined && !sameRecord(old, r)) throw recordConflict(r.ref);
  }
}

function copyStoredFact(s: StoredFact): StoredFact {
  return { fact: structuredClone(s.fact), chargeKey: s.chargeKey, hash: s.hash };
}
