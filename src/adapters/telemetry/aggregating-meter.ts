// Histograms and counters aggregated here, read by the SDK's metric reader as one more producer:
// the meter the tracing subscriber records its drive metrics into when Warrant exports itself.
// The SDK's own instruments hash every record's attributes (sorted keys, JSON) to find its series,
// three times a model call; here each attributes object is looked up by identity (a WeakMap), and
// hashed only the first time it is seen, so a record is a map lookup and a few additions. What the
// reader exports is what the SDK's explicit-bucket histograms and sums would: the same counts,
// sums, minima, maxima, buckets and temporality (test/telemetry/aggregating-meter.test.ts).
// An attributes object must not change after it was first recorded with (the drive metrics make
// each once and never touch it again). Instruments of other kinds go to the SDK's meter.
import {
  type Attributes,
  type Counter,
  type Histogram,
  type HrTime,
  type Meter,
  type MeterOptions,
  type MeterProvider,
  type MetricAdvice,
  type MetricOptions,
  ValueType,
} from "@opentelemetry/api";
import {
  AggregationTemporality,
  type CollectionResult,
  DataPointType,
  InstrumentType,
  type MetricData,
  type MetricProducer,
  type ScopeMetrics,
} from "@opentelemetry/sdk-metrics";

/** One attribute set's aggregate since its start. */
interface Series {
  readonly attributes: Attributes;
  start: HrTime;
  count: number;
  sum: number;
  min: number;
  max: number;
  /** Per bucket (histograms): one more than the boundaries. */
  readonly counts: number[];
}

interface Instrument {
  readonly name: string;
  readonly description: string;
  readonly unit: string;
  readonly kind: "histogram" | "counter";
  /** The options' advice, as the SDK's descriptors carry it. */
  readonly advice: MetricAdvice;
  /** Histograms' upper bounds, sorted. */
  readonly boundaries: readonly number[];
  /** Each attribute set's series, by its content. */
  readonly series: Map<string, Series>;
  /** Each attributes object's series, by identity. */
  readonly byObject: WeakMap<Attributes, Series>;
}

/** The SDK's default histogram boundaries (when no advice is given). */
const DEFAULT_BOUNDARIES = [
  0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000,
] as const;

/**
 * Attribute sets per instrument before the overflow set takes every new one (the SDK's default
 * limit of 2 000, the overflow set included).
 */
const MAX_SERIES = 2000;
const OVERFLOW: Attributes = { "otel.metric.overflow": true };
const OVERFLOW_KEY = '[["otel.metric.overflow",true]]';

function hrNow(): HrTime {
  const ms = Date.now();
  return [Math.trunc(ms / 1000), (ms % 1000) * 1_000_000];
}

/** The content of an attribute set, as a key (keys sorted, as the SDK hashes them). */
function keyOf(attributes: Attributes): string {
  return JSON.stringify(
    Object.keys(attributes)
      .sort()
      .map((k) => [k, attributes[k]]),
  );
}

function seriesOf(instrument: Instrument, attributes: Attributes): Series {
  const known = instrument.byObject.get(attributes);
  if (known !== undefined) return known;
  let key = keyOf(attributes);
  let shown = attributes;
  if (!instrument.series.has(key) && instrument.series.size >= MAX_SERIES - 1) {
    key = OVERFLOW_KEY;
    shown = OVERFLOW;
  }
  let series = instrument.series.get(key);
  if (series === undefined) {
    series = {
      attributes: { ...shown },
      start: hrNow(),
      count: 0,
      sum: 0,
      min: Number.POSITIVE_INFINITY,
      max: Number.NEGATIVE_INFINITY,
      counts: instrument.boundaries.map(() => 0).concat(0),
    };
    instrument.series.set(key, series);
  }
  instrument.byObject.set(attributes, series);
  return series;
}

