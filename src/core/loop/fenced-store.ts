// A LedgerStore view for one drive under a lease: every append and record write of the loop carries
// the lease's fencing token, so the store refuses it once another driver has taken the loop.

import type { Fence } from "../ports/leases.js";
import type {
  AppendBatch,
  AppendOutcome,
  LedgerRecord,
  LedgerStore,
} from "../ports/ledger-store.js";
import { WarrantError } from "../result.js";

export interface FencedLedgerStore extends LedgerStore {
  readonly fence: Fence;
  /** Why writes are refused now, once the lease is lost; undefined while it holds. */
  readonly lost: WarrantError | undefined;
  /**
   * Refuse every later write here, without asking the store (the lease was lost in a way the store
   * cannot see: a renewal that failed). The first loss is kept.
   */
  revoke(reason: WarrantError): void;
}

/**
 * The view over `store` for `fence.query`. A write the store refuses with `store/lease-lost`
 * revokes the view and calls `onLost` once; a write of another loop is refused as a caller bug
 * (`store/batch-invalid`). Reads, operator acts and leases pass through; `close` leaves the
 * underlying store open (its owner closes it).
 */
export function fencedStore(
  store: LedgerStore,
  fence: Fence,
  onLost: (reason: WarrantError) => void = () => {},
): FencedLedgerStore {
  let lost: WarrantError | undefined;
  const revoke = (reason: WarrantError) => {
    if (lost !== undefined) return;
    lost = reason;
    onLost(reason);
  };
  const guarded = async <T>(write: () => Promise<T>): Promise<T> => {
    if (lost !== undefined) throw new WarrantError(lost.code, lost.message, { cause: lost });
    try {
      return await write();
    } catch (e) {
      if (e instanceof WarrantError && e.code === "store/lease-lost") revoke(e);
      throw e;
    }
  };
  const ownLoop = (query: string) => {
    if (query !== fence.query) {
      throw new WarrantError(
        "store/batch-invalid",
        `a drive of ${fence.query} cannot write to ${query}`,
      );
    }
  };
  return {
    fence,
    get lost() {
      return lost;
    },
    revoke,
    uri: store.uri,
    append: (batch: AppendBatch): Promise<AppendOutcome> =>
      guarded(async () => {
        ownLoop(batch.query);
        return store.append({ ...batch, fencingToken: fence.token });
      }),
    putRecords: (records: readonly LedgerRecord[]): Promise<void> =>
      guarded(async () => {
        for (const r of records) ownLoop(r.query);
        return store.putRecords(records, fence);
      }),
    readFacts: (query, afterSequence) => store.readFacts(query, afterSequence),
    readRecord: (ref) => store.readRecord(ref),
    listRecords: (query) => store.listRecords(query),
    listLoops: () => store.listLoops(),
    readRawLoop: (query) => store.readRawLoop(query),
    postOperatorAct: (act) => store.postOperatorAct(act),
    readOperatorActs: (query) => store.readOperatorActs(query),
    acquireLease: (query, holder, ttlMs, now) => store.acquireLease(query, holder, ttlMs, now),
    renewLease: (query, holder, token, ttlMs, now) =>
      store.renewLease(query, holder, token, ttlMs, now),
    releaseLease: (query, holder) => store.releaseLease(query, holder),
    leases: () => store.leases(),
    registerWorker: (worker) => store.registerWorker(worker),
    heartbeatWorker: (id, now) => store.heartbeatWorker(id, now),
    deregisterWorker: (id) => store.deregisterWorker(id),
    listWorkers: () => store.listWorkers(),
    pruneWorkers: (before) => store.pruneWorkers(before),
    readMemory: (key, passageRef) => store.readMemory(key, passageRef),
    ...(store.hostKey === undefined ? {} : { hostKey: store.hostKey.bind(store) }),
    ...(store.recordHostKey === undefined
      ? {}
      : { recordHostKey: store.recordHostKey.bind(store) }),
    appendMemory: (version, record) =>
      guarded(async () => {
        ownLoop(record.query);
        return store.appendMemory(version, record, fence);
      }),
    close: async () => {},
  };
}
