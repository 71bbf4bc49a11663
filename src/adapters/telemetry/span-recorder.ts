// Warrant's own tracer provider, behind the tracing Warrant exports itself (startOtlp): spans with
// the OpenTelemetry SDK's semantics (sampling, parents and trace state, attribute sanitising, the
// SDK's default limits of 128 attributes, events and links, what an ended span ignores) at a part
// of its cost a span: no per-span timers, clock anchoring or span metrics, and attributes checked
// by type once. An ended span is an SDK `ReadableSpan`, handed to the span processor as the SDK's
// are (the SDK's batch processor and exporters take it as their own; the protobuf export encodes
// it); test/telemetry/span-recorder.test.ts records the same calls here and in the SDK and compares
// every span. A `tracerProvider` a library user gives is used as given, never this.
import {
  type Attributes,
  type AttributeValue,
  type Context,
  context as contexts,
  type Exception,
  type HrTime,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  type Link,
  type SamplingResult,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, Sampler, SpanProcessor, TimedEvent } from "@opentelemetry/sdk-trace";

/** The SDK's default span limits (its TracerProvider's, with no `spanLimits` given). */
const LIMIT = 128;

/** SamplingDecision.RECORD_AND_SAMPLED and NOT_RECORD (the API's enum values). */
const NOT_RECORD = 0;
const RECORD_AND_SAMPLED = 2;

/** The context key the SDK's `suppressTracing` sets (the API makes keys with Symbol.for). */
export const SUPPRESS_TRACING = Symbol.for("OpenTelemetry SDK Context Key SUPPRESS_TRACING");

type Scope = ReadableSpan["instrumentationScope"];

// Time: HrTime [seconds, nanoseconds] since the epoch, as the SDK writes it.

const NANOS = 1e9;

function millisToHrTime(ms: number): HrTime {
  const s = ms / 1000;
  const seconds = Math.trunc(s);
  return [seconds, Math.round((s % 1) * NANOS)];
}

function addHrTimes(a: HrTime, b: HrTime): HrTime {
  let seconds = a[0] + b[0];
  let nanos = a[1] + b[1];
  if (nanos >= NANOS) {
    nanos -= NANOS;
    seconds += 1;
  }
  return [seconds, nanos];
}

const ORIGIN = millisToHrTime(performance.timeOrigin);

/** Now: the process's time origin plus the monotonic clock since, as the SDK's `hrTime()`. */
function hrNow(): HrTime {
  return addHrTimes(ORIGIN, millisToHrTime(performance.now()));
}

function isHrTime(t: unknown): t is HrTime {
  return Array.isArray(t) && t.length === 2 && typeof t[0] === "number" && typeof t[1] === "number";
}

function isTimeInput(t: unknown): t is TimeInput {
  return isHrTime(t) || typeof t === "number" || t instanceof Date;
}

/** A time the caller gave (a number below the monotonic clock is read as one of its readings). */
function timeOf(t: TimeInput | undefined): HrTime {
  if (t === undefined) return hrNow();
  if (typeof t === "number")
    return t <= performance.now() ? addHrTimes(ORIGIN, millisToHrTime(t)) : millisToHrTime(t);
  if (t instanceof Date) return millisToHrTime(t.getTime());
  if (isHrTime(t)) return t;
  return hrNow();
}

// Attributes, as the SDK takes them: keys non-empty, values a string, number or boolean, or an
// array whose items are all one of those (null items allowed); anything else is left out.

function isValue(v: unknown): boolean {
  const type = typeof v;
  if (type === "string" || type === "number" || type === "boolean") return true;
  if (!Array.isArray(v)) return false;
  let itemType: string | undefined;
  for (const item of v) {
    if (item == null) continue;
    const t = typeof item;
    if (t === itemType) continue;
    if (itemType !== undefined || (t !== "string" && t !== "number" && t !== "boolean"))
      return false;
    itemType = t;
  }
  return true;
}

interface Kept {
  readonly attributes: Attributes;
  readonly count: number;
  readonly dropped: number;
}

/**
 * A copy of the attributes the SDK keeps, at most LIMIT; how many more were left out. A null value
 * is left out of a span's attributes, but kept (and counted) in an event's or a link's, as the SDK
 * does (`keepNull`).
 */
function boundedAttributes(given: Attributes | undefined, keepNull: boolean): Kept {
  const attributes: Attributes = {};
  let count = 0;
  let dropped = 0;
  if (typeof given !== "object" || given === null) return { attributes, count, dropped };
  for (const key in given) {
    if (!Object.hasOwn(given, key) || key === "") continue;
    const value = given[key];
    if (value == null ? !keepNull : !isValue(value)) continue;
    if (count >= LIMIT) {
      dropped++;
      continue;
    }
    attributes[key] = Array.isArray(value) ? value.slice() : value;
    count++;
  }
  return { attributes, count, dropped };
}

