// The protobuf span processor (encoded-span-processor.ts) keeps the SDK batch processor's rules
// while it encodes each span as it ends: batches of at most maxExportBatchSize, an export when a
// batch fills or scheduledDelayMillis after its first span, one export at a time until a flush
// sends them all, a bounded queue whose overflow is a loss, an export that fails or never answers
// is a loss, and a body that is the SDK serializer's for the same spans. Unsampled spans are not
// sent; after shutdown nothing is taken.
import {
  type Context,
  type ContextManager,
  context,
  createContextKey,
  ROOT_CONTEXT,
  type Span,
  TraceFlags,
  type Tracer,
} from "@opentelemetry/api";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, type ReadableSpan, type SpanProcessor } from "@opentelemetry/sdk-trace";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createEncodedSpanProcessor,
  type EncodedSpanProcessorOptions,
  type SpanLoss,
} from "../../src/adapters/telemetry/encoded-span-processor.js";
import type { SpanBatch } from "../../src/adapters/telemetry/otlp-trace-protobuf.js";
import { createRecordingTracerProvider } from "../../src/adapters/telemetry/span-recorder.js";

/** What the SDK's suppressTracing sets (its key, made the API's way). */
const SUPPRESS = createContextKey("OpenTelemetry SDK Context Key SUPPRESS_TRACING");

interface Sent {
  readonly batch: SpanBatch;
  readonly done: (ok: boolean) => void;
}

