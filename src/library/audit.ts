// The audit of one stored loop, as `warrant loop check --store` and `warrant apply` run it: its raw
// rows and operator acts read from the store, then every check of the core's audit, against the
// keys the caller trusts (by default this host's trusted-keys file, when there is one).
import { type AuditReport, auditLoop, type TrustAnchor } from "../core/loop/audit.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import type { Result } from "../core/result.js";
import { defaultTrustedKeys } from "./trusted-keys.js";

export interface StoredAuditOptions {
  /** The host public key (unpadded base64url) the loop must be vouched for by. */
  readonly key?: string;
  /**
   * Keys trusted from outside the store; default: this host's trusted-keys file when it exists
   * (`false`: none, the loop's own key is taken as found). Ignored when `key` is given.
   */
  readonly trusted?: TrustAnchor | false;
  /** Refuse a loop whose key no trusted key pins (`audit/key-not-pinned`). */
  readonly requirePinned?: boolean;
  /** The projection is validated as of this instant (default: now). */
  readonly now?: Date;
}

/** The trust anchor of an audit: `key`, else `trusted`, else the host's trusted-keys file. */
export function trustOf(
  opts: Pick<StoredAuditOptions, "key" | "trusted">,
): TrustAnchor | undefined {
  if (opts.key !== undefined) return { keys: [opts.key], source: "--key" };
  if (opts.trusted === false) return undefined;
  return opts.trusted ?? defaultTrustedKeys();
}

/** Audit the loop `query` as it lies in `store`: hash chain, signed heads, records, acts, keys. */
export async function auditStoredLoop(
  store: LedgerStore,
  query: string,
  opts: StoredAuditOptions = {},
): Promise<Result<AuditReport>> {
  const [rows, acts] = await Promise.all([store.readRawLoop(query), store.readOperatorActs(query)]);
  const trusted = trustOf(opts);
  return auditLoop({
    query,
    rows,
    acts,
    now: opts.now ?? new Date(),
    ...(trusted === undefined ? {} : { trusted }),
    ...(opts.requirePinned === true ? { requirePinned: true } : {}),
  });
}
