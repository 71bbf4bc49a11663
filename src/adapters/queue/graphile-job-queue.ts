// The JobQueue port over graphile-worker: dispatched loops are jobs in its own schema beside the
// ledger's, never inside it. graphile-worker is imported when a loop is dispatched or a worker
// starts, never for other commands.
import type { Logger } from "graphile-worker";
import type { JobQueue } from "../../runtime/ports.js";

export const DRIVE_TASK = "warrant_drive_loop";

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

export function graphileJobQueue(o: GraphileQueueOptions): GraphileJobQueue {
  const schema = `${o.storeSchema ?? "warrant"}_jobs`;
  const debug = o.debug ?? process.env.WARRANT_DEBUG_WORKER !== undefined;
  return {
    schema,
    description: `graphile-worker schema ${schema}`,
    async dispatch(query) {
      const { Logger, quickAddJob } = await import("graphile-worker");
      await quickAddJob(
        { connectionString: o.connectionString, schema, logger: quietLogger(Logger, debug) },
        DRIVE_TASK,
        { query },
        { maxAttempts: 5 },
      );
    },
    async start({ concurrency, handler, handleSignals }) {
      const { Logger, run } = await import("graphile-worker");
      const runner = await run({
        connectionString: o.connectionString,
        schema,
        concurrency,
        pollInterval: o.pollIntervalMs ?? 500,
        logger: quietLogger(Logger, debug),
        noHandleSignals: !handleSignals,
        taskList: {
          [DRIVE_TASK]: async (payload, helpers) => {
            const query = (payload as { query?: unknown }).query;
            if (typeof query !== "string") return; // not ours to drive
            await handler({ query, id: String(helpers.job.id) });
          },
        },
      });
      return { promise: runner.promise, stop: () => runner.stop() };
    },
  };
}
