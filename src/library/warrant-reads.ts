// Reading the ledger, one facet of `createWarrant`: every loop with where it stands (driving,
// stuck, queued, failed, waiting, stopped), a loop's document and records, one record by its ref,
// and the approvals waited for.
import {
  heldQueryId,
  heldRecordRef,
  type QueryId,
  type RecordRef,
  type RunRef,
} from "../core/ids.js";
import type { QueuedJob } from "../core/ports/job-queue.js";
import type { LedgerRecord } from "../core/ports/ledger-store.js";
import { LoopLedger } from "../runtime/loop-ledger.js";
import type { NetworkReport } from "../runtime/records.js";
import type { Composition } from "./compose.js";
import { loopUsage } from "./loop-usage.js";
import { listPending, loopStatus, type PendingApproval, packPolicyReader } from "./pending.js";
import type {
  LoopListing,
  LoopStatus,
  LoopView,
  RunEgress,
  StoredRecord,
} from "./warrant-types.js";

export interface WarrantReads {
  loops(): Promise<LoopListing[]>;
  /** A loop's document and its records, or undefined when the store holds no such loop. */
  show(query: QueryId): Promise<LoopView | undefined>;
  /**
   * A record of the ledger (a run's ref is its proposal's record ref), with its ref and its loop's
   * query as the ids they are.
   */
  record(ref: RecordRef | RunRef): Promise<StoredRecord | undefined>;
  /** Every approval waited for across the loops of the store. */
  pending(): Promise<PendingApproval[]>;
}

/** The egress records of the run reports among `records`. */
function egressOf(records: readonly LedgerRecord[]): RunEgress[] {
  const out: RunEgress[] = [];
  for (const r of records) {
    if (r.kind !== "runReport") continue;
    const body = r.body as { "proposal/ref"?: unknown; network?: NetworkReport };
    if (typeof body.network !== "object" || body.network === null) continue;
    out.push({ "proposal/ref": String(body["proposal/ref"]), network: body.network });
  }
  return out;
}

export function createReads(c: Composition): WarrantReads {
  const { store } = c;
  return {
    async loops() {
      const now = c.clock.now();
      const policies = packPolicyReader();
      const leases = new Map((await store.leases()).map((l) => [l.query, l]));
      const jobs = c.hasQueue()
        ? new Map((await c.queue().jobs()).map((j) => [j.query, j]))
        : new Map<string, QueuedJob>();
      const rows: LoopListing[] = [];
      for (const l of await store.listLoops()) {
        const seen = await loopStatus(store, l.query, now, policies);
        if (seen === undefined) continue;
        const doc = seen.document;
        const lease = leases.get(l.query);
        const job = jobs.get(l.query);
        const status = statusOf(doc.state === "stopped", lease?.until, job, c.time.now());
        rows.push({
          query: heldQueryId(l.query),
          state: doc.state,
          ...(doc.stop === undefined ? {} : { stop: { reason: doc.stop.reason } }),
          status,
          ...(lease === undefined
            ? {}
            : { heldBy: lease.holder, leaseUntil: lease.until.toISOString() }),
          ...(seen.waiting === undefined ? {} : { waiting: seen.waiting }),
        });
      }
      return rows;
    },
    async show(query) {
      const loop = await new LoopLedger(store).document(query, c.clock.now());
      if (loop === undefined) return undefined;
      const stored = await store.listRecords(query);
      const records = stored.map((r) => ({ ref: heldRecordRef(r.ref), kind: r.kind }));
      const egress = egressOf(stored);
      const waiting =
        loop.state === "stopped"
          ? undefined
          : (await loopStatus(store, query, c.clock.now()))?.waiting;
      return {
        loop,
        records,
        usage: loopUsage(stored),
        ...(egress.length === 0 ? {} : { egress }),
        ...(waiting === undefined ? {} : { waiting }),
      };
    },
    async record(ref) {
      const r = await store.readRecord(ref);
      return r === undefined
        ? undefined
        : { ...r, ref: heldRecordRef(r.ref), query: heldQueryId(r.query) };
    },
    pending: () => listPending(store, c.clock.now()),
  };
}

/**
 * Who has an open loop in hand: a live lease drives it, an expired one left it stuck; without a
 * lease a job queues it (or failed, its attempts used up), and without a job it waits for an
 * operator. Leases bind processes: wall-clock time, not the loop's clock.
 */
function statusOf(
  stopped: boolean,
  leaseUntil: Date | undefined,
  job: QueuedJob | undefined,
  now: Date,
): LoopStatus {
  if (stopped) return "stopped";
  if (leaseUntil !== undefined) return leaseUntil.getTime() > now.getTime() ? "driving" : "stuck";
  if (job === undefined) return "waiting";
  return job.failed ? "failed" : "queued";
}
