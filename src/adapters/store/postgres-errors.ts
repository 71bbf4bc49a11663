// What PostgreSQL and the pg driver's errors mean to a store: which pass (and are retried), which
// are conflicts between writers, and the WarrantError each becomes.
import type { AppendOutcome } from "../../core/ports/ledger-store.js";
import { WarrantError } from "../../core/result.js";
import { chargeKeyConflictMessage } from "./batch.js";

/**
 * Serialization failure, deadlock, the server shutting down or starting up (admin, crash or fast
 * shutdown; "the database system is starting up"), a session ended for idling in a transaction
 * (`idle_in_transaction_session_timeout`, 25P03): the transaction was rolled back or never began.
 */
const TRANSIENT_SQLSTATES = new Set(["40001", "40P01", "57P01", "57P02", "57P03", "25P03"]);

/** Socket errors of a server that is restarting or a connection that was cut. */
const TRANSIENT_SOCKET_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "ECONNABORTED",
  "ENOTCONN",
]);

/** The pg driver reports a cut connection without a code. */
const TRANSIENT_DRIVER_MESSAGE =
  /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect/i;

/**
 * Whether an error of an open store may pass if the operation is tried again. Connection
 * exceptions (SQLSTATE class 08) included; a refused connection counts only once the store has
 * opened (a server that never answered is a wrong URI, reported at once).
 */
export function isTransientPgError(e: unknown): boolean {
  if (e instanceof WarrantError) return false;
  const code = (e as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") {
    if (TRANSIENT_SQLSTATES.has(code) || code.startsWith("08")) return true;
    if (TRANSIENT_SOCKET_CODES.has(code)) return true;
    return false;
  }
  return e instanceof Error && TRANSIENT_DRIVER_MESSAGE.test(e.message);
}

/** A unique violation on the facts table, as the conflict it stands for. */
export function constraintConflict(e: unknown, query: string): AppendOutcome | undefined {
  const err = e as { code?: unknown; constraint?: unknown };
  if (err.code !== "23505") return undefined;
  if (err.constraint === "warrant_facts_charge_key") {
    return { ok: false, conflict: "charge-key", message: chargeKeyConflictMessage(query) };
  }
  if (err.constraint === "warrant_facts_pkey") {
    return {
      ok: false,
      conflict: "sequence",
      message: `loop ${query} already has a fact at one of these sequences`,
    };
  }
  return undefined;
}

/** Driver errors become WarrantError with a store code and the password-free URI. */
export function mapPgError(e: unknown, uri: string): unknown {
  if (e instanceof WarrantError) return e;
  const code = (e as { code?: unknown } | undefined)?.code;
  const message = e instanceof Error ? e.message : String(e);
  if (code === "40001" || code === "40P01") {
    return new WarrantError("store/contention", `${uri}: ${message}`, { cause: e });
  }
  if (
    code === "ENOTFOUND" ||
    code === "3D000" ||
    code === "28000" ||
    code === "28P01" ||
    isTransientPgError(e)
  ) {
    return new WarrantError("store/unreachable", `cannot use PostgreSQL at ${uri}: ${message}`, {
      cause: e,
    });
  }
  return new WarrantError("store/io", `${uri}: ${message}`, { cause: e });
}
