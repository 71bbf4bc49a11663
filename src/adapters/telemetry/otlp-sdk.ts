// The OpenTelemetry SDK behind tracing when Warrant exports itself: a tracer provider (Warrant's
// own span recorder, with the SDK's samplers) whose spans wait in a bounded queue
// (OTEL_BSP_MAX_QUEUE_SIZE) and leave in batches over OTLP/HTTP (protobuf or JSON), and a meter
// provider exported on an interval. Loaded only when tracing is on.
// A collector that cannot be reached never holds a drive up: export runs beside it, spans that do
// not fit the queue are dropped, and the first loss is said once, naming only the collector's origin.
import type {
  MeterProvider as ApiMeterProvider,
  TracerProvider as ApiTracerProvider,
  Context,
} from "@opentelemetry/api";
import type { IExporterMetricsHelper, ISerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  AggregationType,
  InstrumentType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  type Span,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace";
import { aggregatingMeter } from "./aggregating-meter.js";
import { type OtlpConfig, type OtlpTarget, originOf, type SamplerConfig } from "./otlp-env.js";
import type { SpanBatch } from "./otlp-trace-protobuf.js";
import { createRecordingTracerProvider } from "./span-recorder.js";

/** How long a flush, or a close, waits for the collector (not at all once an export failed). */
export const CLOSE_WAIT_MS = 2000;

export interface OtlpProviders {
  readonly tracerProvider: ApiTracerProvider;
  readonly meterProvider?: ApiMeterProvider;
  /** Sends what is held now; waits at most `CLOSE_WAIT_MS`, and not at all once an export failed. */
  flush(): Promise<void>;
  /** Sends what is held and stops both providers, within the same bound as `flush`. */
  shutdown(): Promise<void>;
}

/** Export succeeded (ExportResultCode.SUCCESS). */
const SUCCESS = 0;
const SAMPLED = 1;

type SpanResult = Parameters<Parameters<SpanExporter["export"]>[1]>[0];

/** Whether `work` settled within `ms` (it runs on either way). */
function within(ms: number, work: Promise<unknown>): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    const settled = () => {
      clearTimeout(timer);
      resolve(true);
    };
    work.then(settled, settled);
  });
}

function samplerOf(s: SamplerConfig): Sampler {
  const root =
    s.kind === "always_on"
      ? new AlwaysOnSampler()
      : s.kind === "always_off"
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(s.ratio);
  return s.parentBased ? new ParentBasedSampler({ root }) : root;
}

type HttpExport = typeof import("@opentelemetry/otlp-exporter-base/node-http");

const CONTENT_TYPE = { "http/protobuf": "application/x-protobuf", "http/json": "application/json" };

/**
 * The SDK's OTLP/HTTP configuration for `t`: its transport's defaults (the keep-alive agent, the
 * retries, compression and certificates as the process's environment sets them), with the URL,
 * timeout and headers Warrant read from the environment it was given, and only those headers. The
 * SDK would merge the process's OTEL_EXPORTER_OTLP_*HEADERS under them even where a library user
 * gave Warrant an environment of its own: a key meant for one collector would reach another.
 */
function httpConfig(http: HttpExport, t: OtlpTarget, signal: "TRACES" | "METRICS") {
  const contentType = CONTENT_TYPE[t.protocol];
  const config = http.convertLegacyHttpOptions(
    { url: t.url, timeoutMillis: t.timeoutMs },
    signal,
    signal === "TRACES" ? "v1/traces" : "v1/metrics",
    { "Content-Type": contentType },
  );
  const headers = { ...t.headers, "Content-Type": contentType };
  return { ...config, headers: async () => headers };
}

type Transformer = typeof import("@opentelemetry/otlp-transformer");

/**
 * The SDK's exporter of spans to `t` (its HTTP transport, retries and response handling), with the
 * serializer and the item count `parts` gives for the transformer.
 */
async function traceExporter<T>(
  t: OtlpTarget,
  parts: (x: Transformer) => {
    serializer: ISerializer<T, unknown>;
    helper: IExporterMetricsHelper<T>;
  },
) {
  const [base, http, transformer] = await Promise.all([
    import("@opentelemetry/otlp-exporter-base"),
    import("@opentelemetry/otlp-exporter-base/node-http"),
    import("@opentelemetry/otlp-transformer"),
  ]);
  const { serializer, helper } = parts(transformer);
  const delegate = http.createOtlpHttpExportDelegate(
    httpConfig(http, t, "TRACES"),
    serializer,
    "otlp_http_span_exporter",
    helper,
    undefined,
  );
  return new base.OTLPExporterBase(delegate);
}

