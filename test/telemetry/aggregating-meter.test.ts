// The meter the drive metrics record into when Warrant exports itself aggregates its histograms
// and counters itself: what the SDK's reader exports of them must be what the SDK's own
// instruments would export for the same records, in either temporality, collection after
// collection (times aside, which are each collection's own).
import type { MeterProvider as ApiMeterProvider, Attributes } from "@opentelemetry/api";
import {
  AggregationTemporality,
  type DataPoint,
  MeterProvider,
  type MetricData,
  MetricReader,
  type MetricReaderOptions,
} from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { aggregatingMeter } from "../../src/adapters/telemetry/aggregating-meter.js";

class Reader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const readerFor = (temporality: AggregationTemporality, more: MetricReaderOptions = {}) =>
  new Reader({ aggregationTemporalitySelector: () => temporality, ...more });

/**
 * A point's value with its sum to 12 significant digits: the SDK adds a cumulative sum interval by
 * interval, this meter value by value, and the last bits of a float sum depend on that order.
 */
function rounded(value: unknown): unknown {
  if (typeof value !== "object" || value === null || !("sum" in value)) return value;
  return { ...value, sum: Number((value.sum as number).toPrecision(12)) };
}

/** One collection's metrics, each point without its times, points sorted by their attributes. */
async function collected(reader: MetricReader) {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  return resourceMetrics.scopeMetrics.map((s) => ({
    scope: s.scope,
    metrics: s.metrics.map((m: MetricData) => ({
      ...m,
      dataPoints: (m.dataPoints as DataPoint<unknown>[])
        .map(({ startTime: _s, endTime: _e, ...p }) => ({ ...p, value: rounded(p.value) }))
        .sort((a, b) => JSON.stringify(a.attributes).localeCompare(JSON.stringify(b.attributes))),
    })),
  }));
}

const BOUNDS = [0.01, 0.1, 1, 10];

/** The drive metrics' way: a histogram with advice and a counter, recorded into. */
function instruments(provider: ApiMeterProvider) {
  const meter = provider.getMeter("warrant", "1.0.0", { schemaUrl: "https://example.org/s" });
  return {
    duration: meter.createHistogram("op.duration", {
      unit: "s",
      description: "how long",
      advice: { explicitBucketBoundaries: BOUNDS },
    }),
    plain: meter.createHistogram("op.plain"),
    spent: meter.createCounter("op.spent", { unit: "{charge}", description: "spent" }),
  };
}

/** The same records into both: attribute objects reused, and new ones of the same content. */
function recordRound(provider: ApiMeterProvider, round: number, shared: Attributes) {
  const i = instruments(provider);
  const other: Attributes = { role: "reviewer", model: "m" };
  for (let n = 0; n < 25; n++) {
    i.duration.record((n * 0.37 + round) % 12, shared);
    i.duration.record(n / 100, n % 2 === 0 ? other : { model: "m", role: "reviewer" });
    i.plain.record(n * 40 + round, shared);
    i.spent.add(1, shared);
  }
  i.duration.record(Number.NaN, shared);
  i.duration.record(10, shared); // on a boundary: that bucket
  i.spent.add(-3, shared); // a counter takes no negative value
  i.spent.add(2, {});
}

for (const temporality of [AggregationTemporality.CUMULATIVE, AggregationTemporality.DELTA]) {
  describe(`aggregated here as the SDK would (${AggregationTemporality[temporality]})`, () => {
    it("the same points, collection after collection", async () => {
      const sdkReader = readerFor(temporality);
      const sdk = new MeterProvider({ readers: [sdkReader] });
      const ownSdk = new MeterProvider({ readers: [] });
      const own = aggregatingMeter(
        () => ownSdk,
        () => temporality,
      );
      const ownReader = readerFor(temporality, { metricProducers: [own.producer] });
      new MeterProvider({ readers: [ownReader] });
      const shared: Attributes = { role: "implementer", model: "m" };
      for (let round = 0; round < 3; round++) {
        recordRound(sdk, round, shared);
        recordRound(own.meterProvider, round, shared);
        const theirs = await collected(sdkReader);
        const ours = await collected(ownReader);
        expect(ours).toEqual(theirs);
        // The control: the round recorded something to compare.
        expect(theirs.flatMap((s) => s.metrics).length).toBe(3);
      }
      // Nothing recorded since: delta has nothing to say, cumulative says it all again.
      const theirs = await collected(sdkReader);
      expect(await collected(ownReader)).toEqual(theirs);
      expect(theirs.length).toBe(temporality === AggregationTemporality.DELTA ? 0 : 1);
    });
  });
}

describe("the aggregating meter's series", () => {
  it("past 1 999 attribute sets, every new one goes to the overflow set", async () => {
    const sdk = new MeterProvider();
    const own = aggregatingMeter(
      () => sdk,
      () => AggregationTemporality.CUMULATIVE,
    );
    const reader = readerFor(AggregationTemporality.CUMULATIVE, {
      metricProducers: [own.producer],
    });
    new MeterProvider({ readers: [reader] });
    const spent = own.meterProvider.getMeter("warrant").createCounter("spent");
    for (let n = 0; n < 2005; n++) spent.add(1, { n });
    const [scope] = await collected(reader);
    const points = (scope?.metrics[0]?.dataPoints ?? []) as {
      attributes: Attributes;
      value: number;
    }[];
    expect(points.length).toBe(2000);
    expect(points.find((p) => p.attributes["otel.metric.overflow"] === true)?.value).toBe(6);
  });

  it("an instrument of another kind is the SDK's", async () => {
    const reader = readerFor(AggregationTemporality.CUMULATIVE);
    const sdk = new MeterProvider({ readers: [reader] });
    const own = aggregatingMeter(
      () => sdk,
      () => AggregationTemporality.CUMULATIVE,
    );
    own.meterProvider.getMeter("warrant").createUpDownCounter("queued").add(-2, { q: "a" });
    const [scope] = await collected(reader);
    expect(scope?.metrics[0]?.descriptor.name).toBe("queued");
    expect(scope?.metrics[0]?.dataPoints).toEqual([{ attributes: { q: "a" }, value: -2 }]);
  });
});
