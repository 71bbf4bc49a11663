// The job queue of a PostgreSQL store, for the commands that dispatch, drive or list its loops.

import { parseStoreUri, resolveStoreUri } from "../library/basics.js";
import type { GraphileJobQueue } from "../postgres.js";
import { UsageError } from "./io.js";

/** The job queue of a PostgreSQL store; graphile-worker and `pg` load only here. */
export async function postgresQueue(storeFlag: string | undefined): Promise<GraphileJobQueue> {
  const uri = resolveStoreUri(storeFlag);
  const parsed = parseStoreUri(uri);
  if (!parsed.ok || parsed.value.kind !== "postgres") {
    throw new UsageError("workers and --dispatch need a postgres://… store");
  }
  const { postgresJobQueue } = await import("../postgres.js");
  return postgresJobQueue(uri);
}

/** The job queue when the store is PostgreSQL (its loops may be dispatched), else none. */
export async function queueIfPostgres(
  storeFlag: string | undefined,
): Promise<GraphileJobQueue | undefined> {
  const parsed = parseStoreUri(resolveStoreUri(storeFlag));
  return parsed.ok && parsed.value.kind === "postgres" ? postgresQueue(storeFlag) : undefined;
}
