// The JobQueue port over graphile-worker: dispatched loops are jobs in its own schema beside the
// ledger's, never inside it. graphile-worker and `pg` are imported when a loop is dispatched or a
// worker starts, never for other commands.
//
// Each loop's job carries the loop's query as its job key, so a loop has one live job: dispatching
// it again replaces a waiting job, and supersedes a job a (dead) worker holds — graphile-worker
// clears that job's key and spends its attempts, so its 4-hour stale lock never decides anything.
// Workers re-dispatch the loops whose lease expired with no live worker behind it (worker.ts).
import type { Logger, WorkerUtils } from "graphile-worker";
import type pg from "pg";
import type { JobQueue, QueuedJob } from "../../core/ports/job-queue.js";

export const DRIVE_TASK = "warrant_drive_loop";

/** How often a job is tried before it waits for `warrant requeue` (graphile-worker's back-off between). */
export const MAX_ATTEMPTS = 5;

/** graphile-worker's own logging: only warnings and errors (a failed job says why), on stderr. */
function quietLogger(LoggerClass: typeof Logger, debug: boolean): Logger {
  return new LoggerClass(() => (level, message) => {
    if (debug || level === "error" || level === "warning")
      process.stderr.write(`graphile-worker ${level}: ${message}\n`);
  });
}

export interface GraphileQueueOptions {
  /** The PostgreSQL connection string (may carry a password: it is never printed). */
  readonly connectionString: string;
  /** The ledger's schema; the queue's is `<schema>_jobs` (default `warrant_jobs`). */
  readonly storeSchema?: string | undefined;
  readonly pollIntervalMs?: number;
  /** Log graphile-worker's info messages too. */
  readonly debug?: boolean;
}

export interface GraphileJobQueue extends JobQueue {
  /** graphile-worker's schema: beside the ledger's, never inside it. */
  readonly schema: string;
}

interface JobRow {
  readonly id: string;
  readonly key: string;
  readonly attempts: number;
  readonly max_attempts: number;
  readonly run_at: Date;
  readonly locked_by: string | null;
  readonly locked_at: Date | null;
  readonly last_error: string | null;
}

/** A queue's connection: one pool and one WorkerUtils for every dispatch (and the workers' slots). */
interface Connection {
  readonly schema: string;
  readonly debug: boolean;
  pool(): Promise<pg.Pool>;
  /** graphile-worker's utilities, its schema migrated once; made again after a failure. */
  utils(): Promise<WorkerUtils>;
  /** `name` in the queue's schema, quoted. */
  table(name: string): string;
  close(): Promise<void>;
}

export function graphileJobQueue(o: GraphileQueueOptions): GraphileJobQueue {
  const c = connectionOf(o);
  return {
    schema: c.schema,
    description: `graphile-worker schema ${c.schema}`,
    async dispatch(query, options) {
      const u = await c.utils();
      await u.addJob(
        DRIVE_TASK,
        { query },
        {
          maxAttempts: MAX_ATTEMPTS,
          jobKey: query,
          jobKeyMode: "replace",
          // graphile-worker runs lower numbers first.
          ...(options?.first === true ? { priority: -1 } : {}),
        },
      );
    },
    jobs: () => listJobs(c),
    start: (options) => startRunner(c, o, options),
    close: () => c.close(),
  };
}

function connectionOf(o: GraphileQueueOptions): Connection {
  const schema = `${o.storeSchema ?? "warrant"}_jobs`;
  const debug = o.debug ?? process.env.WARRANT_DEBUG_WORKER !== undefined;
  let pool: pg.Pool | undefined;
  let utils: Promise<WorkerUtils> | undefined;
  const poolOf = async (): Promise<pg.Pool> => {
    if (pool === undefined) {
      const { default: pgModule } = await import("pg");
      pool = new pgModule.Pool({ connectionString: o.connectionString, max: 10 });
      // A connection the server cut is replaced on the next query; the error itself is not fatal.
      pool.on("error", () => undefined);
      pool.on("connect", (client) => client.on("error", () => undefined));
    }
    return pool;
  };
  return {
    schema,
    debug,
    pool: poolOf,
    utils() {
      utils ??= (async () => {
        const { Logger, makeWorkerUtils } = await import("graphile-worker");
        const u = await makeWorkerUtils({
          pgPool: await poolOf(),
          schema,
          logger: quietLogger(Logger, debug),
        });
        await u.migrate();
        return u;
      })();
      utils.catch(() => {
        utils = undefined;
      });
      return utils;
    },
    table: (name) => `"${schema.replace(/"/g, '""')}".${name}`,
    async close() {
      const u = utils;
      utils = undefined;
      if (u !== undefined) await (await u.catch(() => undefined))?.release();
      const p = pool;
      pool = undefined;
      await p?.end();
    },
  };
}

