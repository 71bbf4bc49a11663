// `warrant/postgres`: the PostgreSQL store and the job queue its workers share. `pg` loads when a
// store opens and graphile-worker when a loop is dispatched or a worker starts, never on import.
import { type GraphileJobQueue, graphileJobQueue } from "./adapters/queue/graphile-job-queue.js";
import { openStore } from "./adapters/store/open-store.js";
import { parseStoreUri } from "./adapters/store/store-uri.js";
import type { LedgerStore } from "./core/ports/ledger-store.js";
import { WarrantError } from "./core/result.js";

export type { GraphileJobQueue } from "./adapters/queue/graphile-job-queue.js";

function postgresLocation(uri: string) {
  const parsed = parseStoreUri(uri);
  if (!parsed.ok || parsed.value.kind !== "postgres")
    throw new WarrantError(
      "store/uri-invalid",
      "a PostgreSQL store URI is postgres://USER@HOST:PORT/DATABASE[?schema=NAME]",
    );
  return parsed.value;
}

/**
 * Opens (and migrates) the ledger at a `postgres://USER@HOST:PORT/DATABASE[?schema=NAME]` URI.
 * Throws `store/uri-invalid`, `store/unreachable`, `store/version-too-new`.
 */
export async function postgresStore(uri: string): Promise<LedgerStore> {
  postgresLocation(uri);
  return openStore(uri);
}

/**
 * The queue of dispatched loops for the store at `uri`: graphile-worker, in the schema
 * `<ledger schema>_jobs` beside the ledger's (default `warrant_jobs`).
 */
export function postgresJobQueue(uri: string): GraphileJobQueue {
  const where = postgresLocation(uri);
  return graphileJobQueue({ connectionString: where.connectionString, storeSchema: where.schema });
}
