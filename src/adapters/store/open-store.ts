// Opens the LedgerStore a URI names: SQLite (creating its folder), PostgreSQL or memory.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { LedgerStore } from "../../core/loop/ledger-store.js";
import { assertNever, WarrantError } from "../../core/result.js";
import { MemoryLedgerStore } from "./memory-ledger-store.js";
import { parseStoreUri } from "./store-uri.js";
import { type RetryOptions, storeRetryMs } from "./transient-retry.js";

export { DEFAULT_STORE_URI, redactStoreUri, resolveStoreUri } from "./store-uri.js";

export interface OpenStoreOptions {
  /** Base of a relative SQLite path (default: the process's working directory). */
  readonly cwd?: string;
  /** SQLite: how long to wait for another writer's lock, ms (default 10 000). */
  readonly busyTimeoutMs?: number;
  /** PostgreSQL: pool size (default 10). */
  readonly poolSize?: number;
  /**
   * How long an operation of the open store is retried after a transient error (PostgreSQL
   * restarting or a cut connection, SQLite busy past its timeout), in ms; 0: never. Default:
   * `WARRANT_STORE_RETRY_MS`, else 60 000.
   */
  readonly retryMs?: number;
  /** Told of each retried transient error. */
  readonly onRetry?: RetryOptions["onRetry"];
}

/**
 * Open and migrate the store at `uri`; a driver is loaded only for the store that needs it (the
 * PostgreSQL client is not loaded to open SQLite, nor SQLite's native module for PostgreSQL).
 * Throws WarrantError: `store/uri-invalid`,
 * `store/version-too-new`, `store/unreachable`, `store/unreadable`, `store/io`.
 */
export async function openStore(uri: string, opts: OpenStoreOptions = {}): Promise<LedgerStore> {
  const parsed = parseStoreUri(uri);
  if (!parsed.ok) {
    const p = parsed.errors[0];
    throw new WarrantError(p?.code ?? "store/uri-invalid", p?.message ?? "invalid store URI");
  }
  const where = parsed.value;
  const retry: RetryOptions = {
    windowMs: opts.retryMs ?? storeRetryMs(process.env),
    ...(opts.onRetry === undefined ? {} : { onRetry: opts.onRetry }),
  };
  switch (where.kind) {
    case "memory":
      return new MemoryLedgerStore();
    case "sqlite": {
      const file = path.resolve(opts.cwd ?? process.cwd(), where.path);
      try {
        mkdirSync(path.dirname(file), { recursive: true });
      } catch (e) {
        throw new WarrantError("store/io", `cannot create the folder for ${where.uri}`, {
          cause: e,
        });
      }
      const { openSqliteLedgerStore } = await import("./sqlite-ledger-store.js");
      return openSqliteLedgerStore(file, {
        uri: where.uri,
        retry,
        ...(opts.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: opts.busyTimeoutMs }),
      });
    }
    case "postgres": {
      const { openPostgresLedgerStore } = await import("./postgres-ledger-store.js");
      return openPostgresLedgerStore(where.connectionString, {
        uri: where.uri,
        retry,
        ...(where.schema === undefined ? {} : { schema: where.schema }),
        ...(opts.poolSize === undefined ? {} : { poolSize: opts.poolSize }),
      });
    }
    default:
      return assertNever(where, "store location");
  }
}
