// `warrant worker --store postgres://…`: drive dispatched loops from a shared PostgreSQL store. Every
// line says when and which loop: human lines start with a timestamp and the loop's short id,
// `--json` lines are objects with `at` and `query` (null for the worker's own lines). SIGTERM or
// SIGINT drains (no more jobs; each drive released at its next step boundary and its loop queued
// again) and exits 0 within --shutdown-timeout; a second signal stops the drives at once.
import type { Command } from "commander";
import type { WarrantEvent } from "../../index.js";
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from "../../library/basics.js";
import { OPERATOR_OPTION, OPERATOR_OPTION_HELP, operatorOf } from "../act-reply.js";
import { driveOptions, liveView, withWarrant } from "../compose.js";
import { out, printJson, UsageError } from "../io.js";
import { postgresQueue } from "../job-queue.js";
import { lineOf } from "../live-view.js";
import {
  SANDBOX_OPTION,
  SANDBOX_OPTION_HELP,
  sandboxFor,
  WEAKER_OPTION,
  WEAKER_OPTION_HELP,
} from "../sandbox-option.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";
import { humanLine, workerEventJson, workerEventText } from "../worker-lines.js";

interface WorkerFlags {
  readonly store: string;
  readonly concurrency: string;
  readonly shutdownTimeout: string;
  readonly yes?: boolean;
  readonly json?: boolean;
  readonly sandbox?: string;
  readonly allowWeakerSandbox?: boolean;
  readonly operator?: string;
}

export function registerWorkerCommand(program: Command): void {
  program
    .command("worker")
    .description(
      "drive dispatched loops from a shared PostgreSQL store (graphile-worker queue); takes over " +
        "loops whose worker died; SIGTERM/SIGINT drains and exits 0, a second signal stops now",
    )
    .requiredOption("--store <uri>", "postgres://… store URI")
    .option("--concurrency <n>", "loops driven at once", "2")
    .option(SANDBOX_OPTION, SANDBOX_OPTION_HELP)
    .option(WEAKER_OPTION, WEAKER_OPTION_HELP)
    .option(
      "--shutdown-timeout <seconds>",
      "on SIGTERM/SIGINT, how long drives may take to reach their next step before they are stopped",
      String(DEFAULT_SHUTDOWN_TIMEOUT_MS / 1000),
    )
    .option("--yes", "approve every mutation without asking (recorded as such)")
    .option(OPERATOR_OPTION, `${OPERATOR_OPTION_HELP}: who --yes approves as`)
    .option(
      "--json",
      "machine output: one JSON object a line, {at, query, event: started|start|busy|end|" +
        "requeued|lease-lost|failed|shutdown|drive, …} (query null for the worker's own lines)",
    )
    .action(async (o: WorkerFlags) => {
      const concurrency = Number(o.concurrency);
      if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
        throw new UsageError("--concurrency takes a positive integer");
      }
      const timeoutS = Number(o.shutdownTimeout);
      if (!Number.isFinite(timeoutS) || timeoutS < 0) {
        throw new UsageError("--shutdown-timeout takes a number of seconds (0 or more)");
      }
      const json = o.json === true;
      const operator = operatorOf(o.operator);
      const sandbox = await sandboxFor(o.sandbox, o.allowWeakerSandbox === true);
      const queue = await postgresQueue(o.store);
      const at = () => new Date().toISOString();
      // The drives' own lines (passages, runs, steps), each with its time and loop.
      const onEvent = (e: WarrantEvent): void => {
        const text = lineOf(e);
        if (text === undefined) return;
        const query = "query" in e && typeof e.query === "string" ? e.query : undefined;
        out(
          json
            ? JSON.stringify({ at: e.at, query: query ?? null, event: "drive", kind: e.kind, text })
            : humanLine(e.at, query, text),
        );
      };
      const flags = { yes: o.yes === true, interactive: false, json, sandbox, operator };
      const options = {
        ...driveOptions(flags, liveView(json, false)),
        onEvent,
        queue,
        createStore: "inside-cwd" as const,
      };
      await withWarrant(o.store, options, async (warrant) => {
        const uri = warrant.store.uri;
        const worker = await warrant.work({
          concurrency,
          handleSignals: false,
          onJob: (e) =>
            out(
              json
                ? JSON.stringify(workerEventJson(at(), e))
                : humanLine(at(), e.query, workerEventText(e)),
            ),
        });
        if (json) {
          out(
            JSON.stringify({
              at: at(),
              event: "started",
              query: null,
              worker: worker.id,
              store: uri,
              schema: queue.schema,
            }),
          );
        } else
          out(
            humanLine(
              at(),
              undefined,
              `warrant worker ${worker.id} on ${uri} (queue schema ${queue.schema})`,
            ),
          );
        let signals = 0;
        const onSignal = (): void => {
          signals += 1;
          if (signals === 1) {
            void worker.stop(timeoutS * 1000).catch(() => undefined);
            return;
          }
          // A second signal: stop the drives now, release what can be released, and go.
          worker.abort();
          const exit = setTimeout(() => process.exit(1), 5000);
          exit.unref();
          void worker.stop().finally(() => process.exit(1));
        };
        process.on("SIGTERM", onSignal);
        process.on("SIGINT", onSignal);
        await worker.promise;
      });
    });
}

export function registerWorkersCommand(program: Command): void {
  program
    .command("workers")
    .description(
      "list the workers registered in the store: id, host, pid, started, last heartbeat, loops held",
    )
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option("--json", "machine output: [{id, host, pid, started, lastHeartbeat, loops: [query]}]")
    .action(async (o: { store?: string; json?: boolean }) => {
      await withWarrant(o.store, {}, async (warrant) => {
        const rows = await warrant.workers();
        if (o.json === true) {
          printJson(rows);
          return;
        }
        if (rows.length === 0) out("no workers registered");
        for (const w of rows) {
          out(
            `${w.id}  host ${w.host}  pid ${w.pid}  started ${w.started}  heartbeat ${w.lastHeartbeat}`,
          );
          out(`  loops: ${w.loops.length === 0 ? "none" : w.loops.join(" ")}`);
        }
      });
    });
}
