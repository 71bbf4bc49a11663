// The host's signature on everything a drive writes: a LedgerStore that signs every record it is
// given with the host's signer (a record already signed keeps its signature), pins the host's public
// key in a record appended with the loop's opening, and signs the chain head (sequence, hash, time)
// after every conclusion and cancellation it appends and whenever the drive stops or blocks
// (`sealHead`). `warrant loop check` verifies all of it against the pinned key. Every other method
// (reads, leases, fences, workers) is the inner store's own.
import type {
  AppendBatch,
  LedgerRecord,
  LedgerStore,
  StoredFact,
} from "../core/loop/ledger-store.js";
import type { Clock } from "../core/ports.js";
import {
  type HeadReason,
  headRecord,
  hostKeyRecord,
  hostSignerOf,
  type SigningKey,
} from "../core/records/host-records.js";
import type { MemoryVersion } from "../core/records/memory-write.js";

export interface SigningLedgerStore extends LedgerStore {
  /** Signs the loop's current chain head (nothing when the loop has no fact). */
  sealHead(query: string, reason: HeadReason): Promise<void>;
}

export function signingStore(
  inner: LedgerStore,
  key: SigningKey,
  clock: Clock,
): SigningLedgerStore {
  const signer = hostSignerOf(key);
  const signedRecords = (records: readonly LedgerRecord[]): Promise<LedgerRecord[]> =>
    Promise.all(
      records.map(async (r) => {
        const body = r.body as Record<string, unknown> | null;
        if (typeof body !== "object" || body === null || body.signature !== undefined) return r;
        // The signed body is a new text: the unsigned one the producer made is not kept.
        const { text: _unsigned, ...record } = r;
        return { ...record, body: await signer.sign(body) };
      }),
    );
  const seal = async (query: string, head: StoredFact, reason: HeadReason) => {
    const at = clock.now().toISOString();
    await inner.putRecords([
      await headRecord(query, { sequence: head.fact.sequence, hash: head.hash }, reason, key, at),
    ]);
  };
  const overrides = {
    async append(batch: AppendBatch) {
      const records = await signedRecords(batch.records ?? []);
      if (batch.facts.some((f) => f.step.kind === "opened")) {
        records.push(await hostKeyRecord(batch.query, key, clock.now().toISOString()));
      }
      const outcome = await inner.append({ ...batch, records });
      if (!outcome.ok) return outcome;
      const last = outcome.stored.at(-1);
      const kinds = outcome.stored.map((s) => s.fact.step.kind);
      if (last !== undefined && (kinds.includes("concluded") || kinds.includes("cancelled"))) {
        await seal(batch.query, last, kinds.includes("cancelled") ? "stop" : "conclusion");
      }
      return outcome;
    },
    async putRecords(records: readonly LedgerRecord[], ...rest: unknown[]) {
      const put = inner.putRecords as (
        r: readonly LedgerRecord[],
        ...a: unknown[]
      ) => Promise<void>;
      await put.call(inner, await signedRecords(records), ...rest);
    },
    async appendMemory(version: MemoryVersion, record: LedgerRecord, ...rest: unknown[]) {
      const put = inner.appendMemory as (
        v: MemoryVersion,
        r: LedgerRecord,
        ...a: unknown[]
      ) => Promise<boolean>;
      const [signedRecord] = await signedRecords([record]);
      return put.call(inner, version, signedRecord as LedgerRecord, ...rest);
    },
    async sealHead(query: string, reason: HeadReason) {
      const last = (await inner.readFacts(query)).at(-1);
      if (last !== undefined) await seal(query, last, reason);
    },
  };
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop as keyof typeof overrides];
      const v = Reflect.get(target, prop, receiver) as unknown;
      // Methods run on the inner store itself (its private fields are not on the proxy).
      return typeof v === "function" ? v.bind(target) : v;
    },
  }) as SigningLedgerStore;
}
