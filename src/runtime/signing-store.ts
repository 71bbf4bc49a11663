// The host's signature on everything a drive or an operator writes: a LedgerStore that signs every
// record it is given with the host's signer (a record already signed keeps its signature), pins the
// host's public key in a record appended with the loop's opening, signs each operator act before
// posting it (an `actSignature` record), and signs the chain head (sequence, hash, acts that count,
// time) with every conclusion, stop (cancellation) and renewal it appends (in the same append),
// after every act it posts, and whenever a drive stops or blocks (`sealHead`) — never per charge. `warrant loop check`
// verifies all of it against the pinned key. Every other method (reads, leases, fences, workers) is
// the inner store's own.

import { chainHash, GENESIS_HASH } from "../core/loop/chain.js";
import type {
  AppendBatch,
  LedgerRecord,
  LedgerStore,
  OperatorAct,
  StoredFact,
} from "../core/ports/ledger-store.js";
import type { Clock } from "../core/ports/time.js";
import {
  actSignatureRecord,
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
  // The acts are read after the facts the head names: a head never counts an act it did not see.
  const seal = async (query: string, head: StoredFact, reason: HeadReason) => {
    const acts = (await inner.readOperatorActs(query)).length;
    const at = clock.now().toISOString();
    const covered = { sequence: head.fact.sequence, hash: head.hash, acts };
    await inner.putRecords([await headRecord(query, covered, reason, key, at)]);
  };
  /**
   * The head of a batch that concludes a run, stops the loop or renews it, signed over the hash
   * the batch's last fact will have (the chain is deterministic): stored in the same transaction
   * as the facts, so no crash can leave such a fact without its head. Undefined for other batches,
   * and when the fact the batch expects to follow is not there (the append will be refused).
   */
  const headOf = async (batch: AppendBatch): Promise<LedgerRecord | undefined> => {
    const kinds = batch.facts.map((f) => f.step.kind);
    const reason: HeadReason | undefined = kinds.includes("cancelled")
      ? "stop"
      : kinds.includes("concluded")
        ? "conclusion"
        : kinds.includes("renewed")
          ? "act"
          : undefined;
    const last = batch.facts.at(-1);
    if (reason === undefined || last === undefined) return undefined;
    const expected = batch.expectedLastSequence;
    const [previous, acts] = await Promise.all([
      expected === 0 ? undefined : inner.readFacts(batch.query, expected - 1),
      inner.readOperatorActs(batch.query),
    ]);
    let hash = GENESIS_HASH;
    if (expected > 0) {
      const before = previous?.[0];
      if (before?.fact.sequence !== expected) return undefined;
      hash = before.hash;
    }
    for (const f of batch.facts) hash = chainHash(hash, f);
    const covered = { sequence: last.sequence, hash, acts: acts.length };
    return headRecord(batch.query, covered, reason, key, clock.now().toISOString());
  };
  const sealLast = async (query: string, reason: HeadReason) => {
    const last = (await inner.readFacts(query)).at(-1);
    if (last !== undefined) await seal(query, last, reason);
  };
  const overrides = {
    async append(batch: AppendBatch) {
      const records = await signedRecords(batch.records ?? []);
      if (batch.facts.some((f) => f.step.kind === "opened")) {
        records.push(await hostKeyRecord(batch.query, key, clock.now().toISOString()));
      }
      const head = await headOf(batch);
      if (head !== undefined) records.push(head);
      return inner.append({ ...batch, records });
    },
    // Signed before it is posted, so an act never counts unsigned; an act that loses its target to
    // another leaves a signature nothing names, which the audit ignores.
    async postOperatorAct(act: OperatorAct) {
      await inner.putRecords([await actSignatureRecord(act, key)]);
      const posted = await inner.postOperatorAct(act);
      if (posted.posted) await sealLast(act.query, "act");
      return posted;
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
    sealHead: sealLast,
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