/** The loops' jobs still in the queue, by query; none when nothing was ever dispatched. */
async function listJobs(c: Connection): Promise<QueuedJob[]> {
  const db = await c.pool();
  const t = c.table;
  // A store nothing was dispatched to has no queue schema: reading does not make one.
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [
    t("_private_jobs"),
  ]);
  if (exists.rows[0]?.t == null) return [];
  const { rows } = await db.query<JobRow>(
    "SELECT j.id::text AS id, j.key, j.attempts, j.max_attempts, j.run_at, j.locked_by, j.locked_at, j.last_error " +
      `FROM ${t("_private_jobs")} AS j JOIN ${t("_private_tasks")} AS k ON k.id = j.task_id ` +
      `WHERE k.identifier = $1 AND j.key IS NOT NULL ORDER BY j.key COLLATE "C"`,
    [DRIVE_TASK],
  );
  return rows.map(
    (r): QueuedJob => ({
      query: r.key,
      id: r.id,
      attempts: r.attempts,
      maxAttempts: r.max_attempts,
      runAt: r.run_at,
      ...(r.locked_by === null ? {} : { lockedBy: r.locked_by }),
      ...(r.locked_at === null ? {} : { lockedAt: r.locked_at }),
      ...(r.last_error === null ? {} : { lastError: r.last_error }),
      failed: r.locked_by === null && r.attempts >= r.max_attempts,
    }),
  );
}

/** A graphile-worker runner of the queue's drive task, named by its worker pool's id. */
async function startRunner(
  c: Connection,
  o: GraphileQueueOptions,
  { concurrency, handler, handleSignals }: Parameters<JobQueue["start"]>[0],
): ReturnType<JobQueue["start"]> {
  const { Logger, run } = await import("graphile-worker");
  const { EventEmitter } = await import("node:events");
  await c.utils(); // migrated once, before the runner starts
  // graphile-worker locks jobs in the name of its worker pool (`pool-<random>`): that id is the
  // worker's, so `warrant workers` and the queue's `locked_by` name it alike.
  let poolId: string | undefined;
  const events = new EventEmitter();
  events.on("pool:create", ({ workerPool }: { workerPool: { id: string } }) => {
    poolId ??= workerPool.id;
  });
  const breakingAtStart = await latestBreakingMigration(c);
  events.on("pool:listen:success", ({ client }: { client: pg.PoolClient }) =>
    scopeMigrationNotices(client, async () => (await latestBreakingMigration(c)) > breakingAtStart),
  );
  const runner = await run({
    pgPool: await c.pool(),
    schema: c.schema,
    concurrency,
    events: events as never,
    pollInterval: o.pollIntervalMs ?? 500,
    logger: quietLogger(Logger, c.debug),
    noHandleSignals: !handleSignals,
    taskList: {
      [DRIVE_TASK]: async (payload, helpers) => {
        const query = (payload as { query?: unknown }).query;
        if (typeof query !== "string") return; // not ours to drive
        await handler({
          query,
          id: String(helpers.job.id),
          worker: helpers.job.locked_by ?? poolId ?? "unknown",
        });
      },
    },
  });
  if (poolId === undefined) {
    await runner.stop();
    throw new Error("graphile-worker started without announcing its worker pool");
  }
  return { workerId: poolId, promise: runner.promise, stop: () => runner.stop() };
}

/** graphile-worker's channel for "a breaking migration ran": it shuts every listening worker down. */
const MIGRATE_CHANNEL = "worker:migrate";

/** The highest breaking migration the queue's schema has had (0: none). */
async function latestBreakingMigration(c: Connection): Promise<number> {
  const db = await c.pool();
  const { rows } = await db.query<{ id: number }>(
    `SELECT coalesce(max(id), 0)::int AS id FROM ${c.table("migrations")} WHERE breaking`,
  );
  return rows[0]?.id ?? 0;
}

/**
 * graphile-worker notifies a breaking migration on one channel for the whole database, whatever
 * the schema, and a worker that hears it shuts down (exit status 57). Installing a second queue
 * schema in the same database would so stop every worker of the first. This listener, added to
 * the listening connection before graphile-worker's own, hides each such notice from it and hands
 * it back only when the queue's own schema has a breaking migration newer than the runner's start
 * (or when that cannot be read: the runner then stops, as graphile-worker would have it).
 */
function scopeMigrationNotices(
  client: pg.PoolClient,
  ownSchemaMigrated: () => Promise<boolean>,
): void {
  const handedBack = new WeakSet<pg.Notification>();
  client.on("notification", (notice: pg.Notification) => {
    if (notice.channel !== MIGRATE_CHANNEL || handedBack.has(notice)) return;
    const original = { ...notice };
    notice.channel = `${MIGRATE_CHANNEL}:unchecked`; // graphile-worker ignores unknown channels
    void ownSchemaMigrated()
      .catch(() => true)
      .then((migrated) => {
        if (!migrated) return;
        handedBack.add(original);
        client.emit("notification", original);
      });
  });
}
