// Opens the LedgerStore a URI names: SQLite (creating the file and its folder only as allowed),
// PostgreSQL or memory.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { LedgerStore } from "../../core/ports/ledger-store.js";
import { assertNever, WarrantError } from "../../core/result.js";
import { MemoryLedgerStore } from "./memory-ledger-store.js";
import { nearbyLedger, sqliteUriFor } from "./nearby-ledger.js";
import { parseStoreUri } from "./store-uri.js";
import { type RetryOptions, storeRetryMs } from "./transient-retry.js";

export { DEFAULT_STORE_URI, redactStoreUri, resolveStoreUri } from "./store-uri.js";

/**
 * What opening a SQLite path that does not exist may create: `true` the file and any missing
 * folder; `"inside-cwd"` the file, and missing folders only inside `cwd` (a folder elsewhere must
 * exist: `store/folder-missing`); `false` nothing (`store/not-found`, naming the ledger the path
 * probably meant when one is near).
 */
export type StoreCreation = boolean | "inside-cwd";

export interface OpenStoreOptions {
  /** SQLite: what may be created when the file is not there (default true). */
  readonly create?: StoreCreation;
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
 * Throws WarrantError: `store/uri-invalid`, `store/not-found`, `store/folder-missing`,
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
      const cwd = opts.cwd ?? process.cwd();
      const file = path.resolve(cwd, where.path);
      if (!existsSync(file)) prepareNewFile(where.uri, file, cwd, opts.create ?? true);
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

function inside(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

function notFound(uri: string, file: string, cwd: string): WarrantError {
  const meant = nearbyLedger(file, cwd);
  const hint =
    meant === undefined
      ? "; `warrant run` or `warrant demo` creates a store"
      : `; did you mean ${sqliteUriFor(meant, cwd)}?`;
  return new WarrantError("store/not-found", `no ledger at ${uri} (${file})${hint}`);
}

/**
 * Throws `store/not-found` (or `store/uri-invalid`) when `uri` names a SQLite file that is not
 * there; other stores are not looked at. Opens nothing, creates nothing.
 */
export function assertStoreExists(uri: string, opts: Pick<OpenStoreOptions, "cwd"> = {}): void {
  const parsed = parseStoreUri(uri);
  if (!parsed.ok) {
    const p = parsed.errors[0];
    throw new WarrantError(p?.code ?? "store/uri-invalid", p?.message ?? "invalid store URI");
  }
  if (parsed.value.kind !== "sqlite") return;
  const cwd = opts.cwd ?? process.cwd();
  const file = path.resolve(cwd, parsed.value.path);
  if (!existsSync(file)) throw notFound(parsed.value.uri, file, cwd);
}

/** Refuses a new SQLite file `create` does not allow, or makes the folder it will be made in. */
function prepareNewFile(uri: string, file: string, cwd: string, create: StoreCreation): void {
  if (create === false) throw notFound(uri, file, cwd);
  const dir = path.dirname(file);
  if (existsSync(dir)) return;
  if (create === "inside-cwd" && !inside(path.resolve(cwd), dir)) {
    throw new WarrantError(
      "store/folder-missing",
      `the folder ${dir} of ${uri} does not exist; folders are created only inside the current ` +
        `folder (${path.resolve(cwd)}): create it first (mkdir -p ${dir})`,
    );
  }
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new WarrantError("store/io", `cannot create the folder for ${uri}`, { cause: e });
  }
}
