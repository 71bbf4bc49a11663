// Workers over a shared store: loops are dispatched as jobs of a queue (graphile-worker over
// PostgreSQL, behind the JobQueue port); a worker drives each job's loop under the store's lease, so
// two workers never drive the same loop at once, and a loop whose driver died is taken over once its
// lease expires.
import type { LedgerStore } from "../core/loop/ledger-store.js";
import type { DriveResult } from "./driver.js";
import type { JobQueue, RuntimeContext, WorkerRunner } from "./ports.js";
import { bindingOf, driveUnderLease, modelOverridesOf, packOf } from "./session.js";

export type WorkerEvent =
  | { readonly kind: "start"; readonly query: string }
  | { readonly kind: "end"; readonly query: string; readonly result: DriveResult }
  | { readonly kind: "busy"; readonly query: string };

export interface WorkerOptions {
  readonly queue: JobQueue;
  /** The shared store the jobs' loops live in. */
  readonly store: LedgerStore;
  readonly concurrency: number;
  /**
   * The context of one job's drive, for the model overrides and memory namespace its binding
   * names; `close` ends its tools.
   */
  readonly context: (
    models: Readonly<Record<string, string>>,
    namespace?: string,
  ) => Promise<RuntimeContext & { close(): Promise<void> }>;
  readonly holder: string;
  readonly ttlMs?: number;
  readonly onEvent: (event: WorkerEvent) => void;
  readonly handleSignals: boolean;
}

export function startWorker(o: WorkerOptions): Promise<WorkerRunner> {
  return o.queue.start({
    concurrency: o.concurrency,
    handleSignals: o.handleSignals,
    handler: async ({ query, id }) => {
      const binding = await bindingOf(o, query);
      const ctx = await o.context(modelOverridesOf(binding), binding["memory/namespace"]);
      try {
        const pack = await packOf(ctx, binding);
        // One holder per job: two jobs of one worker never share a lease.
        const result = await driveUnderLease(ctx, query, pack, {
          holder: `${o.holder}/job-${id}`,
          ...(o.ttlMs === undefined ? {} : { ttlMs: o.ttlMs }),
          onLeased: () => o.onEvent({ kind: "start", query }),
        }).finally(() => ctx.sandbox.close?.());
        if (result === "leased-elsewhere") {
          // Another driver holds the loop; it drives it on (or its lease expires and a retry takes it).
          o.onEvent({ kind: "busy", query });
          throw new Error(`${query} is leased by another driver`);
        }
        o.onEvent({ kind: "end", query, result });
      } finally {
        await ctx.close();
      }
    },
  });
}