/** The OTLP/HTTP exporter of spans in JSON: the SDK's, serializer included. */
function jsonTraceExporter(t: OtlpTarget): Promise<SpanExporter> {
  return traceExporter(t, (x) => ({
    serializer: x.JsonTraceSerializer,
    helper: x.TraceExporterMetricsHelper,
  }));
}

/**
 * The sender of protobuf span batches, encoded as their spans ended (encoded-span-processor.ts):
 * the SDK's exporter, given each request's bytes as they are.
 */
function protobufTraceSender(t: OtlpTarget) {
  return traceExporter<SpanBatch>(t, (x) => ({
    serializer: {
      serializeRequest: (batch) => batch.bytes,
      deserializeResponse: (body) => x.ProtobufTraceSerializer.deserializeResponse(body),
    },
    helper: { name: "span", countItems: (batch) => batch.count },
  }));
}

/** The SDK's OTLP/HTTP exporter of metrics, with the configuration of `httpConfig`. */
async function metricExporter(t: OtlpTarget): Promise<PushMetricExporter> {
  const [metrics, http, transformer] = await Promise.all([
    import("@opentelemetry/exporter-metrics-otlp-http"),
    import("@opentelemetry/otlp-exporter-base/node-http"),
    import("@opentelemetry/otlp-transformer"),
  ]);
  const delegate = http.createOtlpHttpExportDelegate(
    httpConfig(http, t, "METRICS"),
    t.protocol === "http/json"
      ? transformer.JsonMetricsSerializer
      : transformer.ProtobufMetricsSerializer,
    "otlp_http_metric_exporter",
    transformer.MetricsExporterMetricsHelper,
    undefined,
  );
  return new metrics.OTLPMetricExporterBase(delegate);
}

/**
 * Our aggregating meter for `exporter`, where it asks for the default aggregation of histograms
 * and counters, in the temporality it asks for; `sdk` gives the SDK's provider (other instruments).
 */
function ownAggregation(exporter: PushMetricExporter, sdk: () => MeterProvider) {
  const defaults = [InstrumentType.HISTOGRAM, InstrumentType.COUNTER].every((kind) => {
    const type = exporter.selectAggregation?.(kind)?.type ?? AggregationType.DEFAULT;
    return type === AggregationType.DEFAULT;
  });
  if (!defaults) return undefined;
  return aggregatingMeter(
    sdk,
    (kind) =>
      exporter.selectAggregationTemporality?.(
        kind === "histogram" ? InstrumentType.HISTOGRAM : InstrumentType.COUNTER,
      ) ?? AggregationTemporality.CUMULATIVE,
  );
}

type Lost = (what: string) => void;

/**
 * Protobuf: each span encoded as it ends, in batches as the SDK's batch processor makes them, sent
 * by the SDK's transport.
 */
async function encodedProcessor(config: OtlpConfig, lost: Lost): Promise<SpanProcessor> {
  const traces = config.traces;
  const [sender, { createEncodedSpanProcessor }] = await Promise.all([
    protobufTraceSender(traces),
    import("./encoded-span-processor.js"),
  ]);
  return createEncodedSpanProcessor({
    maxQueueSize: config.maxQueueSize,
    maxExportBatchSize: Math.min(512, config.maxQueueSize),
    scheduledDelayMillis: config.scheduleDelayMs,
    exportTimeoutMillis: traces.timeoutMs,
    send: (batch, done) => sender.export(batch, (result) => done(result.code === SUCCESS)),
    lost(loss) {
      if (loss.kind === "queue-full")
        lost(`the span queue is full (${config.maxQueueSize}) and spans were dropped`);
      else if (loss.kind === "unencodable") lost("a span could not be encoded and was dropped");
      else lost(`the collector at ${originOf(traces.url)} did not take ${loss.spans} span(s)`);
    },
    shutdown: () => sender.shutdown(),
  });
}

