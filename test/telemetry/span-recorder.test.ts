// Warrant's span recorder against the OpenTelemetry SDK's tracer: the same calls made through both
// end in the same spans (names, kinds, parents, attributes, events, links, statuses, the dropped
// counts, explicit times), ids and clock readings compared by their shape and order only. Each
// case is one of the SDK's rules: what an attribute may be, the 128-item limits, what an ended
// span ignores, status precedence, exceptions, parents and sampling, suppression, `root`.
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  createTraceState,
  SamplingDecision,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { describe, expect, it, vi } from "vitest";
import { createRecordingTracerProvider } from "../../src/adapters/telemetry/span-recorder.js";

const resource = resourceFromAttributes({ "service.name": "warrant-test" });
/** What the SDK's suppressTracing sets (its key, made the API's way). */
const SUPPRESS = createContextKey("OpenTelemetry SDK Context Key SUPPRESS_TRACING");

type Script = (tracer: Tracer, out: unknown[]) => void;

interface Both {
  readonly sdk: ReadableSpan[];
  readonly own: ReadableSpan[];
  /** What each script's calls returned, through the SDK and through the recorder. */
  readonly results: { sdk: unknown[]; own: unknown[] };
}

/** A processor that keeps every sampled span as it ends (as the batch processor takes them). */
function collecting(): SpanProcessor & { readonly spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  return {
    spans,
    onStart: () => undefined,
    onEnd(span) {
      if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) spans.push(span);
    },
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
}

/** Runs `script` on the SDK's tracer and on the recorder's, each with `sampler`. */
function runBoth(script: Script, sampler: () => Sampler): Both {
  const sdkSpans = collecting();
  const sdk = new TracerProvider({ resource, sampler: sampler(), spanProcessors: [sdkSpans] });
  const ownSpans = collecting();
  const made = sampler();
  const own = createRecordingTracerProvider({
    resource,
    sampler: made,
    parentBased: made instanceof ParentBasedSampler,
    processor: ownSpans,
  });
  const results = { sdk: [] as unknown[], own: [] as unknown[] };
  script(sdk.getTracer("warrant", "1.0.0", { schemaUrl: "https://example.test/s" }), results.sdk);
  script(own.getTracer("warrant", "1.0.0", { schemaUrl: "https://example.test/s" }), results.own);
  return { sdk: sdkSpans.spans, own: ownSpans.spans, results };
}

/** A span as compared: ids as the order they were first seen in, clock readings by shape. */
function normalised(spans: readonly ReadableSpan[], explicit: ReadonlySet<number>) {
  const ids = new Map<string, string>();
  const id = (kind: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    if (/^0+$/.test(v)) return `${kind}:invalid`;
    let n = ids.get(`${kind}${v}`);
    if (n === undefined) {
      n = `${kind}#${ids.size}`;
      ids.set(`${kind}${v}`, n);
    }
    return n;
  };
  const time = (t: readonly [number, number]) => {
    expect(t).toHaveLength(2);
    expect(Number.isInteger(t[0]) && Number.isInteger(t[1])).toBe(true);
    // A time the script gave is compared as given; a clock reading only by when it is.
    return explicit.has(t[0]) ? t : "clock";
  };
  return spans.map((s) => {
    const c = s.spanContext();
    expect(s.ended).toBe(true);
    const d = s.duration;
    expect(d[0] > 0 || (d[0] === 0 && d[1] >= 0)).toBe(true);
    return {
      name: s.name,
      kind: s.kind,
      traceId: id("trace", c.traceId),
      spanId: id("span", c.spanId),
      traceFlags: c.traceFlags,
      traceState: c.traceState?.serialize(),
      parent: s.parentSpanContext && {
        traceId: id("trace", s.parentSpanContext.traceId),
        spanId: id("span", s.parentSpanContext.spanId),
        isRemote: s.parentSpanContext.isRemote,
      },
      start: time(s.startTime),
      end: time(s.endTime),
      status: s.status,
      attributes: s.attributes,
      droppedAttributesCount: s.droppedAttributesCount,
      events: s.events.map((e) => ({ ...e, time: time(e.time) })),
      droppedEventsCount: s.droppedEventsCount,
      links: s.links.map((l) => ({
        ...l,
        context: { ...l.context, traceId: id("trace", l.context.traceId), spanId: "link" },
      })),
      droppedLinksCount: s.droppedLinksCount,
      scope: s.instrumentationScope,
      resource: s.resource === resource,
    };
  });
}

