// A ledger store opened to be read alone (an audit, say), or only looked for: a SQLite path that
// does not exist is refused (`store/not-found`), never created.
import {
  assertStoreExists,
  type OpenStoreOptions,
  openStore,
} from "../adapters/store/open-store.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";

export function openLedgerToRead(
  uri: string,
  options: Omit<OpenStoreOptions, "create"> = {},
): Promise<LedgerStore> {
  return openStore(uri, { ...options, create: false });
}

/** Throws `store/not-found` when `uri` names a SQLite file that is not there; creates nothing. */
export function requireExistingStore(uri: string, cwd?: string): void {
  assertStoreExists(uri, cwd === undefined ? {} : { cwd });
}