// Ids: random, as the SDK's generator makes them (never all zero), from a pool of random bytes
// turned into hex once per pool: an id is a slice of that text (V8 keeps a slice of a long string
// as a view, not a copy).

const POOL = 4096;
let pool = Buffer.allocUnsafe(0);
let poolHex = "";
let poolAt = POOL;

function randomHex(bytes: number): string {
  if (poolAt + bytes > pool.length) {
    pool = Buffer.allocUnsafe(POOL);
    for (let i = 0; i < POOL; i += 4) pool.writeUInt32BE((Math.random() * 2 ** 32) >>> 0, i);
    poolHex = pool.toString("hex");
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += bytes;
  for (let i = at; i < at + bytes; i++)
    if (pool[i] !== 0) return poolHex.slice(2 * at, 2 * (at + bytes));
  // All zero (one in 2^64 for a span id): the last byte made 1, as the SDK does.
  return `${"00".repeat(bytes - 1)}01`;
}

interface Recorder {
  readonly resource: Resource;
  readonly sampler: Sampler;
  /** The sampler is parent-based, with the SDK's defaults for a parent's decision. */
  readonly parentBased: boolean;
  readonly processor: SpanProcessor;
}

const KEEP: SamplingResult = { decision: RECORD_AND_SAMPLED };

const NO_LINKS = Object.freeze<Link[]>([]) as Link[];
const NO_EVENTS = Object.freeze<TimedEvent[]>([]) as TimedEvent[];
const NOT_ENDED = Object.freeze<HrTime>([0, 0]) as HrTime;
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });

/** A recording span: the API's `Span` while open, an SDK `ReadableSpan` once ended. */
class RecordedSpan implements Span {
  readonly attributes: Attributes;
  // Shared and frozen until the first one is added: most spans have none.
  links: Link[] = NO_LINKS;
  events: TimedEvent[] = NO_EVENTS;
  readonly startTime: HrTime;
  endTime: HrTime = NOT_ENDED;
  status: SpanStatus = UNSET;
  droppedAttributesCount: number;
  droppedEventsCount = 0;
  droppedLinksCount = 0;
  ended = false;
  private count: number;

  constructor(
    private readonly spanCtx: SpanContext,
    public name: string,
    readonly kind: SpanKind,
    readonly parentSpanContext: SpanContext | undefined,
    attributes: Attributes | undefined,
    links: readonly Link[] | undefined,
    startTime: TimeInput | undefined,
    readonly resource: Resource,
    readonly instrumentationScope: Scope,
    private readonly processor: SpanProcessor,
    parentCtx: Context,
  ) {
    if (links !== undefined) for (const l of links) this.addLink(l);
    this.startTime = timeOf(startTime);
    const kept = boundedAttributes(attributes, false);
    this.attributes = kept.attributes;
    this.droppedAttributesCount = kept.dropped;
    this.count = kept.count;
    processor.onStart(this as never, parentCtx);
  }

  spanContext(): SpanContext {
    return this.spanCtx;
  }

  get duration(): HrTime {
    let seconds = this.endTime[0] - this.startTime[0];
    let nanos = this.endTime[1] - this.startTime[1];
    if (nanos < 0) {
      seconds -= 1;
      nanos += NANOS;
    }
    return [seconds, nanos];
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (value == null || this.ended || key.length === 0 || !isValue(value)) return this;
    const isNew = !Object.hasOwn(this.attributes, key);
    if (isNew && this.count >= LIMIT) {
      this.droppedAttributesCount++;
      return this;
    }
    this.attributes[key] = Array.isArray(value) ? value.slice() : value;
    if (isNew) this.count++;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes)
      if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key] as AttributeValue);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    let attributes = attributesOrTime as Attributes | undefined;
    let at = time;
    if (isTimeInput(attributesOrTime)) {
      if (!isTimeInput(time)) at = attributesOrTime;
      attributes = undefined;
    }
    if (this.events === NO_EVENTS) this.events = [];
    else if (this.events.length >= LIMIT) {
      this.events.shift();
      this.droppedEventsCount++;
    }
    const kept = boundedAttributes(attributes, true);
    this.events.push({
      name,
      attributes: kept.attributes,
      time: timeOf(at),
      droppedAttributesCount: kept.dropped,
    });
    return this;
  }

  addLink(link: Link): this {
    if (this.ended) return this;
    if (this.links === NO_LINKS) this.links = [];
    else if (this.links.length >= LIMIT) {
      this.links.shift();
      this.droppedLinksCount++;
    }
    const kept = boundedAttributes(link.attributes, true);
    const made: { context: SpanContext; attributes?: Attributes; droppedAttributesCount?: number } =
      { context: link.context };
    if (kept.count > 0) made.attributes = kept.attributes;
    if (kept.dropped > 0) made.droppedAttributesCount = kept.dropped;
    this.links.push(made);
    return this;
  }

  addLinks(links: Link[]): this {
    for (const l of links) this.addLink(l);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.ended || status.code === SpanStatusCode.UNSET) return this;
    if (this.status.code === SpanStatusCode.OK) return this;
    this.status =
      status.code === SpanStatusCode.ERROR && typeof status.message === "string"
        ? { code: status.code, message: status.message }
        : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  end(endTime?: TimeInput): void {
    if (this.ended) return;
    let end = timeOf(endTime);
    if (end[0] < this.startTime[0] || (end[0] === this.startTime[0] && end[1] < this.startTime[1]))
      end = [this.startTime[0], this.startTime[1]];
    this.endTime = end;
    this.ended = true;
    this.processor.onEnd(this as never);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === "string") attributes["exception.message"] = exception;
    else if (exception) {
      if (exception.code) attributes["exception.type"] = exception.code.toString();
      else if (exception.name) attributes["exception.type"] = exception.name;
      if (exception.message) attributes["exception.message"] = exception.message;
      if (exception.stack) attributes["exception.stacktrace"] = exception.stack;
    }
    if (attributes["exception.type"] || attributes["exception.message"])
      this.addEvent("exception", attributes, time);
  }
}

