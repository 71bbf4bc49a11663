// Workers over a shared PostgreSQL: loops are dispatched as jobs of graphile-worker (its own
// schema); a worker drives each job's loop under the store's lease, so two workers never drive the
// same loop at once, and a loop whose driver died is taken over once its lease expires.
// graphile-worker is imported when a loop is dispatched or a worker starts, never for other commands.
import type { Logger, Runner } from "graphile-worker";
import type { DriveResult } from "./driver.js";
import type { RuntimeContext } from "./ports.js";
import { bindingOf, driveUnderLease, packOf } from "./session.js";

export const DRIVE_TASK = "warrant_drive_loop";

/** graphile-worker's own logging: only warnings and errors (a failed job says why), on stderr. */
function quietLogger(LoggerClass: typeof Logger): Logger {
  return new LoggerClass(() => (level, message) => {
    if (process.env.WARRANT_DEBUG_WORKER || level === "error" || level === "warning")
      process.stderr.write(`graphile-worker ${level}: ${message}\n`);
  });
}

export interface JobQueue {
  /** The connection string (may carry a password: never print it). */
  readonly connectionString: string;
  /** graphile-worker's schema: beside the ledger's, never inside it. */
  readonly schema: string;
}

export function jobQueueOf(connectionString: string, storeSchema: string | undefined): JobQueue {
  return { connectionString, schema: `${storeSchema ?? "warrant"}_jobs` };
}

export async function dispatchLoop(queue: JobQueue, query: string): Promise<void> {
  const { Logger, quickAddJob } = await import("graphile-worker");
  await quickAddJob(
    {
      connectionString: queue.connectionString,
      schema: queue.schema,
      logger: quietLogger(Logger),
    },
    DRIVE_TASK,
    { query },
    { maxAttempts: 5 },
  );
}

export type WorkerEvent =
  | { readonly kind: "start"; readonly query: string }
  | { readonly kind: "end"; readonly query: string; readonly result: DriveResult }
  | { readonly kind: "busy"; readonly query: string };

export interface WorkerOptions {
  readonly queue: JobQueue;
  readonly concurrency: number;
  /** A context per job; they share the worker's store. */
  readonly context: (models: Readonly<Record<string, string>>) => RuntimeContext;
  readonly holder: string;
  readonly onEvent: (event: WorkerEvent) => void;
  readonly handleSignals: boolean;
}

export async function startWorker(o: WorkerOptions): Promise<Runner> {
  const { Logger, run } = await import("graphile-worker");
  return run({
    connectionString: o.queue.connectionString,
    schema: o.queue.schema,
    concurrency: o.concurrency,
    pollInterval: 500,
    logger: quietLogger(Logger),
    noHandleSignals: !o.handleSignals,
    taskList: {
      [DRIVE_TASK]: async (payload, helpers) => {
        const query = (payload as { query?: unknown }).query;
        if (typeof query !== "string") return; // not ours to drive
        const base = o.context({});
        const binding = await bindingOf(base, query);
        const ctx = o.context(binding.models);
        const pack = await packOf(binding);
        // One holder per job: two jobs of one worker never share a lease.
        const holder = `${o.holder}/job-${helpers.job.id}`;
        const result = await driveUnderLease(ctx, query, pack, holder, {
          onLeased: () => o.onEvent({ kind: "start", query }),
        }).finally(() => ctx.sandbox.close?.());
        if (result === "leased-elsewhere") {
          // Another driver holds the loop; it drives it on (or its lease expires and a retry takes it).
          o.onEvent({ kind: "busy", query });
          throw new Error(`${query} is leased by another driver`);
        }
        o.onEvent({ kind: "end", query, result });
      },
    },
  });
}