/** The two runs end in the same spans; returns the recorder's, normalised. */
function same(
  script: Script,
  sampler: () => Sampler = () => new ParentBasedSampler({ root: new AlwaysOnSampler() }),
  explicitSeconds: readonly number[] = [],
) {
  const both = runBoth(script, sampler);
  const explicit = new Set(explicitSeconds);
  const own = normalised(both.own, explicit);
  expect(own).toEqual(normalised(both.sdk, explicit));
  expect(both.results.own).toEqual(both.results.sdk);
  return own;
}

const many = (n: number, prefix: string): Attributes =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));

describe("the span recorder makes the SDK's spans", () => {
  it("a drive's shape: a root, children under it, kinds, attributes set later", () => {
    const spans = same((tracer) => {
      const root = tracer.startSpan("invoke_workflow fix", {
        attributes: { "gen_ai.operation.name": "invoke_workflow", "warrant.query": "q:1" },
      });
      const ctx = trace.setSpan(context.active(), root);
      const chat = tracer.startSpan(
        "chat m",
        { kind: SpanKind.CLIENT, attributes: { "gen_ai.request.model": "m" } },
        ctx,
      );
      chat.setAttribute("gen_ai.usage.input_tokens", 120);
      chat.setAttributes({ "gen_ai.response.finish_reasons": ["stop"], "x.ok": true });
      chat.end();
      const tool = tracer.startSpan("execute_tool add", {}, trace.setSpan(ctx, chat));
      tool.end();
      root.end();
    });
    expect(spans.map((s) => s.name)).toEqual(["chat m", "execute_tool add", "invoke_workflow fix"]);
    expect(spans[0]?.parent?.spanId).toBe(spans[2]?.spanId);
    expect(spans[1]?.parent?.spanId).toBe(spans[0]?.spanId);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
  });

  it("an attribute that is not a string, number, boolean or array of one of them is left out", () => {
    same((tracer) => {
      const bad = {
        "": "empty key",
        ok: "kept",
        nul: null,
        undef: undefined,
        obj: { a: 1 },
        mixed: [1, "two"],
        holes: ["a", null, "b"],
        nested: [[1]],
        fn: () => 1,
      } as unknown as Attributes;
      const s = tracer.startSpan("s", { attributes: bad });
      s.setAttribute("later", { no: true } as never);
      s.setAttribute("", "x");
      s.setAttribute("gone", undefined as never);
      s.setAttribute("ok", "replaced");
      s.setAttributes(bad);
      s.addEvent("e", bad);
      s.addLink({ context: s.spanContext(), attributes: bad });
      s.end();
    });
  });

  it("an array attribute is copied: changing it afterwards changes nothing", () => {
    const spans = same((tracer) => {
      const given = ["a"];
      const s = tracer.startSpan("s", { attributes: { first: given } });
      s.setAttribute("second", given);
      given.push("b");
      s.end();
    });
    expect(spans[0]?.attributes).toEqual({ first: ["a"], second: ["a"] });
  });

  it("at most 128 attributes, events and links: the rest are counted as dropped", () => {
    const spans = same((tracer) => {
      const s = tracer.startSpan("s", {
        attributes: many(130, "start."),
        links: Array.from({ length: 3 }, () => ({
          context: { traceId: "1".repeat(32), spanId: "2".repeat(16), traceFlags: 1 },
          attributes: many(130, "l."),
        })),
      });
      s.setAttribute("start.0", "replaced, not new");
      s.setAttribute("one.more", 1);
      for (let i = 0; i < 130; i++) s.addEvent(`e${i}`, { i });
      s.addEvent("big", many(129, "ev."));
      s.addLinks(
        Array.from({ length: 130 }, () => ({
          context: { traceId: "3".repeat(32), spanId: "4".repeat(16), traceFlags: 0 },
        })),
      );
      s.end();
    });
    const s = spans[0];
    expect(s?.droppedAttributesCount).toBe(3);
    expect(s?.droppedEventsCount).toBe(3);
    expect(s?.events[0]?.name).toBe("e3");
    expect(s?.droppedLinksCount).toBe(5);
  });

  it("events take their time and attributes in every form the API allows", () => {
    same(
      (tracer) => {
        const s = tracer.startSpan("s", { startTime: [1_700_000_000, 5] });
        s.addEvent("plain");
        s.addEvent("attributes", { a: 1 });
        s.addEvent("hrtime", [1_700_000_001, 7]);
        s.addEvent("date", new Date(1_700_000_002_000));
        s.addEvent("epoch ms", 1_700_000_003_500);
        s.addEvent("attributes and time", { b: "x" }, [1_700_000_004, 9]);
        s.addEvent("time twice", [1_700_000_005, 1], [1_700_000_006, 2]);
        s.end([1_700_000_009, 0]);
      },
      undefined,
      [
        1_700_000_000, 1_700_000_001, 1_700_000_002, 1_700_000_003, 1_700_000_004, 1_700_000_006,
        1_700_000_009,
      ],
    );
  });

  it("a start given as epoch milliseconds or a Date, and an end before the start", () => {
    same(
      (tracer) => {
        tracer.startSpan("ms", { startTime: 1_700_000_000_250 }).end(1_700_000_001_750);
        tracer.startSpan("date", { startTime: new Date(1_700_000_002_000) }).end();
        tracer.startSpan("backwards", { startTime: [1_700_000_005, 0] }).end([1_700_000_004, 0]);
      },
      undefined,
      [1_700_000_000, 1_700_000_001, 1_700_000_002, 1_700_000_005],
    );
  });

  it("status: UNSET never overrides, OK is final, only ERROR keeps a string message", () => {
    const spans = same((tracer) => {
      const a = tracer.startSpan("error then ok");
      a.setStatus({ code: SpanStatusCode.ERROR, message: "boom" });
      a.setStatus({ code: SpanStatusCode.UNSET });
      a.end();
      const b = tracer.startSpan("ok then error");
      b.setStatus({ code: SpanStatusCode.OK, message: "ignored" });
      b.setStatus({ code: SpanStatusCode.ERROR, message: "too late" });
      b.end();
      const c = tracer.startSpan("error with a number for message");
      c.setStatus({ code: SpanStatusCode.ERROR, message: 42 as never });
      c.end();
    });
    expect(spans.map((s) => s.status)).toEqual([
      { code: SpanStatusCode.ERROR, message: "boom" },
      { code: SpanStatusCode.OK },
      { code: SpanStatusCode.ERROR },
    ]);
  });

  it("an ended span ignores everything, a second end too; a new name before the end is kept", () => {
    const spans = same(
      (tracer, out) => {
        const s = tracer.startSpan("first name");
        s.updateName("second name");
        out.push(s.isRecording());
        s.end([1_700_000_000, 0]);
        out.push(s.isRecording());
        s.setAttribute("late", 1);
        s.setAttributes({ later: 2 });
        s.addEvent("late");
        s.addLink({ context: s.spanContext() });
        s.setStatus({ code: SpanStatusCode.ERROR });
        s.updateName("third name");
        s.recordException("late");
        s.end([1_700_000_009, 0]);
      },
      undefined,
      [1_700_000_000],
    );
    expect(spans).toHaveLength(1);
    expect(spans[0]?.name).toBe("second name");
  });

  it("exceptions: a string, an Error, a code, and nothing usable", () => {
    const e = new Error("with stack");
    same((tracer) => {
      const s = tracer.startSpan("s");
      s.recordException("plain text");
      s.recordException(e);
      s.recordException({ code: 17, message: "coded" });
      s.recordException({ name: "Named" });
      s.recordException({} as never);
      s.end();
    });
  });

  it("parents: a remote parent, its trace state, `root` ignoring it, and no parent at all", () => {
    const remote = trace.setSpanContext(context.active(), {
      traceId: "a".repeat(32),
      spanId: "b".repeat(16),
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: createTraceState("vendor=value"),
    });
    const spans = same((tracer) => {
      tracer.startSpan("under remote", {}, remote).end();
      tracer.startSpan("root", { root: true }, remote).end();
      tracer.startSpan("no parent", {}, context.active()).end();
      tracer.startSpan("default context").end();
    });
    expect(spans[0]?.parent?.traceId).toBe(spans[0]?.traceId);
    expect(spans[0]?.parent?.isRemote).toBe(true);
    expect(spans[0]?.parent?.spanId).not.toBe(spans[0]?.spanId);
    expect(spans[0]?.traceState).toBe("vendor=value");
    expect(spans.slice(1).map((s) => s.parent)).toEqual([undefined, undefined, undefined]);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(4);
  });

  it("suppressed tracing gives a non-recording span with the invalid context", () => {
    same((tracer, out) => {
      const s = tracer.startSpan("suppressed", {}, context.active().setValue(SUPPRESS, true));
      out.push(s.isRecording(), s.spanContext());
      s.end();
    });
  });

  it("sampling: always off, parent-based under sampled and unsampled parents, a ratio", () => {
    const script: Script = (tracer, out) => {
      const root = tracer.startSpan("root");
      out.push(root.isRecording(), root.spanContext().traceFlags);
      const child = tracer.startSpan("child", {}, trace.setSpan(context.active(), root));
      out.push(child.isRecording(), child.spanContext().traceFlags);
      child.end();
      root.end();
      for (const flags of [TraceFlags.SAMPLED, TraceFlags.NONE]) {
        const parent = trace.setSpanContext(context.active(), {
          traceId: "c".repeat(32),
          spanId: "d".repeat(16),
          traceFlags: flags,
        });
        const s = tracer.startSpan("under a local parent", {}, parent);
        out.push(s.isRecording(), s.spanContext().traceId, s.spanContext().traceFlags);
        s.end();
      }
    };
    same(script, () => new AlwaysOffSampler());
    same(script, () => new AlwaysOnSampler());
    same(script, () => new ParentBasedSampler({ root: new AlwaysOffSampler() }));
    same(script, () => new ParentBasedSampler({ root: new AlwaysOnSampler() }));
    // A ratio decides by the trace id: under fixed parents both decide alike.
    const fixed: Script = (tracer, out) => {
      for (const id of ["00000000000000000000000000000001", "f".repeat(32), "7".repeat(32)]) {
        const parent = trace.setSpanContext(context.active(), {
          traceId: id,
          spanId: "e".repeat(16),
          traceFlags: TraceFlags.NONE,
        });
        const s = tracer.startSpan("by ratio", {}, parent);
        out.push(s.isRecording());
        s.end();
      }
    };
    same(fixed, () => new TraceIdRatioBasedSampler(0.5));
  });

  it("a child of an unsampled span of its own stays unsampled, with its trace id", () => {
    const spans = same(
      (tracer, out) => {
        const root = tracer.startSpan("root");
        const child = tracer.startSpan("child", {}, trace.setSpan(context.active(), root));
        out.push(child.isRecording(), child.spanContext().traceId === root.spanContext().traceId);
        child.end();
        root.end();
      },
      () => new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    );
    expect(spans).toEqual([]);
  });

  it("a recorded but unsampled parent (a sampler that says RECORD) gives an unsampled child", () => {
    const recordOnly: Sampler = {
      shouldSample: () => ({ decision: SamplingDecision.RECORD }),
      toString: () => "RecordOnly",
    };
    same(
      (tracer, out) => {
        const root = tracer.startSpan("root");
        const child = tracer.startSpan("child", {}, trace.setSpan(context.active(), root));
        out.push(root.isRecording(), root.spanContext().traceFlags);
        out.push(child.isRecording(), child.spanContext().traceFlags);
        child.end();
        root.end();
      },
      () => new ParentBasedSampler({ root: recordOnly }),
    );
  });

  it("startActiveSpan in each of its forms hands the span to the function and returns its value", () => {
    const ending = (value: string) => (s: Span) => {
      s.end();
      return value;
    };
    same((tracer, out) => {
      out.push(tracer.startActiveSpan("two", ending("a")));
      out.push(tracer.startActiveSpan("three", { kind: SpanKind.SERVER }, ending("b")));
      const parent: Context = trace.setSpan(context.active(), tracer.startSpan("parent"));
      out.push(tracer.startActiveSpan("four", { attributes: { x: 1 } }, parent, ending("c")));
      trace.getSpan(parent)?.end();
    });
  });

  it("ids are 16 and 32 hex digits, distinct, and never all zero, even from a random source of zeros", () => {
    const c = collecting();
    const tracer = createRecordingTracerProvider({
      resource,
      sampler: new AlwaysOnSampler(),
      parentBased: false,
      processor: c,
    }).getTracer("t");
    const valid = (s: ReadableSpan) => {
      const { traceId, spanId } = s.spanContext();
      return (
        /^[0-9a-f]{32}$/.test(traceId) &&
        /^[0-9a-f]{16}$/.test(spanId) &&
        !/^0+$/.test(traceId) &&
        !/^0+$/.test(spanId)
      );
    };
    for (let i = 0; i < 300; i++) tracer.startSpan(`s${i}`).end();
    expect(c.spans.every(valid)).toBe(true);
    expect(new Set(c.spans.map((s) => s.spanContext().spanId)).size).toBe(300);
    // A source that gives only zeros, for more ids than one pool of random bytes holds.
    const random = vi.spyOn(Math, "random").mockReturnValue(0);
    try {
      for (let i = 0; i < 300; i++) tracer.startSpan(`z${i}`).end();
    } finally {
      random.mockRestore();
    }
    const zeros = c.spans.slice(300);
    expect(zeros.every(valid)).toBe(true);
    const last = zeros[zeros.length - 1]?.spanContext();
    expect(last?.spanId).toBe(`${"0".repeat(15)}1`);
    expect(last?.traceId).toBe(`${"0".repeat(31)}1`);
  });
});