/** JSON: the SDK's batch processor and exporter, with the losses of its queue said. */
async function batchProcessor(config: OtlpConfig, lost: Lost): Promise<SpanProcessor> {
  // Spans waiting in the batch processor's queue: ended and sampled, not yet handed to an export.
  let queued = 0;
  const traces = config.traces;
  const inner = await jsonTraceExporter(traces);
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done: (result: SpanResult) => void) {
      queued -= spans.length;
      inner.export(spans, (result) => {
        if (result.code !== SUCCESS)
          lost(`the collector at ${originOf(traces.url)} did not take ${spans.length} span(s)`);
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
  const batch = new BatchSpanProcessor({
    exporter,
    maxQueueSize: config.maxQueueSize,
    maxExportBatchSize: Math.min(512, config.maxQueueSize),
    scheduledDelayMillis: config.scheduleDelayMs,
    exportTimeoutMillis: traces.timeoutMs,
  });
  return {
    onStart: (span: Span, parent: Context) => batch.onStart(span, parent),
    onEnd(span: ReadableSpan) {
      if ((span.spanContext().traceFlags & SAMPLED) !== 0) {
        // The batch processor drops a span that finds its queue full.
        if (queued >= config.maxQueueSize)
          lost(`the span queue is full (${config.maxQueueSize}) and spans were dropped`);
        else queued++;
      }
      batch.onEnd(span);
    },
    forceFlush: () => batch.forceFlush(),
    shutdown: () => batch.shutdown(),
  };
}

/**
 * Builds both providers from a configuration read from the environment. `warn` is told, once, when
 * telemetry is first lost (a failed export, a full queue); it never hears a header or a path.
 */
export async function startOtlp(
  config: OtlpConfig,
  warn: (message: string) => void,
): Promise<OtlpProviders> {
  let warned = false;
  let failed = false;
  const lost = (what: string) => {
    failed = true;
    if (warned) return;
    warned = true;
    warn(`telemetry: ${what}; telemetry is dropped while this lasts (said once)`);
  };
  const resource = resourceFromAttributes({
    ...config.resourceAttributes,
    "service.name": config.serviceName,
  });

  const traces = config.traces;
  const processor =
    traces.protocol === "http/protobuf"
      ? await encodedProcessor(config, lost)
      : await batchProcessor(config, lost);
  // Warrant's own spans (span-recorder.ts), with the SDK's sampler, batch processor and exporter.
  const tracerProvider = createRecordingTracerProvider({
    resource,
    sampler: samplerOf(config.sampler),
    parentBased: config.sampler.parentBased,
    processor,
  });

  let meterProvider: MeterProvider | undefined;
  let recordInto: ApiMeterProvider | undefined;
  const sdkMeters = () => meterProvider as MeterProvider;
  const metrics = config.metrics;
  if (metrics !== undefined) {
    const innerMetrics = await metricExporter(metrics);
    const watched: PushMetricExporter = {
      export(data, done) {
        innerMetrics.export(data, (result) => {
          if (result.code !== SUCCESS)
            lost(`the collector at ${originOf(metrics.url)} did not take the metrics`);
          done(result);
        });
      },
      forceFlush: () => innerMetrics.forceFlush(),
      shutdown: () => innerMetrics.shutdown(),
      ...(innerMetrics.selectAggregationTemporality === undefined
        ? {}
        : {
            selectAggregationTemporality: (t) =>
              innerMetrics.selectAggregationTemporality?.(t) as never,
          }),
      ...(innerMetrics.selectAggregation === undefined
        ? {}
        : { selectAggregation: (t) => innerMetrics.selectAggregation?.(t) as never }),
    };
    // Histograms and counters aggregate in our meter where the exporter asks for the default
    // aggregations (explicit buckets, sums); otherwise (an exponential histogram, say) the SDK's.
    const own = ownAggregation(watched, sdkMeters);
    const reader = new PeriodicExportingMetricReader({
      exporter: watched,
      exportIntervalMillis: config.metricIntervalMs,
      exportTimeoutMillis: Math.min(metrics.timeoutMs, config.metricIntervalMs),
      ...(own === undefined ? {} : { metricProducers: [own.producer] }),
    });
    meterProvider = new MeterProvider({ resource, readers: [reader] });
    recordInto = own?.meterProvider;
  }

  /** Waits for `work` until the bound; a collector that did not answer in time is a loss. */
  const bounded = async (work: Promise<unknown>): Promise<void> => {
    if (!(await within(failed ? 0 : CLOSE_WAIT_MS, work)) && !failed)
      lost(`the collector at ${originOf(traces.url)} did not answer within ${CLOSE_WAIT_MS} ms`);
  };
  const recorded = recordInto ?? meterProvider;
  return {
    tracerProvider,
    ...(recorded === undefined ? {} : { meterProvider: recorded }),
    flush: () =>
      bounded(Promise.allSettled([tracerProvider.forceFlush(), meterProvider?.forceFlush()])),
    // Shutting down flushes both providers first.
    shutdown: () =>
      bounded(Promise.allSettled([tracerProvider.shutdown(), meterProvider?.shutdown()])),
  };
}
