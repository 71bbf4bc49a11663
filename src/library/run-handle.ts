// The handle of one drive: its events as an async iterable (every iterator sees every event from the
// first, so iterating late loses nothing) and its outcome as a promise. The events are kept until
// the handle is dropped: a loop's budgets bound how many there are.
import type { QueryId } from "../core/ids.js";
import type { LimitKey, LoopDocument, Stop } from "../core/loop/types.js";
import type { BlockReason, WarrantEvent } from "../runtime/events.js";

/** How a drive ended. */
export type LoopOutcome =
  | {
      readonly status: "stopped";
      readonly query: QueryId;
      readonly stop: Stop;
      readonly document: LoopDocument;
    }
  | {
      readonly status: "blocked";
      readonly query: QueryId;
      readonly reason: BlockReason;
      readonly counter?: LimitKey;
      readonly detail: string;
      readonly document: LoopDocument;
    }
  /** Another process drives the loop (it holds the loop's lease). */
  | { readonly status: "leased-elsewhere"; readonly query: QueryId };

export interface RunHandle extends AsyncIterable<WarrantEvent> {
  /** The loop's query id, once the loop is open (or found, on resume). */
  readonly query: Promise<QueryId>;
  /** How the drive ended; rejects with a WarrantError when it could not be driven. */
  readonly result: Promise<LoopOutcome>;
}

/** The events of one drive (or one eval), appended as they happen and read by any number of iterators. */
export class EventLog<E = WarrantEvent> implements AsyncIterable<E> {
  readonly #events: E[] = [];
  #ended = false;
  #failure: { readonly error: unknown } | undefined;
  #wake: (() => void)[] = [];

  push(event: E): void {
    if (this.#ended) return;
    this.#events.push(event);
    this.#notify();
  }

  /** No more events; with an error, iterators throw it after the last event. */
  end(failure?: { readonly error: unknown }): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#failure = failure;
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const w of wake) w();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<E> {
    let next = 0;
    for (;;) {
      const event = this.#events[next];
      if (event !== undefined) {
        next++;
        yield event;
        continue;
      }
      if (this.#ended) {
        if (this.#failure !== undefined) throw this.#failure.error;
        return;
      }
      await new Promise<void>((resolve) => this.#wake.push(resolve));
    }
  }
}

/** A handle over a drive that starts now; neither promise is left unhandled if nobody awaits it. */
export function startHandle(
  log: EventLog,
  drive: (opened: (query: QueryId) => void) => Promise<LoopOutcome>,
): RunHandle {
  let opened: (query: QueryId) => void = () => undefined;
  let failed: (error: unknown) => void = () => undefined;
  const query = new Promise<QueryId>((resolve, reject) => {
    opened = resolve;
    failed = reject;
  });
  const result = drive(opened).then(
    (outcome) => {
      opened(outcome.query);
      log.end();
      return outcome;
    },
    (error: unknown) => {
      failed(error);
      log.end({ error });
      throw error;
    },
  );
  query.catch(() => undefined);
  result.catch(() => undefined);
  return { query, result, [Symbol.asyncIterator]: () => log[Symbol.asyncIterator]() };
}
