// The host's signature on everything a drive writes: a LedgerStore that signs every record it is
// given with the host key (a record already signed keeps its signature), pins the host's public key
// in a record appended with the loop's opening, and signs the chain head (sequence, hash, time)
// after every conclusion and cancellation it appends and whenever the drive stops or blocks
// (`sealHead`). `warrant loop check` verifies all of it against the pinned key.
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
} from "../core/loop/ledger-store.js";
import type { Clock } from "../core/ports.js";
import { type HeadReason, headRecord, hostKeyRecord } from "../core/records/host-records.js";
import { signRecord } from "../core/records/signature.js";

export interface SigningLedgerStore extends LedgerStore {
  /** Signs the loop's current chain head (nothing when the loop has no fact). */
  sealHead(query: string, reason: HeadReason): Promise<void>;
}

async function signedRecords(
  records: readonly LedgerRecord[],
  key: Uint8Array,
): Promise<LedgerRecord[]> {
  return Promise.all(
    records.map(async (r) => {
      const body = r.body as Record<string, unknown> | null;
      if (typeof body !== "object" || body === null || body.signature !== undefined) return r;
      return { ...r, body: await signRecord(body, key) };
    }),
  );
}

export function signingStore(
  inner: LedgerStore,
  hostKey: Uint8Array,
  clock: Clock,
): SigningLedgerStore {
  const seal = async (query: string, head: StoredFact, reason: HeadReason) => {
    const at = clock.now().toISOString();
    await inner.putRecords([
      await headRecord(
        query,
        { sequence: head.fact.sequence, hash: head.hash },
        reason,
        hostKey,
        at,
      ),
    ]);
  };
  return {
    get uri() {
      return inner.uri;
    },
    async append(batch: AppendBatch): Promise<AppendOutcome> {
      const records = await signedRecords(batch.records ?? [], hostKey);
      if (batch.facts.some((f) => f.step.kind === "opened")) {
        records.push(await hostKeyRecord(batch.query, hostKey, clock.now().toISOString()));
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
    async putRecords(records: readonly LedgerRecord[]): Promise<void> {
      await inner.putRecords(await signedRecords(records, hostKey));
    },
    async sealHead(query: string, reason: HeadReason): Promise<void> {
      const last = (await inner.readFacts(query)).at(-1);
      if (last !== undefined) await seal(query, last, reason);
    },
    readFacts: (query: string, after?: number): Promise<readonly StoredFact[]> =>
      inner.readFacts(query, after),
    readRecord: (ref: string): Promise<LedgerRecord | undefined> => inner.readRecord(ref),
    listRecords: (query: string): Promise<readonly LedgerRecord[]> => inner.listRecords(query),
    listLoops: (): Promise<readonly LoopSummary[]> => inner.listLoops(),
    readRawLoop: (query: string): Promise<RawLoop> => inner.readRawLoop(query),
    postOperatorAct: (act: OperatorAct): Promise<PostedAct> => inner.postOperatorAct(act),
    readOperatorActs: (query: string): Promise<readonly OperatorAct[]> =>
      inner.readOperatorActs(query),
    acquireLease: (query: string, holder: string, ttlMs: number, now: Date) =>
      inner.acquireLease(query, holder, ttlMs, now),
    releaseLease: (query: string, holder: string) => inner.releaseLease(query, holder),
    close: () => inner.close(),
  };
}
