// Whether, and where, to send traces and metrics, read the standard OpenTelemetry way from the
// environment: OTEL_EXPORTER_OTLP_[TRACES_|METRICS_]ENDPOINT / _PROTOCOL / _HEADERS / _TIMEOUT,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED, OTEL_METRICS_EXPORTER=none,
// OTEL_BSP_MAX_QUEUE_SIZE / _SCHEDULE_DELAY, OTEL_METRIC_EXPORT_INTERVAL, and
// ours, WARRANT_OTEL_CAPTURE_CONTENT=1. Imports nothing of OpenTelemetry: reading this is free.
// Header values and URL credentials are secrets: no warning ever quotes them.

export type OtlpProtocol = "http/protobuf" | "http/json";

/** Which drives are traced (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG); default: all. */
export interface SamplerConfig {
  readonly kind: "always_on" | "always_off" | "traceidratio";
  /** Parent-based: a drive started inside a span keeps its parent's decision. */
  readonly parentBased: boolean;
  /** For `traceidratio`: the share of traces kept, 0 to 1. */
  readonly ratio: number;
}

const SAMPLERS: Readonly<Record<string, Omit<SamplerConfig, "ratio">>> = {
  always_on: { kind: "always_on", parentBased: false },
  always_off: { kind: "always_off", parentBased: false },
  traceidratio: { kind: "traceidratio", parentBased: false },
  parentbased_always_on: { kind: "always_on", parentBased: true },
  parentbased_always_off: { kind: "always_off", parentBased: true },
  parentbased_traceidratio: { kind: "traceidratio", parentBased: true },
};

export interface OtlpConfig {
  readonly serviceName: string;
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly traces: OtlpTarget;
  /** Absent when only a traces endpoint is named, or OTEL_METRICS_EXPORTER is `none`. */
  readonly metrics?: OtlpTarget;
  /** Prompts, answers and tool payloads on spans (WARRANT_OTEL_CAPTURE_CONTENT=1). */
  readonly captureContent: boolean;
  /** Spans held for export at most (OTEL_BSP_MAX_QUEUE_SIZE, default 2048); more are dropped. */
  readonly maxQueueSize: number;
  /** How long ended spans wait to be sent in a batch (OTEL_BSP_SCHEDULE_DELAY, default 5 s). */
  readonly scheduleDelayMs: number;
  /** How often metrics are sent (OTEL_METRIC_EXPORT_INTERVAL, default 60 s). */
  readonly metricIntervalMs: number;
  readonly sampler: SamplerConfig;
}

