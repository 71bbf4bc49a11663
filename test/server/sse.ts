// Reads a Server-Sent Events response until a condition holds (or 30 s pass), then cancels it.
export interface SseEvent {
  readonly event?: string;
  readonly id?: string;
  readonly data: string;
  /** A comment line's text (`: heartbeat`). */
  readonly comment?: string;
}

export async function readEvents(
  response: Response,
  until: (events: readonly SseEvent[]) => boolean,
  timeoutMs = 30_000,
): Promise<SseEvent[]> {
  if (response.status !== 200) throw new Error(`event stream answered ${response.status}`);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = "";
  const timer = setTimeout(() => void reader.cancel(), timeoutMs);
  try {
    while (!until(events)) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the stream ended after ${events.length} events`);
      buffer += decoder.decode(value, { stream: true });
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end < 0) break;
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const e: { event?: string; id?: string; data: string[]; comment?: string } = { data: [] };
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) e.comment = line.slice(1).trim();
          else {
            const i = line.indexOf(":");
            const field = i < 0 ? line : line.slice(0, i);
            const v = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
            if (field === "event") e.event = v;
            else if (field === "id") e.id = v;
            else if (field === "data") e.data.push(v);
          }
        }
        events.push({
          ...(e.event === undefined ? {} : { event: e.event }),
          ...(e.id === undefined ? {} : { id: e.id }),
          ...(e.comment === undefined ? {} : { comment: e.comment }),
          data: e.data.join("\n"),
        });
      }
    }
    return events;
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
}
