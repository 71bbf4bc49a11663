// GET /api/events: the store's facts and the pending approvals as a server-sent event stream, from
// the position Last-Event-ID names (or the present), with a comment line every heartbeat. Every
// stream open is kept so that closing the console ends them all.
import type { WarrantViews } from "../library/views.js";
import { createEventHub, type EventHub } from "./event-hub.js";
import { ApiError } from "./http.js";

export interface EventStreams {
  /** A new stream for this request. */
  open(request: Request): Promise<Response>;
  /** Ends every stream and stops watching the store. */
  close(): Promise<void>;
}

/** Where a stream starts: the position Last-Event-ID names, or the feed's last one. */
async function startPosition(request: Request, hub: EventHub): Promise<number> {
  const header = request.headers.get("last-event-id");
  if (header === null || header === "") return hub.lastPosition();
  if (/^\d{1,15}$/.test(header)) return Number(header);
  throw new ApiError("request/invalid", "Last-Event-ID is a position (an integer)");
}

export function createEventStreams(
  views: WarrantViews,
  now: () => Date,
  heartbeatMs: number,
): EventStreams {
  const feed = views.watch();
  let hub: EventHub | undefined;
  const streams = new Set<() => void>();

  const open = async (request: Request): Promise<Response> => {
    if (feed === undefined)
      throw new ApiError("store/no-change-feed", `${views.storeUri} keeps no change feed`);
    hub ??= createEventHub(feed, () => views.pending(now()));
    const h = hub;
    const from = await startPosition(request, h);
    const encoder = new TextEncoder();
    let stop: (() => void) | undefined;
    let beat: NodeJS.Timeout | undefined;
    let end: () => void = () => {};
    const body = new ReadableStream<Uint8Array>({
      start: async (controller) => {
        const send = (t: string) => {
          try {
            controller.enqueue(encoder.encode(t));
          } catch {
            end();
          }
        };
        end = () => {
          stop?.();
          if (beat !== undefined) clearInterval(beat);
          streams.delete(end);
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        };
        streams.add(end);
        // Where this stream starts: a client without Last-Event-ID resumes from here.
        send(
          `retry: 2000\nid: ${from}\nevent: ready\ndata: ${JSON.stringify({ position: from })}\n\n`,
        );
        stop = await h.subscribe(from, {
          fact: (f) =>
            send(
              `id: ${f.position}\nevent: fact\ndata: ${JSON.stringify({
                position: f.position,
                query: f.query,
                sequence: f.fact.sequence,
                kind: f.fact.step.kind,
                recordedAt: f.fact["recorded-at"],
                fact: f.fact,
              })}\n\n`,
            ),
          pending: (list) => send(`event: pending\ndata: ${JSON.stringify(list)}\n\n`),
        });
        beat = setInterval(() => send(": heartbeat\n\n"), heartbeatMs);
        beat.unref();
        request.signal.addEventListener("abort", () => end());
      },
      cancel: () => end(),
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      },
    });
  };

  return {
    open,
    async close() {
      for (const end of [...streams]) end();
      await hub?.close();
    },
  };
}