export interface OtlpTarget {
  readonly url: string;
  readonly protocol: OtlpProtocol;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

export interface OtlpEnvReading {
  /** Undefined: telemetry is off (no endpoint named, the SDK disabled, or the settings refused). */
  readonly config: OtlpConfig | undefined;
  /** What was ignored or refused, said without any secret. */
  readonly warnings: readonly string[];
}

export type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_QUEUE = 2048;
const DEFAULT_SCHEDULE_DELAY_MS = 5000;
const DEFAULT_METRIC_INTERVAL_MS = 60_000;

const set = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

/** A URL as a warning may name it: scheme, host and port, never user-info, path or query. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(an unparsable URL)";
  }
}

/** `k=v,k2=v2` (W3C baggage form, values percent-encoded): the pairs, and how many were refused. */
export function parseKeyValues(text: string | undefined): {
  pairs: Record<string, string>;
  refused: number;
} {
  const pairs: Record<string, string> = {};
  let refused = 0;
  if (!set(text)) return { pairs, refused };
  for (const item of text.split(",")) {
    if (item.trim() === "") continue;
    const eq = item.indexOf("=");
    const key = eq < 0 ? "" : item.slice(0, eq).trim();
    if (key === "" || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(key)) {
      refused++;
      continue;
    }
    try {
      pairs[key] = decodeURIComponent(item.slice(eq + 1).trim());
    } catch {
      refused++;
    }
  }
  return { pairs, refused };
}

function positiveInt(text: string | undefined, fallback: number): number {
  if (!set(text)) return fallback;
  const n = Number(text);
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}

/** `base` with `path` appended as the signal's resource path (`/v1/traces`, `/v1/metrics`). */
function signalUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

function httpUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/** The sampler the environment names; one it does not know is said and the default kept. */
function samplerOf(env: Env, warnings: string[]): SamplerConfig {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || "parentbased_always_on";
  const known = Object.hasOwn(SAMPLERS, name) ? SAMPLERS[name] : undefined;
  if (known === undefined) {
    warnings.push(
      `telemetry: OTEL_TRACES_SAMPLER ${JSON.stringify(name.slice(0, 40))} is not one Warrant knows; every drive is traced`,
    );
    return { kind: "always_on", parentBased: true, ratio: 1 };
  }
  if (known.kind !== "traceidratio") return { ...known, ratio: 1 };
  const arg = env.OTEL_TRACES_SAMPLER_ARG;
  const ratio = set(arg) ? Number(arg) : 1;
  if (!(ratio >= 0 && ratio <= 1)) {
    warnings.push("telemetry: OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1; 1 is used");
    return { ...known, ratio: 1 };
  }
  return { ...known, ratio };
}

export function readOtlpEnv(env: Env): OtlpEnvReading {
  const warnings: string[] = [];
  const off = { config: undefined, warnings };
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return off;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
    ? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.trim()
    : set(base)
      ? signalUrl(base.trim(), "/v1/traces")
      : undefined;
  if (tracesUrl === undefined) return off;

  const target = (signal: "TRACES" | "METRICS", url: string): OtlpTarget | undefined => {
    if (!httpUrl(url)) {
      warnings.push(
        `telemetry: the OTLP ${signal.toLowerCase()} endpoint is not an http(s) URL; ${signal.toLowerCase()} are not sent`,
      );
      return undefined;
    }
    const protocol =
      env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`]?.trim() ||
      env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() ||
      "http/protobuf";
    if (protocol !== "http/protobuf" && protocol !== "http/json") {
      warnings.push(
        `telemetry: OTLP protocol ${JSON.stringify(protocol.slice(0, 40))} is not supported (http/protobuf or http/json); ${signal.toLowerCase()} are not sent`,
      );
      return undefined;
    }
    const common = parseKeyValues(env.OTEL_EXPORTER_OTLP_HEADERS);
    const own = parseKeyValues(env[`OTEL_EXPORTER_OTLP_${signal}_HEADERS`]);
    if (common.refused + own.refused > 0)
      warnings.push(
        `telemetry: ${common.refused + own.refused} OTLP header entr${common.refused + own.refused === 1 ? "y is" : "ies are"} not key=value and ignored`,
      );
    const timeoutMs = positiveInt(
      env[`OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`] ?? env.OTEL_EXPORTER_OTLP_TIMEOUT,
      DEFAULT_TIMEOUT_MS,
    );
    return { url, protocol, headers: { ...common.pairs, ...own.pairs }, timeoutMs };
  };

  const traces = target("TRACES", tracesUrl);
  if (traces === undefined) return off;
  const metricsUrl = set(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)
    ? env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT.trim()
    : set(base)
      ? signalUrl(base.trim(), "/v1/metrics")
      : undefined;
  const metricsOff = env.OTEL_METRICS_EXPORTER?.trim().toLowerCase() === "none";
  const metrics =
    metricsUrl === undefined || metricsOff ? undefined : target("METRICS", metricsUrl);
  const sampler = samplerOf(env, warnings);
  const resource = parseKeyValues(env.OTEL_RESOURCE_ATTRIBUTES);
  if (resource.refused > 0)
    warnings.push(`telemetry: ${resource.refused} OTEL_RESOURCE_ATTRIBUTES entries ignored`);
  return {
    config: {
      serviceName: set(env.OTEL_SERVICE_NAME) ? env.OTEL_SERVICE_NAME.trim() : "warrant",
      resourceAttributes: resource.pairs,
      traces,
      ...(metrics === undefined ? {} : { metrics }),
      captureContent: env.WARRANT_OTEL_CAPTURE_CONTENT === "1",
      maxQueueSize: positiveInt(env.OTEL_BSP_MAX_QUEUE_SIZE, DEFAULT_QUEUE),
      scheduleDelayMs: positiveInt(env.OTEL_BSP_SCHEDULE_DELAY, DEFAULT_SCHEDULE_DELAY_MS),
      metricIntervalMs: positiveInt(env.OTEL_METRIC_EXPORT_INTERVAL, DEFAULT_METRIC_INTERVAL_MS),
      sampler,
    },
    warnings,
  };
}
