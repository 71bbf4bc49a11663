// The span export body Warrant writes (otlp-trace-protobuf.ts) is the SDK serializer's, byte for
// byte: for spans of every shape the SDK makes (attributes of each value type, events, links,
// trace state, statuses, remote parents, several resources and scopes, long and short messages),
// and again once the encodings it keeps are warm or full.
import {
  context,
  createTraceState,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { type ReadableSpan, type SpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import {
  createTraceBatcher,
  createTraceRequestWriter,
} from "../../src/adapters/telemetry/otlp-trace-protobuf.js";

function collector(): { spans: ReadableSpan[]; processor: SpanProcessor } {
  const spans: ReadableSpan[] = [];
  return {
    spans,
    processor: {
      onStart: () => undefined,
      onEnd: (s) => {
        spans.push(s);
      },
      forceFlush: async () => undefined,
      shutdown: async () => undefined,
    },
  };
}

function provider(processor: SpanProcessor, service: string): TracerProvider {
  return new TracerProvider({
    resource: resourceFromAttributes({ "service.name": service, "host.cores": 2 }),
    spanProcessors: [processor],
  });
}

const LONG = "x".repeat(200);
const UNICODE = "naïve — 測試 ✓ \u{1F600}";

/** Spans of every shape a traced drive makes, and some it does not. */
function spansOfEveryShape(t: Tracer, other: Tracer, i: number): void {
  const root = t.startSpan("invoke_workflow demo", {
    attributes: { "warrant.query": `query:${i}`, "warrant.store": "memory" },
  });
  const ctx = trace.setSpan(context.active(), root);
  const chat = t.startSpan(
    "chat scripted",
    {
      kind: SpanKind.CLIENT,
      attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted" },
    },
    ctx,
  );
  chat.setAttributes({
    "gen_ai.response.finish_reasons": ["tool_calls"],
    "gen_ai.usage.input_tokens": 120 + i,
    "gen_ai.usage.output_tokens": 0,
    "warrant.turn.valid": i % 2 === 0,
    "warrant.big": 2 ** 40 + i,
    "warrant.negative": -5 - i,
    "warrant.double": 0.25 + i,
    "warrant.bools": [true, false],
    "warrant.numbers": [1, 2.5, -3],
    "warrant.empty": [],
    "warrant.long": LONG,
    "warrant.unicode": UNICODE,
    "warrant.lone": "\ud800x",
  });
  chat.addEvent("warrant.repair", { "warrant.repair.codes": ["turn_invalid"] });
  chat.addEvent("bare");
  chat.end();
  const tool = t.startSpan(
    "execute_tool add",
    { attributes: { "gen_ai.tool.call.id": `call_${i}`, "gen_ai.tool.name": "add" } },
    ctx,
  );
  tool.setAttribute(GEN_ERROR, "tool_error");
  tool.setStatus({ code: SpanStatusCode.ERROR, message: "it failed: ✗" });
  tool.end();
  const remote = trace.setSpanContext(context.active(), {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: createTraceState("vendor=a,other=b"),
  });
  const linked = other.startSpan(
    "warrant.run proposal",
    {
      links: [
        {
          context: {
            traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
            spanId: "00f067aa0ba902b7",
            traceFlags: TraceFlags.NONE,
            isRemote: true,
          },
          attributes: { "warrant.link": "earlier-drive" },
        },
      ],
    },
    remote,
  );
  linked.setStatus({ code: SpanStatusCode.OK });
  linked.end();
  // Statuses with no message, a remote parent and no events or links: the span's end fields
  // written from the bytes kept for that status and those flags.
  const done = t.startSpan("warrant.step done", {}, ctx);
  done.setStatus({ code: SpanStatusCode.OK });
  done.end();
  const failed = t.startSpan("warrant.step failed", {}, ctx);
  failed.setStatus({ code: SpanStatusCode.ERROR });
  failed.end();
  other.startSpan("warrant.step under a remote parent", {}, remote).end();
  // More attributes than the SDK keeps (128): the dropped ones are counted.
  const crowded = t.startSpan("warrant.step crowded", {}, ctx);
  for (let k = 0; k < 130; k++) crowded.setAttribute(`warrant.k${k}`, k);
  crowded.end();
  // A span past 16 KiB: its length takes three bytes.
  const big: Span = t.startSpan(
    "warrant.step big",
    { attributes: { blob: "y".repeat(20_000) } },
    ctx,
  );
  big.end();
  root.end();
}

const GEN_ERROR = "error.type";

/** Each span written alone by `write` is the SDK's body of that span. */
function expectEachAsSdk(write: (spans: ReadableSpan[]) => Uint8Array, spans: ReadableSpan[]) {
  for (const s of spans) {
    const sdk = Buffer.from(ProtobufTraceSerializer.serializeRequest([s]) ?? new Uint8Array());
    expect(Buffer.from(write([s])).equals(sdk), JSON.stringify(s.attributes)).toBe(true);
  }
}

/**
 * Spans of every shape, `n` rounds of them, of two resources and three scopes (two tracers of one
 * provider, one of another), interleaved as they would end together.
 */
function interleavedSpans(n: number): ReadableSpan[] {
  const a = collector();
  const b = collector();
  const one = provider(a.processor, "one");
  const two = provider(b.processor, "two");
  const tracer = one.getTracer("warrant", "1.0.0", {
    schemaUrl: "https://opentelemetry.io/schemas/gen-ai/1.42.0",
  });
  const plain = one.getTracer("other");
  const elsewhere = two.getTracer("warrant");
  for (let i = 0; i < n; i++) {
    spansOfEveryShape(tracer, plain, i);
    spansOfEveryShape(elsewhere, elsewhere, i);
  }
  return a.spans.flatMap((s, i) => [s, b.spans[i] as ReadableSpan]);
}

describe("the OTLP protobuf body of a span export", () => {
  it("is the SDK serializer's, byte for byte, batch after batch", () => {
    const write = createTraceRequestWriter();
    // Spans of two resources and three scopes, interleaved, in batches; 150 call ids are more than
    // the writer keeps of one key.
    const all = interleavedSpans(150);
    for (let at = 0; at < all.length; at += 97) {
      const batch = all.slice(at, at + 97);
      const ours = Buffer.from(write(batch));
      const sdk = Buffer.from(ProtobufTraceSerializer.serializeRequest(batch) ?? new Uint8Array());
      expect(ours.equals(sdk), `batch at ${at}`).toBe(true);
    }
    expect(
      Buffer.from(write([])).equals(
        Buffer.from(ProtobufTraceSerializer.serializeRequest([]) ?? []),
      ),
    ).toBe(true);
  });

  it("writes a key's number or array from the last one's bytes only while it is the same", () => {
    const c = collector();
    const tracer = provider(c.processor, "one").getTracer("warrant");
    // Each key's values in turn, so a kept value meets the same, a different and a near value.
    const sequences: Record<string, readonly (string | number | boolean | unknown[])[]> = {
      tokens: [120, 120, 16, 120, 0, -0, 0, 2 ** 53, 2 ** 53 + 2, -1, 1.5, 1.5, Number.NaN],
      reasons: [["stop"], ["stop"], ["length"], ["stop", "stop"], ["stop"], [], []],
      mixed: [[1, "1"], [1, 1], ["1", 1], [true], [1], [null, 1], [1, null], [1.5], [-0], [0]],
      kinds: [5, "5", 5, true, [5], 5, "5"],
      long: [["x".repeat(200)], ["x".repeat(200)], ["y".repeat(200)]],
      many: [Array.from({ length: 9 }, (_, k) => k), Array.from({ length: 9 }, (_, k) => k)],
    };
    const longest = Math.max(...Object.values(sequences).map((v) => v.length));
    for (let i = 0; i < longest; i++) {
      const attributes: Record<string, unknown> = {};
      for (const [key, values] of Object.entries(sequences))
        if (i < values.length) attributes[key] = values[i];
      tracer.startSpan("chat", { attributes: attributes as never }).end();
    }
    const write = createTraceRequestWriter();
    expectEachAsSdk(write, c.spans);
    // Each kept value is one key's last: a long item, and more than eight items, are not kept.
    expect(write.kept()).toBeLessThan(1024);
  });

  it("writes a span's attributes from the last ones of its name only where they are the same", () => {
    const c = collector();
    const tracer = provider(c.processor, "one").getTracer("warrant");
    const base = { op: "chat", provider: "scripted", model: "m1" };
    const shapes: Record<string, unknown>[] = [
      base,
      base,
      { ...base, id: "call_1" },
      { ...base, id: "call_2" },
      { ...base, id: "call_2" },
      { ...base, model: "m2" },
      { ...base, model: "m2" },
      { ...base, model: "m2" },
      { op: "chat", vendor: "scripted", model: "m2" },
      { model: "m2", op: "chat", provider: "scripted" },
      { op: "chat" },
      {},
      { op: "chat", provider: "scripted", model: "m2", extra: 1 },
      { ...base, model: "m".repeat(300) },
      { ...base, model: "m".repeat(300) },
      { ...base, tokens: [1, 2] },
      { ...base, tokens: [1, 3] },
      { ...base, tokens: [1, 3] },
      { ...base, tokens: [1, 3] },
      // One position changing back and forth: the template is remade at most on a repeat.
      { ...base, model: "m3" },
      base,
      { ...base, model: "m3" },
      base,
      { ...base, model: "m3" },
      { ...base, model: "m3" },
      base,
      { ...base, big: "b".repeat(3000) },
      { ...base, big: "b".repeat(3000) },
      base,
    ];
    for (const attributes of shapes) {
      tracer.startSpan("chat", { attributes: attributes as never }).end();
      tracer.startSpan("other", { attributes: { op: "other" } }).end();
    }
    const write = createTraceRequestWriter();
    expectEachAsSdk(write, c.spans);
    // The 3 000-character value made its name's attributes too long to keep; nothing long is kept.
    expect(write.kept()).toBeLessThan(2048);
  });

  it("spans encoded one by one as they end make, batch after batch, the SDK's body of that batch", () => {
    const all = interleavedSpans(40);
    const batcher = createTraceBatcher();
    expect(batcher.take()).toBeUndefined();
    for (let at = 0; at < all.length; at += 97) {
      const batch = all.slice(at, at + 97);
      for (const s of batch) batcher.add(s);
      expect(batcher.count).toBe(batch.length);
      const taken = batcher.take();
      const sdk = Buffer.from(ProtobufTraceSerializer.serializeRequest(batch) ?? new Uint8Array());
      expect(taken?.count).toBe(batch.length);
      expect(Buffer.from(taken?.bytes ?? []).equals(sdk), `batch at ${at}`).toBe(true);
      expect(batcher.count).toBe(0);
    }
    expect(batcher.take()).toBeUndefined();
  });

  it("a span that cannot be read fails the write, and none of its batch reaches the next", () => {
    const spans = interleavedSpans(2);
    const broken = Object.create(spans[0] as ReadableSpan, {
      attributes: {
        get() {
          throw new Error("unreadable");
        },
      },
    }) as ReadableSpan;
    const write = createTraceRequestWriter();
    expect(() => write([...spans.slice(0, 5), broken])).toThrow("unreadable");
    const rest = spans.slice(5);
    const sdk = Buffer.from(ProtobufTraceSerializer.serializeRequest(rest) ?? new Uint8Array());
    expect(Buffer.from(write(rest)).equals(sdk)).toBe(true);
    const batcher = createTraceBatcher();
    batcher.add(spans[0] as ReadableSpan);
    expect(() => batcher.add(broken)).toThrow("unreadable");
    expect(batcher.count).toBe(1);
    const one = Buffer.from(
      ProtobufTraceSerializer.serializeRequest([spans[0] as ReadableSpan]) ?? [],
    );
    expect(Buffer.from(batcher.take()?.bytes ?? []).equals(one)).toBe(true);
  });

  it("keeps no long string: captured content and long names are written each time, never kept", () => {
    const c = collector();
    const tracer = provider(c.processor, "one").getTracer("warrant");
    for (let i = 0; i < 300; i++) {
      const big = `${i}:${"p".repeat(10_000)}`;
      // A new long name and a new long value each span, under one key, as captured prompts are.
      tracer.startSpan(`chat ${big}`, { attributes: { "gen_ai.input.messages": big } }).end();
      // And one long value, the same every time.
      tracer.startSpan("chat", { attributes: { "warrant.same": "q".repeat(10_000) } }).end();
    }
    const write = createTraceRequestWriter();
    for (let at = 0; at < c.spans.length; at += 100) {
      const batch = c.spans.slice(at, at + 100);
      const sdk = Buffer.from(ProtobufTraceSerializer.serializeRequest(batch) ?? new Uint8Array());
      expect(Buffer.from(write(batch)).equals(sdk)).toBe(true);
    }
    expect(write.kept()).toBeLessThan(4096);
  });
});