/** The bucket of `value`: the first whose upper bound is at least it. */
function bucketOf(boundaries: readonly number[], value: number): number {
  let lo = 0;
  let hi = boundaries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((boundaries[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function record(instrument: Instrument, value: number, attributes: Attributes | undefined): void {
  if (Number.isNaN(value)) return;
  // A counter takes no negative value (the SDK drops it too).
  if (instrument.kind === "counter" && value < 0) return;
  const series = seriesOf(instrument, attributes ?? {});
  series.count++;
  series.sum += value;
  if (value < series.min) series.min = value;
  if (value > series.max) series.max = value;
  if (instrument.kind === "histogram") {
    const at = bucketOf(instrument.boundaries, value);
    series.counts[at] = (series.counts[at] as number) + 1;
  }
}

/** What the reader exports of one instrument now; delta temporality starts its series again. */
function metricOf(
  instrument: Instrument,
  temporality: AggregationTemporality,
  end: HrTime,
): MetricData | undefined {
  const live = [...instrument.series.values()].filter((s) => s.count > 0);
  if (live.length === 0) return undefined;
  const descriptor = {
    name: instrument.name,
    description: instrument.description,
    unit: instrument.unit,
    valueType: ValueType.DOUBLE,
    type: instrument.kind === "histogram" ? InstrumentType.HISTOGRAM : InstrumentType.COUNTER,
    advice: instrument.advice,
  };
  const metric: MetricData =
    instrument.kind === "histogram"
      ? {
          descriptor,
          aggregationTemporality: temporality,
          dataPointType: DataPointType.HISTOGRAM,
          dataPoints: live.map((s) => ({
            attributes: s.attributes,
            startTime: s.start,
            endTime: end,
            value: {
              buckets: { boundaries: [...instrument.boundaries], counts: [...s.counts] },
              count: s.count,
              sum: s.sum,
              min: s.min,
              max: s.max,
            },
          })),
        }
      : {
          descriptor,
          aggregationTemporality: temporality,
          dataPointType: DataPointType.SUM,
          isMonotonic: true,
          dataPoints: live.map((s) => ({
            attributes: s.attributes,
            startTime: s.start,
            endTime: end,
            value: s.sum,
          })),
        };
  if (temporality === AggregationTemporality.DELTA) {
    for (const s of live) {
      s.start = end;
      s.count = 0;
      s.sum = 0;
      s.min = Number.POSITIVE_INFINITY;
      s.max = Number.NEGATIVE_INFINITY;
      s.counts.fill(0);
    }
  }
  return metric;
}

export interface AggregatingMeter {
  /** The API's provider: histograms and counters here, other instruments the SDK's. */
  readonly meterProvider: MeterProvider;
  /** What the SDK's reader adds to each collection. */
  readonly producer: MetricProducer;
}

/**
 * A meter provider whose histograms (explicit buckets: the advice's boundaries, else the SDK's
 * default) and monotonic counters aggregate here; `temporality` is what the exporter asks for.
 * `sdk` gives the provider that makes the instruments of other kinds (asked when a meter is first
 * made: the SDK's provider is made with the reader this meter's producer belongs to).
 */
export function aggregatingMeter(
  sdk: () => MeterProvider,
  temporality: (kind: "histogram" | "counter") => AggregationTemporality,
): AggregatingMeter {
  const scopes: { scope: ScopeMetrics["scope"]; instruments: Instrument[] }[] = [];
  // As the SDK's: one meter per name, version and schema, one instrument per name in it.
  const meters = new Map<string, Meter>();
  const meterProvider: MeterProvider = {
    getMeter(name: string, version?: string, options?: MeterOptions): Meter {
      const id = JSON.stringify([name, version ?? "", options?.schemaUrl ?? ""]);
      const made = meters.get(id);
      if (made !== undefined) return made;
      const inner = sdk().getMeter(name, version, options);
      const instruments: Instrument[] = [];
      scopes.push({
        scope: {
          name,
          ...(version === undefined ? {} : { version }),
          ...(options?.schemaUrl === undefined ? {} : { schemaUrl: options.schemaUrl }),
        },
        instruments,
      });
      const make = (
        kind: Instrument["kind"],
        instrumentName: string,
        o: MetricOptions | undefined,
      ) => {
        const same = instruments.find((i) => i.name === instrumentName && i.kind === kind);
        if (same !== undefined) return same;
        const instrument: Instrument = {
          name: instrumentName,
          description: o?.description ?? "",
          unit: o?.unit ?? "",
          kind,
          advice: o?.advice ?? {},
          boundaries: [...(o?.advice?.explicitBucketBoundaries ?? DEFAULT_BOUNDARIES)].sort(
            (a, b) => a - b,
          ),
          series: new Map(),
          byObject: new WeakMap(),
        };
        instruments.push(instrument);
        return instrument;
      };
      const meter: Meter = Object.assign(Object.create(inner) as Meter, {
        createHistogram(instrumentName: string, o?: MetricOptions): Histogram {
          const instrument = make("histogram", instrumentName, o);
          return { record: (value, attributes) => record(instrument, value, attributes) };
        },
        createCounter(instrumentName: string, o?: MetricOptions): Counter {
          const instrument = make("counter", instrumentName, o);
          return { add: (value, attributes) => record(instrument, value, attributes) };
        },
      });
      meters.set(id, meter);
      return meter;
    },
  };
  const producer: MetricProducer = {
    async collect(): Promise<CollectionResult> {
      const end = hrNow();
      const scopeMetrics: ScopeMetrics[] = [];
      for (const { scope, instruments } of scopes) {
        const metrics: MetricData[] = [];
        for (const instrument of instruments) {
          const m = metricOf(instrument, temporality(instrument.kind), end);
          if (m !== undefined) metrics.push(m);
        }
        if (metrics.length > 0) scopeMetrics.push({ scope, metrics });
      }
      // The reader keeps its own resource and puts these scopes beside the SDK's.
      return { resourceMetrics: { resource: undefined as never, scopeMetrics }, errors: [] };
    },
  };
  return { meterProvider, producer };
}
