// The audit of one stored loop, as `warrant loop check --store` and `warrant apply` run it: its raw
// rows and operator acts read from the store, then every check of the core's audit.
import { type AuditReport, auditLoop } from "../core/loop/audit.js";
import type { LedgerStore } from "../core/loop/ledger-store.js";
import type { Result } from "../core/result.js";

export interface StoredAuditOptions {
  /** The host public key (unpadded base64url) the loop must be vouched for by. */
  readonly key?: string;
  /** The projection is validated as of this instant (default: now). */
  readonly now?: Date;
}

/** Audit the loop `query` as it lies in `store`: hash chain, signed heads, records, acts, keys. */
export async function auditStoredLoop(
  store: LedgerStore,
  query: string,
  opts: StoredAuditOptions = {},
): Promise<Result<AuditReport>> {
  const [rows, acts] = await Promise.all([store.readRawLoop(query), store.readOperatorActs(query)]);
  return auditLoop({
    query,
    rows,
    acts,
    now: opts.now ?? new Date(),
    ...(opts.key === undefined ? {} : { expectedKey: opts.key }),
  });
}
