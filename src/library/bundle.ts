// `warrant export QUERY --bundle` as a library call: the loop's rows, acts and document at one
// instant, exported under a head signed for the export when this host holds the store's key
// (never making one), else under the latest head stored.
import { type LoopBundle, makeBundle } from "../core/loop/bundle.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import { headRecord } from "../core/records/host-records.js";
import { WarrantError } from "../core/result.js";
import { LoopLedger } from "../runtime/loop-ledger.js";
import { type StoreKeyOptions, storeHostKey } from "./store-key.js";

export interface BundleOptions extends Omit<StoreKeyOptions, "create"> {
  /** The export's instant (default: now). */
  readonly now?: Date;
}

/** The audit bundle of `query`; undefined when the store holds no such loop. */
export async function exportBundle(
  store: LedgerStore,
  query: string,
  o: BundleOptions = {},
): Promise<LoopBundle | undefined> {
  const now = o.now ?? new Date();
  const [rows, acts, doc] = await Promise.all([
    store.readRawLoop(query),
    store.readOperatorActs(query),
    new LoopLedger(store).document(query, now),
  ]);
  const last = rows.facts.at(-1);
  if (doc === undefined || last === undefined) return undefined;
  const key = await storeHostKey(store, { ...o, create: false }).catch((e: unknown) => {
    // A store signed with a key this host does not hold is exported under its latest stored head.
    if (e instanceof WarrantError && e.code === "runtime/host-key-missing") return undefined;
    throw e;
  });
  const head =
    key === undefined
      ? undefined
      : await headRecord(
          query,
          { sequence: last.sequence, hash: last.hash, acts: acts.length },
          "export",
          key.secret,
          now.toISOString(),
        );
  return makeBundle(query, rows, acts, doc, now, head);
}