class RecordingTracer implements Tracer {
  constructor(
    private readonly recorder: Recorder,
    private readonly scope: Scope,
  ) {}

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = contexts.active()): Span {
    const parentCtx = options.root === true ? trace.deleteSpan(ctx) : ctx;
    if (parentCtx.getValue(SUPPRESS_TRACING) === true)
      return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    const parentSpan = trace.getSpan(parentCtx);
    // A span of this recorder is a valid local parent, with no ids to check again.
    const own = parentSpan instanceof RecordedSpan;
    const parent = parentSpan?.spanContext();
    const valid = own || (parent !== undefined && isSpanContextValid(parent));
    const traceId = valid ? (parent as SpanContext).traceId : randomHex(16);
    const spanId = randomHex(8);
    const kind = options.kind ?? SpanKind.INTERNAL;
    const r = this.recorder;
    const links = options.links ?? [];
    // Parent-based sampling under a sampled local parent is always "record and sample" (the SDK's
    // ParentBasedSampler with its default AlwaysOnSampler for that case): no sampler to ask.
    const sampled =
      own && r.parentBased && ((parent as SpanContext).traceFlags & TraceFlags.SAMPLED) !== 0
        ? KEEP
        : r.sampler.shouldSample(parentCtx, traceId, name, kind, options.attributes ?? {}, links);
    const traceState = sampled.traceState ?? (valid ? parent?.traceState : undefined);
    const spanContext: SpanContext = {
      traceId,
      spanId,
      traceFlags: sampled.decision === RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
      ...(traceState === undefined ? {} : { traceState }),
    };
    if (sampled.decision === NOT_RECORD) return trace.wrapSpanContext(spanContext);
    const attributes =
      sampled.attributes === undefined
        ? options.attributes
        : { ...options.attributes, ...sampled.attributes };
    return new RecordedSpan(
      spanContext,
      name,
      kind,
      valid ? parent : undefined,
      attributes,
      links,
      options.startTime,
      r.resource,
      this.scope,
      r.processor,
      parentCtx,
    );
  }

  /** As the SDK's: `(name, fn)`, `(name, options, fn)` or `(name, options, context, fn)`. */
  startActiveSpan = ((name: string, ...rest: unknown[]) => {
    if (rest.length === 0) return undefined;
    const fn = rest[rest.length - 1] as (span: Span) => unknown;
    const options = (rest.length >= 2 ? rest[0] : undefined) as SpanOptions | undefined;
    const given = (rest.length >= 3 ? rest[1] : undefined) as Context | undefined;
    const ctx = given ?? contexts.active();
    const span = this.startSpan(name, options, ctx);
    return contexts.with(trace.setSpan(ctx, span), fn, undefined, span);
  }) as Tracer["startActiveSpan"];
}

export interface RecordingTracerProvider extends TracerProvider {
  /** Hands every ended span to the processor's export now. */
  forceFlush(): Promise<void>;
  /** Flushes and stops the processor. */
  shutdown(): Promise<void>;
}

/**
 * A tracer provider whose spans go to `processor` when they end, sampled by `sampler` (with
 * `parentBased` true only where it is the SDK's ParentBasedSampler with its default delegates).
 */
export function createRecordingTracerProvider(recorder: Recorder): RecordingTracerProvider {
  const tracers = new Map<string, RecordingTracer>();
  return {
    getTracer(name, version, opts) {
      const key = `${name}@${version || ""}:${opts?.schemaUrl || ""}`;
      let tracer = tracers.get(key);
      if (tracer === undefined) {
        const schemaUrl = opts?.schemaUrl;
        tracer = new RecordingTracer(recorder, {
          name,
          ...(version === undefined ? {} : { version }),
          ...(schemaUrl === undefined ? {} : { schemaUrl }),
        });
        tracers.set(key, tracer);
      }
      return tracer;
    },
    forceFlush: () => recorder.processor.forceFlush(),
    shutdown: () => recorder.processor.shutdown(),
  };
}
