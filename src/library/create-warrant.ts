// createWarrant: the one composition root. It assembles a runtime from ports (store, models, tools,
// sandbox, approver, clock, signer, telemetry), with defaults that mirror the command line, and
// answers for loops through its facets: the drives (run, resume, open, dispatch;
// warrant-drives.ts), the workers (warrant-workers.ts), reading the ledger (warrant-reads.ts) and
// the operator's acts (warrant-acts.ts).
import type { LedgerStore } from "../core/ports/ledger-store.js";
import { compose } from "./compose.js";
import { createEvals, type Evals } from "./evals/evals.js";
import { leaseTtlMs } from "./host.js";
import type { WarrantOptions } from "./options.js";
import type { WarrantTelemetry } from "./telemetry.js";
import { storeViews, type WarrantViews } from "./views.js";
import { createActs, type WarrantActs } from "./warrant-acts.js";
import { createDrives, type WarrantDrives } from "./warrant-drives.js";
import { createReads, type WarrantReads } from "./warrant-reads.js";
import { createWorkers, type WarrantWorkers } from "./warrant-workers.js";

export type {
  ActOptions,
  LoopListing,
  LoopStatus,
  LoopView,
  ResumeOptions,
  RunEgress,
  RunOptions,
  StoredRecord,
  WorkerListing,
  WorkOptions,
} from "./warrant-types.js";

export interface Warrant extends WarrantDrives, WarrantWorkers, WarrantReads, WarrantActs {
  /** The ledger this runtime writes. */
  readonly store: LedgerStore;
  /**
   * What a reader shows of the store (statuses, records, the approval card's context, the verified
   * change, pending approvals, the change feed), without touching the store: the console's source.
   */
  readonly views: WarrantViews;
  /** OpenTelemetry tracing of the drives: whether it is on, and flushing it. */
  readonly telemetry: WarrantTelemetry;
  /** Eval sets: run them, report and compare evals, certify tasks (docs/evals.md). */
  readonly evals: Evals;
  /** Flushes telemetry and closes the store when this runtime opened it. */
  close(): Promise<void>;
}

export async function createWarrant(options: WarrantOptions = {}): Promise<Warrant> {
  const c = await compose(options);
  const ttlMs = options.lease?.ttlMs ?? leaseTtlMs();
  const { runWith, resumeWith, ...drives } = createDrives(c, options, ttlMs);
  let evals: Evals | undefined;
  const warrant: Warrant = {
    store: c.store,
    views: storeViews(c.store, c.clock),
    ...drives,
    ...createWorkers(c, ttlMs),
    ...createReads(c),
    ...createActs(c),
    telemetry: {
      enabled: c.telemetry.enabled,
      flush: () => c.telemetry.flush(),
      interrupted: () => c.telemetry.interrupted(),
    },
    close: () => c.close(),
    get evals() {
      evals ??= createEvals({
        warrant,
        runWith,
        resumeWith,
        sleep: c.time.sleep,
        clock: c.clock,
        context: () => c.context({}, c.emitter()),
        evalSpan: async (attributes) =>
          c.telemetry.enabled ? (await c.telemetry.start())?.evalSpan(attributes) : undefined,
        cwd: options.cwd,
      });
      return evals;
    },
  };
  return warrant;
}
