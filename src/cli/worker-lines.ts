// What `warrant worker` prints for its own events: a JSON object a line with `at`, `event` and
// `query`, or a human line that starts with a timestamp and the loop's short id.

import type { WorkerEvent } from "../index.js";
import { terminalSafe } from "../library/basics.js";

/** A loop's short id: the random tail of its query id (`query:<pack>-<time>-<hex>` → `<hex>`). */
export function shortQuery(query: string): string {
  const tail = /-([0-9a-f]{6,})$/.exec(query)?.[1];
  return tail ?? query.replace(/^query:/, "").slice(-12);
}

/** One `worker --json` line of a worker event: always `at`, `event` and `query`. */
export function workerEventJson(at: string, e: WorkerEvent): Record<string, unknown> {
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

export function workerEventText(e: WorkerEvent): string {
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

/**
 * A human line: timestamp, the loop's short id (or `-`), the text, terminal-safe (a drive's error
 * may quote a model or a command); each line of a several-line text gets the prefix.
 */
export function humanLine(at: string, query: string | undefined, text: string): string {
  const id = query === undefined ? "-" : shortQuery(query);
  return terminalSafe(text)
    .split("\n")
    .map((l) => `${at} ${id} ${l}`)
    .join("\n");
}
