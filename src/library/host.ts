// What the library reads from the host it runs on: who acts (the operator binding), who drives (a
// lease holder unique to this process), how long a lease lasts, which host key signs a store.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import type { RecordSigner } from "../core/ports/signer.js";
import { WarrantError } from "../core/result.js";
import { DEFAULT_LEASE_TTL_MS } from "../runtime/drive-defaults.js";
import { keySigner } from "../runtime/records.js";
import { defaultOperatorBinding } from "./operators.js";
import { type StoreKeyOptions, storeHostKey } from "./store-key.js";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * `node-operator-binding:<name>`: the operator acting for this host, `$WARRANT_OPERATOR` (refused
 * with `operator/name-invalid` when it is not a name), else the login name.
 */
export function operatorBinding(env: Env = process.env): string {
  return defaultOperatorBinding(env);
}

/** `host:pid:random`: unique to this process and call. */
export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
}

/** The lease's time to live: `WARRANT_LEASE_TTL_MS`, else 10 s. */
export function leaseTtlMs(env: Env = process.env): number {
  const n = Number(env.WARRANT_LEASE_TTL_MS);
  return Number.isSafeInteger(n) && n > 0 ? n : DEFAULT_LEASE_TTL_MS;
}

/** The signer of the store's host key, kept in this host's key folder (created on first use). */
export async function hostKeySigner(
  store: LedgerStore,
  o: Omit<StoreKeyOptions, "create"> = {},
): Promise<RecordSigner> {
  const key = await storeHostKey(store, { ...o, create: true });
  if (key === undefined)
    throw new WarrantError("internal/unreachable", "a key is created when none is found");
  return keySigner(key.secret);
}
