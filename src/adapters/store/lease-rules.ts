// How every store decides a lease request and judges a fenced write: one rule set for the memory,
// SQLite and PostgreSQL stores, each applying it inside its own transaction.
import { WarrantError } from "../../core/result.js";

/** A loop's lease row: its holder, fencing token and expiry (epoch ms). */
export interface HeldLease {
  readonly holder: string;
  readonly token: number;
  readonly expiresAt: number;
}

export type LeaseDecision =
  | { readonly kind: "refused" }
  /** The holder keeps its token: its writes stay valid. */
  | { readonly kind: "extend"; readonly token: number }
  /** A new holder (or a new lease after a release): the next token of the loop. */
  | { readonly kind: "take"; readonly token: number };

/**
 * `lastToken` is the greatest token ever granted for the loop (0 for none): a taken lease gets the
 * next one, so a token is never granted twice and a takeover always makes the old token stale.
 */
export function decideLease(
  current: HeldLease | undefined,
  lastToken: number,
  holder: string,
  nowMs: number,
): LeaseDecision {
  if (current !== undefined && current.holder === holder) {
    return { kind: "extend", token: current.token };
  }
  if (current !== undefined && current.expiresAt > nowMs) return { kind: "refused" };
  return { kind: "take", token: Math.max(lastToken, current?.token ?? 0) + 1 };
}

/** A fencing token is a positive safe integer; anything else is a caller bug. */
export function assertToken(token: unknown): void {
  if (typeof token !== "number" || !Number.isSafeInteger(token) || token < 1) {
    throw new WarrantError(
      "store/batch-invalid",
      `a fencing token is a positive integer, got ${String(token)}`,
    );
  }
}

/**
 * Whether a lease holder belongs to a registered worker: the holder is the worker's id, or one of
 * its drives named `<worker id>/<drive>` (a holder per drive, so two drives of one worker never
 * share a lease or a token).
 */
export function heldBy(holder: string, workerId: string): boolean {
  return holder === workerId || holder.startsWith(`${workerId}/`);
}

/** The refusal of a write whose token is not the loop's current one. */
export function leaseLost(
  query: string,
  token: number,
  current: { readonly holder: string; readonly token: number } | undefined,
): WarrantError {
  const now =
    current === undefined
      ? "no lease is held"
      : `the lease is now held by ${current.holder} under token ${current.token}`;
  return new WarrantError(
    "store/lease-lost",
    `loop ${query}: a write under fencing token ${token} was refused: ${now}`,
  );
}
