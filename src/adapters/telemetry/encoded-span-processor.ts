// The span processor of OTLP/HTTP protobuf export: the SDK's batch processor's behaviour (a bounded
// queue; batches of at most `maxExportBatchSize` spans; an export started when a batch fills, or
// `scheduledDelayMillis` after its first span; one export at a time until a flush, which sends every
// batch at once and waits for them) with each span encoded as it ends (otlp-trace-protobuf.ts), so
// that ended spans do not wait in memory as objects, surviving collections, until their batch leaves.
import { type Context, context as contexts } from "@opentelemetry/api";
import type { ReadableSpan, Span, SpanProcessor } from "@opentelemetry/sdk-trace";
import { createTraceBatcher, type SpanBatch } from "./otlp-trace-protobuf.js";
import { SUPPRESS_TRACING } from "./span-recorder.js";

const SAMPLED = 1;

/** Why spans were lost: the queue was full, a span could not be encoded, an export failed. */
export type SpanLoss =
  | { readonly kind: "queue-full" }
  | { readonly kind: "unencodable" }
  | { readonly kind: "export"; readonly spans: number };

export interface EncodedSpanProcessorOptions {
  /** The most spans held, encoded and not yet handed to an export; a span past it is dropped. */
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
  readonly scheduledDelayMillis: number;
  /** How long an export may take before it counts as failed. */
  readonly exportTimeoutMillis: number;
  /** Sends one request: `done(true)` once the collector took it, `done(false)` otherwise. */
  readonly send: (batch: SpanBatch, done: (ok: boolean) => void) => void;
  readonly lost: (loss: SpanLoss) => void;
  /** Stops the sender, once every batch was sent. */
  readonly shutdown: () => Promise<void>;
}

export function createEncodedSpanProcessor(o: EncodedSpanProcessorOptions): SpanProcessor {
  const batcher = createTraceBatcher();
  /** Batches sealed, waiting for an export, in order. */
  const ready: SpanBatch[] = [];
  /** Spans encoded and not yet handed to an export: those of `ready` and of the open batch. */
  let queued = 0;
  let inFlight = 0;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** Flushes waiting for every batch to be sent. */
  let waiting: (() => void)[] = [];

  const settle = () => {
    if (inFlight > 0 || ready.length > 0) return;
    const done = waiting;
    waiting = [];
    for (const resolve of done) resolve();
  };

  const send = (batch: SpanBatch): void => {
    inFlight++;
    queued -= batch.count;
    let finished = false;
    const finish = (ok: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(limit);
      inFlight--;
      if (!ok) o.lost({ kind: "export", spans: batch.count });
      // Outside a flush, one export at a time: the next batch leaves when this one is done.
      if (waiting.length > 0) sendAll();
      else if (inFlight === 0) sendNext();
      settle();
    };
    const limit = setTimeout(() => finish(false), o.exportTimeoutMillis);
    limit.unref();
    // The export's own requests are not traced (an instrumented HTTP client would trace them).
    const quiet = contexts.active().setValue(SUPPRESS_TRACING, true);
    try {
      contexts.with(quiet, () => o.send(batch, finish));
    } catch {
      finish(false);
    }
  };

  const sendNext = (): void => {
    const batch = ready.shift();
    if (batch !== undefined) send(batch);
  };

  const sendAll = (): void => {
    for (let batch = ready.shift(); batch !== undefined; batch = ready.shift()) send(batch);
  };

  const seal = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    const batch = batcher.take();
    if (batch !== undefined) ready.push(batch);
  };

  /** Seals the open batch and, when no export is under way, sends the first one waiting. */
  const sealAndSend = (): void => {
    seal();
    if (inFlight === 0) sendNext();
  };

  const flush = (): Promise<void> => {
    seal();
    if (inFlight === 0 && ready.length === 0) return Promise.resolve();
    const done = new Promise<void>((resolve) => waiting.push(resolve));
    sendAll();
    return done;
  };

  return {
    onStart(_span: Span, _parent: Context) {},
    onEnd(span: ReadableSpan) {
      if (stopped || (span.spanContext().traceFlags & SAMPLED) === 0) return;
      if (queued >= o.maxQueueSize) {
        o.lost({ kind: "queue-full" });
        return;
      }
      try {
        batcher.add(span);
      } catch {
        o.lost({ kind: "unencodable" });
        return;
      }
      queued++;
      if (batcher.count >= o.maxExportBatchSize) sealAndSend();
      else if (timer === undefined) {
        timer = setTimeout(() => {
          timer = undefined;
          sealAndSend();
        }, o.scheduledDelayMillis);
        timer.unref();
      }
    },
    forceFlush: flush,
    async shutdown() {
      if (stopped) return;
      await flush();
      stopped = true;
      await o.shutdown();
    },
  };
}