function setup(options: { maxQueueSize?: number; batch?: number; delay?: number } = {}) {
  const sent: Sent[] = [];
  const losses: SpanLoss[] = [];
  const ended: ReadableSpan[] = [];
  let stopped = 0;
  const processor = createEncodedSpanProcessor({
    maxQueueSize: options.maxQueueSize ?? 100,
    maxExportBatchSize: options.batch ?? 4,
    scheduledDelayMillis: options.delay ?? 1000,
    exportTimeoutMillis: 5000,
    send: (batch, done) => sent.push({ batch, done }),
    lost: (loss) => losses.push(loss),
    shutdown: async () => {
      stopped++;
    },
  });
  // Every span it is given is also kept, to serialise with the SDK.
  const watching: SpanProcessor = {
    onStart: (s, c) => processor.onStart(s as never, c),
    onEnd(s) {
      if ((s.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) ended.push(s);
      processor.onEnd(s);
    },
    forceFlush: () => processor.forceFlush(),
    shutdown: () => processor.shutdown(),
  };
  const tracer: Tracer = createRecordingTracerProvider({
    resource: resourceFromAttributes({ "service.name": "test" }),
    sampler: new AlwaysOnSampler(),
    parentBased: true,
    processor: watching,
  }).getTracer("warrant", "1.0.0");
  const spans = (n: number, name = "step") => {
    for (let i = 0; i < n; i++)
      tracer.startSpan(`${name} ${i % 3}`, { attributes: { i, name } }).end();
  };
  return { processor, sent, losses, ended, spans, tracer, stopped: () => stopped };
}

/** Ends one span under a processor whose batches hold one span, sent by `send`. */
function endOneSpan(send: EncodedSpanProcessorOptions["send"], lost: (l: SpanLoss) => void): void {
  const processor = createEncodedSpanProcessor({
    maxQueueSize: 10,
    maxExportBatchSize: 1,
    scheduledDelayMillis: 1000,
    exportTimeoutMillis: 1000,
    send,
    lost,
    shutdown: async () => undefined,
  });
  createRecordingTracerProvider({
    resource: resourceFromAttributes({}),
    sampler: new AlwaysOnSampler(),
    parentBased: true,
    processor,
  })
    .getTracer("t")
    .startSpan("a")
    .end();
}

/** The SDK's body for the spans of `from` to `to`. */
function sdkBody(ended: readonly ReadableSpan[], from: number, to: number): Buffer {
  return Buffer.from(ProtobufTraceSerializer.serializeRequest(ended.slice(from, to)) ?? []);
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the protobuf span processor", () => {
  it("sends a full batch at once, one export at a time, each body the SDK's for its spans", async () => {
    const t = setup({ batch: 4 });
    t.spans(3);
    expect(t.sent).toHaveLength(0);
    t.spans(1);
    expect(t.sent.map((s) => s.batch.count)).toEqual([4]);
    expect(Buffer.from(t.sent[0]?.batch.bytes ?? []).equals(sdkBody(t.ended, 0, 4))).toBe(true);
    // While that export is out, the next full batches wait.
    t.spans(8);
    expect(t.sent).toHaveLength(1);
    t.sent[0]?.done(true);
    expect(t.sent.map((s) => s.batch.count)).toEqual([4, 4]);
    t.sent[1]?.done(true);
    expect(t.sent.map((s) => s.batch.count)).toEqual([4, 4, 4]);
    expect(Buffer.from(t.sent[2]?.batch.bytes ?? []).equals(sdkBody(t.ended, 8, 12))).toBe(true);
    t.sent[2]?.done(true);
    expect(t.losses).toEqual([]);
  });

  it("sends a batch that does not fill once the delay after its first span has passed", async () => {
    const t = setup({ batch: 10, delay: 1000 });
    t.spans(2);
    await vi.advanceTimersByTimeAsync(999);
    expect(t.sent).toHaveLength(0);
    t.spans(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.sent.map((s) => s.batch.count)).toEqual([3]);
    expect(Buffer.from(t.sent[0]?.batch.bytes ?? []).equals(sdkBody(t.ended, 0, 3))).toBe(true);
  });

  it("a flush seals the open batch and sends every waiting batch at once, then resolves", async () => {
    const t = setup({ batch: 4 });
    t.spans(4); // sent, not answered
    t.spans(9); // two full batches wait, one open of 1
    let flushed = false;
    const flush = t.processor.forceFlush().then(() => {
      flushed = true;
    });
    expect(t.sent.map((s) => s.batch.count)).toEqual([4, 4, 4, 1]);
    for (const s of t.sent.slice(0, 3)) s.done(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(flushed).toBe(false);
    t.sent[3]?.done(true);
    await flush;
    expect(flushed).toBe(true);
    // The bodies together carry every span, in order.
    let at = 0;
    for (const s of t.sent) {
      expect(Buffer.from(s.batch.bytes).equals(sdkBody(t.ended, at, at + s.batch.count))).toBe(
        true,
      );
      at += s.batch.count;
    }
    expect(at).toBe(13);
    // Nothing held: a flush resolves at once.
    await t.processor.forceFlush();
  });

  it("a full queue drops the span and says so; sent spans leave the queue", () => {
    const t = setup({ maxQueueSize: 6, batch: 4 });
    t.spans(4); // sent: out of the queue
    t.spans(6); // queued: 4 in a waiting batch, 2 open
    expect(t.losses).toEqual([]);
    t.spans(2);
    expect(t.losses).toEqual([{ kind: "queue-full" }, { kind: "queue-full" }]);
    t.sent[0]?.done(true);
    // The waiting batch left: room again.
    t.spans(1);
    expect(t.losses).toHaveLength(2);
  });

  it("an export that fails, or does not answer in time, is a loss of its spans; the next one goes", async () => {
    const t = setup({ batch: 2 });
    t.spans(8);
    t.sent[0]?.done(false);
    expect(t.losses).toEqual([{ kind: "export", spans: 2 }]);
    expect(t.sent).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(5000);
    expect(t.losses).toEqual([
      { kind: "export", spans: 2 },
      { kind: "export", spans: 2 },
    ]);
    expect(t.sent).toHaveLength(3);
    // An answer after the timeout changes nothing: no second loss, the waiting batch still waits.
    t.sent[1]?.done(false);
    expect(t.losses).toHaveLength(2);
    expect(t.sent).toHaveLength(3);
    t.sent[2]?.done(true);
    expect(t.sent).toHaveLength(4);
  });

  it("exports with tracing suppressed, so an instrumented HTTP client does not trace them", () => {
    // A context manager that keeps the active context on a stack (none is registered by default).
    const stack: Context[] = [ROOT_CONTEXT];
    const manager: ContextManager = {
      active: () => stack[stack.length - 1] as Context,
      with(ctx, fn, thisArg, ...args) {
        stack.push(ctx);
        try {
          return fn.call(thisArg, ...args);
        } finally {
          stack.pop();
        }
      },
      bind: (_ctx, target) => target,
      enable() {
        return this;
      },
      disable() {
        return this;
      },
    };
    context.setGlobalContextManager(manager);
    try {
      const seen: unknown[] = [];
      endOneSpan(
        (_batch, done) => {
          seen.push(context.active().getValue(SUPPRESS));
          done(true);
        },
        () => undefined,
      );
      expect(seen).toEqual([true]);
      expect(context.active().getValue(SUPPRESS)).toBeUndefined();
    } finally {
      context.disable();
    }
  });

  it("a span that cannot be encoded is dropped and said; the batch goes on without it", () => {
    const t = setup({ batch: 2 });
    t.spans(1);
    const good = t.ended[0] as ReadableSpan;
    const broken = Object.create(good, {
      attributes: {
        get() {
          throw new Error("unreadable");
        },
      },
    }) as ReadableSpan;
    t.processor.onEnd(broken);
    expect(t.losses).toEqual([{ kind: "unencodable" }]);
    expect(t.sent).toHaveLength(0);
    t.spans(1);
    expect(t.sent.map((s) => s.batch.count)).toEqual([2]);
    expect(Buffer.from(t.sent[0]?.batch.bytes ?? []).equals(sdkBody(t.ended, 0, 2))).toBe(true);
  });

  it("a sender that throws is a failed export, not a crash", () => {
    const losses: SpanLoss[] = [];
    endOneSpan(
      () => {
        throw new Error("socket gone");
      },
      (loss) => losses.push(loss),
    );
    expect(losses).toEqual([{ kind: "export", spans: 1 }]);
  });

  it("unsampled spans are not sent; after shutdown nothing is taken and the sender is stopped", async () => {
    const t = setup({ batch: 2 });
    const unsampled: Span = t.tracer.startSpan("x");
    (unsampled.spanContext() as { traceFlags: number }).traceFlags = TraceFlags.NONE;
    unsampled.end();
    t.spans(1);
    const down = t.processor.shutdown();
    expect(t.sent.map((s) => s.batch.count)).toEqual([1]);
    t.sent[0]?.done(true);
    await down;
    expect(t.stopped()).toBe(1);
    t.spans(5);
    await vi.advanceTimersByTimeAsync(5000);
    expect(t.sent).toHaveLength(1);
    await t.processor.shutdown();
    expect(t.stopped()).toBe(1);
  });
});
