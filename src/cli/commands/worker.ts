// `warrant worker --store postgres://…`: drive dispatched loops from a shared PostgreSQL store, one
// line per drive's start, busy loop and end (`--json`: one object a line).
import type { Command } from "commander";
import type { GraphileJobQueue } from "../../adapters/queue/graphile-job-queue.js";
import { parseStoreUri, resolveStoreUri } from "../../adapters/store/store-uri.js";
import { leaseHolder } from "../../library/host.js";
import type { WorkerEvent } from "../../runtime/worker.js";
import { driveOptions, liveView, withWarrant } from "../compose.js";
import { out, UsageError } from "../io.js";
import { SANDBOX_OPTION, SANDBOX_OPTION_HELP, sandboxFor } from "../sandbox-option.js";

/** The job queue of a PostgreSQL store; graphile-worker and `pg` load only here. */
export async function postgresQueue(storeFlag: string | undefined): Promise<GraphileJobQueue> {
  const uri = resolveStoreUri(storeFlag);
  const parsed = parseStoreUri(uri);
  if (!parsed.ok || parsed.value.kind !== "postgres") {
    throw new UsageError("workers and --dispatch need a postgres://… store");
  }
  const { postgresJobQueue } = await import("../../postgres.js");
  return postgresJobQueue(uri);
}

/** One `worker --json` line: a drive's start, a loop another worker holds, or a drive's end. */
function workerEventJson(at: string, e: WorkerEvent): Record<string, unknown> {
  if (e.kind !== "end") return { at, event: e.kind, query: e.query };
  const r = e.result;
  return r.status === "stopped"
    ? { at, event: "end", query: e.query, status: "stopped", stop: r.document.stop }
    : {
        at,
        event: "end",
        query: e.query,
        status: "blocked",
        blocked: {
          reason: r.reason,
          ...(r.counter === undefined ? {} : { counter: r.counter }),
          detail: r.detail,
        },
      };
}

function workerEventLine(at: string, e: WorkerEvent): string {
  if (e.kind !== "end") return `${at} drive-${e.kind} ${e.query}`;
  const r = e.result;
  const how =
    r.status === "stopped" ? `stopped ${r.document.stop?.reason ?? ""}` : `blocked ${r.reason}`;
  return `${at} drive-end ${e.query} ${how}`;
}

interface WorkerFlags {
  readonly store: string;
  readonly concurrency: string;
  readonly yes?: boolean;
  readonly json?: boolean;
  readonly sandbox?: string;
}

export function registerWorkerCommand(program: Command): void {
  program
    .command("worker")
    .description("drive dispatched loops from a shared PostgreSQL store (graphile-worker queue)")
    .requiredOption("--store <uri>", "postgres://… store URI")
    .option("--concurrency <n>", "loops driven at once", "2")
    .option(SANDBOX_OPTION, SANDBOX_OPTION_HELP)
    .option("--yes", "approve every mutation without asking (recorded as such)")
    .option(
      "--json",
      "machine output: one JSON object a line, {at, event: started|start|busy|end, …} " +
        "(live view on stderr)",
    )
    .action(async (o: WorkerFlags) => {
      const concurrency = Number(o.concurrency);
      if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
        throw new UsageError("--concurrency takes a positive integer");
      }
      const json = o.json === true;
      const sandbox = await sandboxFor(o.sandbox);
      const queue = await postgresQueue(o.store);
      // Drives of several loops interleave: the view prints plain lines, never a status line.
      const view = liveView(json, false);
      const flags = { yes: o.yes === true, interactive: false, json, sandbox };
      const holder = `worker:${leaseHolder()}`;
      const options = { ...driveOptions(flags, view), queue, lease: { holder } };
      await withWarrant(o.store, options, async (warrant) => {
        const uri = warrant.store.uri;
        const at = () => new Date().toISOString();
        if (json) {
          out(
            JSON.stringify({
              at: at(),
              event: "started",
              holder,
              store: uri,
              schema: queue.schema,
            }),
          );
        } else out(`warrant worker ${holder} on ${uri} (queue schema ${queue.schema})`);
        const runner = await warrant.work({
          concurrency,
          handleSignals: true,
          onJob: (e) =>
            out(json ? JSON.stringify(workerEventJson(at(), e)) : workerEventLine(at(), e)),
        });
        await runner.promise;
      });
    });
}
