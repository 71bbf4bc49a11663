// The workers of a runtime, one facet of `createWarrant`: hand an open loop to the queue again,
// work the queue (drive dispatched loops until stopped), and list the registered workers and the
// queue's jobs.
import { hostname } from "node:os";
import type { QueryId } from "../core/ids.js";
import type { QueuedJob } from "../core/ports/job-queue.js";
import { WarrantError } from "../core/result.js";
import { LoopLedger } from "../runtime/loop-ledger.js";
import type { Worker } from "../runtime/worker.js";
import type { Composition } from "./compose.js";
import type { WorkerListing, WorkOptions } from "./warrant-types.js";

export interface WarrantWorkers {
  /**
   * Hands an open loop to the workers again (one whose job used up its attempts, say). Refuses a
   * loop the store does not hold (`loop/not-opened`) and a stopped one (`queue/loop-stopped`).
   */
  requeue(query: QueryId): Promise<void>;
  /** Drives dispatched loops until stopped (`stop()` drains, `abort()` stops the drives now). */
  work(options: WorkOptions): Promise<Worker>;
  /** The workers registered in the store, each with the loops it holds. */
  workers(): Promise<WorkerListing[]>;
  /** The loops' jobs in the queue (waiting, held, failed). */
  jobs(): Promise<readonly QueuedJob[]>;
}

export function createWorkers(c: Composition, ttlMs: number): WarrantWorkers {
  const { store } = c;
  return {
    async requeue(query) {
      const doc = await new LoopLedger(store).document(query, c.clock.now());
      if (doc === undefined)
        throw new WarrantError("loop/not-opened", `no loop ${query} in ${store.uri}`);
      if (doc.state === "stopped")
        throw new WarrantError(
          "queue/loop-stopped",
          `${query} stopped (${doc.stop?.reason ?? "stopped"}); a stopped loop is not driven again`,
        );
      await c.queue().dispatch(query);
    },
    async work(o) {
      // The worker and the drive machinery it runs, loaded by the first worker.
      const { startWorker } = await import("../runtime/worker.js");
      return startWorker({
        queue: c.queue(),
        store,
        concurrency: o.concurrency,
        host: hostname(),
        pid: process.pid,
        ttlMs,
        time: c.time,
        handleSignals: o.handleSignals ?? false,
        context: (models, namespace) => c.context(models, c.emitter(), namespace),
        onEvent: (e) => o.onJob?.(e),
      });
    },
    async workers() {
      return (await store.listWorkers()).map((w) => ({
        id: w.id,
        host: w.host,
        pid: w.pid,
        started: w.started.toISOString(),
        lastHeartbeat: w.lastHeartbeat.toISOString(),
        loops: w.loops,
      }));
    },
    jobs: () => c.queue().jobs(),
  };
}
