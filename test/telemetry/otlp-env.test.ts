// Reading the standard OpenTelemetry variables: off unless an endpoint is named; every refusal is
// one warning that names no secret, and leaves tracing off rather than half on.
import { describe, expect, it } from "vitest";
import { originOf, parseKeyValues, readOtlpEnv } from "../../src/adapters/telemetry/otlp-env.js";

describe("readOtlpEnv", () => {
  it("is off without an endpoint, or with OTEL_SDK_DISABLED=true", () => {
    expect(readOtlpEnv({})).toEqual({ config: undefined, warnings: [] });
    expect(readOtlpEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " }).config).toBeUndefined();
    expect(
      readOtlpEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "TRUE" })
        .config,
    ).toBeUndefined();
  });

  it("defaults: http/protobuf, service warrant, /v1/traces and /v1/metrics under the base, 10 s, no content", () => {
    const { config, warnings } = readOtlpEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" });
    expect(warnings).toEqual([]);
    expect(config).toEqual({
      serviceName: "warrant",
      resourceAttributes: {},
      traces: {
        url: "http://c:4318/v1/traces",
        protocol: "http/protobuf",
        headers: {},
        timeoutMs: 10_000,
      },
      metrics: {
        url: "http://c:4318/v1/metrics",
        protocol: "http/protobuf",
        headers: {},
        timeoutMs: 10_000,
      },
      captureContent: false,
      maxQueueSize: 2048,
      scheduleDelayMs: 5000,
      metricIntervalMs: 60_000,
      sampler: { kind: "always_on", parentBased: true, ratio: 1 },
    });
  });

  it("signal-specific endpoints, protocols, headers and timeouts win over the common ones", () => {
    const { config } = readOtlpEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://t.example/otlp/traces",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_HEADERS: "a=1,b=two%20words",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "b=3",
      OTEL_EXPORTER_OTLP_TIMEOUT: "2500",
      OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: "700",
      OTEL_SERVICE_NAME: "agents",
      OTEL_RESOURCE_ATTRIBUTES: "team=infra,service.version=9",
      WARRANT_OTEL_CAPTURE_CONTENT: "1",
      OTEL_BSP_MAX_QUEUE_SIZE: "64",
      OTEL_BSP_SCHEDULE_DELAY: "250",
    });
    expect(config?.traces).toEqual({
      url: "https://t.example/otlp/traces",
      protocol: "http/json",
      headers: { a: "1", b: "3" },
      timeoutMs: 2500,
    });
    expect(config?.metrics).toEqual({
      url: "http://c:4318/v1/metrics",
      protocol: "http/protobuf",
      headers: { a: "1", b: "two words" },
      timeoutMs: 700,
    });
    expect(config).toMatchObject({
      serviceName: "agents",
      resourceAttributes: { team: "infra", "service.version": "9" },
      captureContent: true,
      maxQueueSize: 64,
      scheduleDelayMs: 250,
    });
  });

  it("a traces endpoint alone sends no metrics; OTEL_METRICS_EXPORTER=none turns metrics off", () => {
    expect(
      readOtlpEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c/v1/traces" }).config?.metrics,
    ).toBeUndefined();
    expect(
      readOtlpEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_METRICS_EXPORTER: "none" }).config
        ?.metrics,
    ).toBeUndefined();
  });

  it("OTEL_TRACES_SAMPLER and its argument; one it does not know, or a bad ratio, is said and ignored", () => {
    const read = (sampler: string, arg?: string) =>
      readOtlpEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
        OTEL_TRACES_SAMPLER: sampler,
        ...(arg === undefined ? {} : { OTEL_TRACES_SAMPLER_ARG: arg }),
      });
    expect(read("parentbased_traceidratio", "0.25").config?.sampler).toEqual({
      kind: "traceidratio",
      parentBased: true,
      ratio: 0.25,
    });
    expect(read("always_off").config?.sampler).toEqual({
      kind: "always_off",
      parentBased: false,
      ratio: 1,
    });
    for (const [sampler, arg] of [
      ["jaeger_remote", undefined],
      ["constructor", undefined],
      ["traceidratio", "2"],
      ["traceidratio", "half"],
    ] as const) {
      const r = read(sampler, arg);
      expect(r.config?.sampler.ratio).toBe(1);
      expect(r.warnings).toHaveLength(1);
    }
  });

  it("content capture needs exactly 1", () => {
    for (const v of ["true", "yes", "0", ""])
      expect(
        readOtlpEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", WARRANT_OTEL_CAPTURE_CONTENT: v })
          .config?.captureContent,
      ).toBe(false);
  });

  it("refuses grpc and other protocols: one warning, tracing off", () => {
    const r = readOtlpEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    });
    expect(r.config).toBeUndefined();
    expect(r.warnings).toEqual([
      'telemetry: OTLP protocol "grpc" is not supported (http/protobuf or http/json); traces are not sent',
    ]);
  });

  it("refuses an endpoint that is not http(s), without quoting it", () => {
    for (const url of ["ftp://user:pw@c/x", "not a url", "file:///etc/secret"]) {
      const r = readOtlpEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: url });
      expect(r.config).toBeUndefined();
      expect(r.warnings).toHaveLength(1);
      expect(r.warnings[0]).not.toContain("pw");
      expect(r.warnings[0]).not.toContain("secret");
    }
  });

  it("a metrics endpoint it cannot use leaves traces on, and says so", () => {
    const r = readOtlpEnv({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c/v1/traces",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "udp://c",
    });
    expect(r.config?.traces.url).toBe("http://c/v1/traces");
    expect(r.config?.metrics).toBeUndefined();
    expect(r.warnings).toEqual([
      "telemetry: the OTLP metrics endpoint is not an http(s) URL; metrics are not sent",
    ]);
  });

  it("ignores header entries that are not key=value, counting them, never quoting a value", () => {
    const r = readOtlpEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20s3cret,=orphan,bad key=x,novalue,ok=%ZZ",
    });
    expect(r.config?.traces.headers).toEqual({ authorization: "Bearer s3cret" });
    // Traces and metrics each say it once.
    expect(r.warnings).toEqual([
      "telemetry: 4 OTLP header entries are not key=value and ignored",
      "telemetry: 4 OTLP header entries are not key=value and ignored",
    ]);
    expect(r.warnings.join()).not.toContain("s3cret");
    expect(r.warnings.join()).not.toContain("orphan");
  });

  it("takes a timeout or queue size only as a positive integer", () => {
    const r = readOtlpEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
      OTEL_EXPORTER_OTLP_TIMEOUT: "-5",
      OTEL_BSP_MAX_QUEUE_SIZE: "1.5",
      OTEL_METRIC_EXPORT_INTERVAL: "soon",
    });
    expect(r.config).toMatchObject({
      traces: { timeoutMs: 10_000 },
      maxQueueSize: 2048,
      metricIntervalMs: 60_000,
    });
  });
});

describe("helpers", () => {
  it("originOf keeps scheme, host and port only", () => {
    expect(originOf("https://user:pw@collector.example:4318/secret/path?k=v")).toBe(
      "https://collector.example:4318",
    );
    expect(originOf("::")).toBe("(an unparsable URL)");
  });

  it("parseKeyValues decodes percent-encoding and trims", () => {
    expect(parseKeyValues(" a = x%2Cy , b=")).toEqual({ pairs: { a: "x,y", b: "" }, refused: 0 });
    expect(parseKeyValues(undefined)).toEqual({ pairs: {}, refused: 0 });
  });
});
