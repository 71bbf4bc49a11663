// The job queue port: hands dispatched loops to workers and lists their jobs. docs/architecture.md
// names its implementation in the ports table.

/** The version of the job queue port. */
export const JOB_QUEUE_PORT_VERSION = "v1";

/** A running worker: `promise` settles when it stops; `stop()` stops it after its current jobs. */
export interface WorkerRunner {
  readonly promise: Promise<void>;
  stop(): Promise<void>;
}

/**
 * What a worker does with one job: drive the loop it names. A rejection retries the job later.
 * `worker` is the queue's id of the worker that took it.
 */
export type JobHandler = (job: {
  readonly query: string;
  readonly id: string;
  readonly worker: string;
}) => Promise<void>;

/** A loop's job as the queue holds it. */
export interface QueuedJob {
  readonly query: string;
  readonly id: string;
  readonly attempts: number;
  readonly maxAttempts: number;
  /** When it runs (next). */
  readonly runAt: Date;
  /** The worker that holds it now, while one does, and since when. */
  readonly lockedBy?: string;
  readonly lockedAt?: Date;
  readonly lastError?: string;
  /** It used up its attempts: it runs again only when requeued. */
  readonly failed: boolean;
}

/** The queue that hands dispatched loops to workers. */
export interface JobQueue {
  /** Where the queue lives, for people (never a password). */
  readonly description: string;
  /**
   * Queue the loop under its own job key: one job per loop. A waiting or failed job of the loop is
   * replaced (its attempts start again); a job some worker holds is superseded (never retried) and a
   * fresh one queued, so a loop whose worker died is driven again at once. `first`: ahead of the
   * loops not yet started (a loop taken over or released by a worker that stops).
   */
  dispatch(query: string, options?: { readonly first?: boolean }): Promise<void>;
  /** The loops' jobs still in the queue (waiting, held, failed), by query. */
  jobs(): Promise<readonly QueuedJob[]>;
  start(options: {
    readonly concurrency: number;
    readonly handler: JobHandler;
    /** Stop on SIGINT/SIGTERM (a process that is only a worker). */
    readonly handleSignals: boolean;
  }): Promise<WorkerRunner & { readonly workerId: string }>;
  /** Releases the queue's connections (dispatching reuses one pool until then). */
  close(): Promise<void>;
}
