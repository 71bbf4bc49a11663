// `warrant worker --store postgres://…`: drive dispatched loops from a shared PostgreSQL store. Every
// line says when and which loop: human lines start with a timestamp and the loop's short id,
// `--json` lines are objects with `at` and `query` (null for the worker's own lines). SIGTERM or
// SIGINT drains (no more jobs; each drive released at its next step boundary and its loop queued
// again) and exits 0 within --shutdown-timeout; a second signal stops the drives at once.
import type { Command } from "commander";
import type { GraphileJobQueue } from "../../adapters/queue/graphile-job-queue.js";
import { parseStoreUri, resolveStoreUri } from "../../adapters/store/store-uri.js";
import type { WarrantEvent } from "../../runtime/events.js";
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, type WorkerEvent } from "../../runtime/worker.js";
import { driveOptions, liveView, withWarrant } from "../compose.js";
import { out, printJson, UsageError } from "../io.js";
import { lineOf } from "../live-view.js";
import { SANDBOX_OPTION, SANDBOX_OPTION_HELP, sandboxFor } from "../sandbox-option.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";

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

/** The job queue when the store is PostgreSQL (its loops may be dispatched), else none. */
export async function queueIfPostgres(
  storeFlag: string | undefined,
): Promise<GraphileJobQueue | undefined> {
  const parsed = parseStoreUri(resolveStoreUri(storeFlag));
  return parsed.ok && parsed.value.kind === "postgres" ? postgresQueue(storeFlag) : undefined;
}

/** A loop's short id: the random tail of its query id (`query:<pack>-<time>-<hex>` → `<hex>`). */
export function shortQuery(query: string): string {
  const tail = /-([0-9a-f]{6,})$/.exec(query)?.[1];
  return tail ?? query.replace(/^query:/, "").slice(-12);
}

/** One `worker --json` line of a worker event: always `at`, `event` and `query`. */
function workerEventJson(at: string, e: WorkerEvent): Record<string, unknown> {
  const query = e.query ?? null;
  switch (e.kind) {
    case "end": {
      const r = e.result;
      return r.status === "stopped"
        ? { at, event: "end", query, status: "stopped", stop: r.document.stop }
        : {
            at,
            event: "end",
            query,
            status: "blocked",
            blocked: {
              reason: r.reason,
              ...(r.counter === undefined ? {} : { counter: r.counter }),
              detail: r.detail,
            },
          };
    }
    case "start":
      return { at, event: "start", query, holder: e.holder };
    case "busy":
      return { at, event: "busy", query };
    case "requeued":
      return {
        at,
        event: "requeued",
        query,
        reason: e.reason,
        ...(e.holder === undefined ? {} : { holder: e.holder }),
      };
    case "lease-lost":
      return { at, event: "lease-lost", query, code: "store/lease-lost", message: e.message };
    case "failed":
      return { at, event: "failed", query, code: e.code, message: e.message };
    case "shutdown":
      return {
        at,
        event: "shutdown",
        query,
        phase: e.phase,
        ...(e.timeoutMs === undefined ? {} : { timeoutMs: e.timeoutMs }),
      };
    default:
      return e satisfies never;
  }
}

function workerEventText(e: WorkerEvent): string {
  switch (e.kind) {
    case "end": {
      const r = e.result;
      return r.status === "stopped"
        ? `drive-end stopped ${r.document.stop?.reason ?? ""}`
        : `drive-end blocked ${r.reason}`;
    }
    case "start":
      return `drive-start as ${e.holder}`;
    case "busy":
      return "drive-busy: another driver holds the loop";
    case "requeued":
      return e.reason === "shutdown"
        ? "released and requeued: the worker is shutting down"
        : `requeued: ${e.reason === "expired-lease" ? "the lease" : "the job"} of ${e.holder ?? "a worker"} ${e.reason === "expired-lease" ? "expired" : "has no live worker"}; taking over`;
    case "lease-lost":
      return `refused: store/lease-lost: ${e.message}`;
    case "failed":
      return `drive-failed ${e.code}: ${e.message} (the queue retries it)`;
    case "shutdown":
      return e.phase === "draining"
        ? `shutting down: no more jobs; drives released at their next step (timeout ${String((e.timeoutMs ?? 0) / 1000)} s)`
        : e.phase === "forcing"
          ? "shutting down now: drives stopped, leases released"
          : "stopped";
    default:
      return e satisfies never;
  }
}

/** A human line: timestamp, the loop's short id (or `-`), the text. */
function humanLine(at: string, query: string | undefined, text: string): string {
  const id = query === undefined ? "-" : shortQuery(query);
  return text
    .split("\n")
    .map((l) => `${at} ${id} ${l}`)
    .join("\n");
}

interface WorkerFlags {
  readonly store: string;
  readonly concurrency: string;
  readonly shutdownTimeout: string;
  readonly yes?: boolean;
  readonly json?: boolean;
  readonly sandbox?: string;
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
    .option(
      "--shutdown-timeout <seconds>",
      "on SIGTERM/SIGINT, how long drives may take to reach their next step before they are stopped",
      String(DEFAULT_SHUTDOWN_TIMEOUT_MS / 1000),
    )
    .option("--yes", "approve every mutation without asking (recorded as such)")
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
      const sandbox = await sandboxFor(o.sandbox);
      const queue = await postgresQueue(o.store);
      const at = () => new Date().toISOString();
      // The drives' own lines (passages, runs, steps), each with its time and loop.
      const telemetry = (e: WarrantEvent): void => {
        const text = lineOf(e);
        if (text === undefined) return;
        const query = "query" in e && typeof e.query === "string" ? e.query : undefined;
        out(
          json
            ? JSON.stringify({ at: e.at, query: query ?? null, event: "drive", kind: e.kind, text })
            : humanLine(e.at, query, text),
        );
      };
      const flags = { yes: o.yes === true, interactive: false, json, sandbox };
      const options = { ...driveOptions(flags, liveView(json, false)), telemetry, queue };
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
