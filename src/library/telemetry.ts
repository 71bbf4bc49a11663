// Whether createWarrant traces its drives, and with what: the providers a library user passes, or
// the OTLP exporter the standard environment names (OTEL_EXPORTER_OTLP_ENDPOINT, …), or nothing.
// The decision is made from the options and the environment alone; the OpenTelemetry API, the SDK
// and the exporters are imported only when the first drive of a traced runtime starts.
import { type Env, readOtlpEnv } from "../adapters/telemetry/otlp-env.js";
import type { OtlpProviders } from "../adapters/telemetry/otlp-sdk.js";
import type { WarrantEvent } from "../runtime/events.js";
import type { TracingSubscriber } from "../runtime/telemetry/tracing-subscriber.js";
import type { TelemetryOptions } from "./options.js";

/** A runtime's tracing, as its users see it (`warrant.telemetry`). */
export interface WarrantTelemetry {
  /** Whether drives are traced (providers were passed, or the environment names an endpoint). */
  readonly enabled: boolean;
  /** Sends what is held now (bounded wait); nothing to do when not enabled. */
  flush(): Promise<void>;
  /** Ends every open span as interrupted, then flushes: for a process stopping mid-drive. */
  interrupted(): Promise<void>;
}

/** What a runtime's telemetry looks like to the composition. */
export interface Telemetry extends WarrantTelemetry {
  /** Prompts, answers and tool payloads go on spans. */
  readonly captureContent: boolean;
  /** Loads and starts tracing (once); the subscriber, or undefined when not enabled. */
  start(): Promise<TracingSubscriber | undefined>;
  /** Hands an event to the started subscriber (nothing before the start or without tracing). */
  observe(event: WarrantEvent): void;
  /** Flushes and stops what this runtime started (never the providers a user passed). */
  close(): Promise<void>;
}

/** Where a warning goes when the options name no `onWarning`: one line on stderr. */
function stderrWarning(message: string): void {
  process.stderr.write(`warrant: ${message}\n`);
}

const disabled: Telemetry = {
  enabled: false,
  captureContent: false,
  start: async () => undefined,
  observe: () => undefined,
  flush: async () => undefined,
  interrupted: async () => undefined,
  close: async () => undefined,
};

/** A provider that can flush (the SDK's do; the API's interface does not say so). */
function flushOf(provider: unknown): Promise<void> {
  const f = (provider as { forceFlush?: unknown } | undefined)?.forceFlush;
  return typeof f === "function"
    ? Promise.resolve((f as () => Promise<void>).call(provider)).catch(() => undefined)
    : Promise.resolve();
}

export function createTelemetry(options: TelemetryOptions | false | undefined): Telemetry {
  if (options === false) return disabled;
  const env: Env = options?.env ?? process.env;
  const warn = options?.onWarning ?? stderrWarning;
  const given = options?.tracerProvider;
  const reading = given === undefined ? readOtlpEnv(env) : undefined;
  for (const w of reading?.warnings ?? []) warn(w);
  const config = reading?.config;
  if (given === undefined && config === undefined) return disabled;
  const captureContent =
    options?.captureContent ?? config?.captureContent ?? env.WARRANT_OTEL_CAPTURE_CONTENT === "1";

  let subscriber: TracingSubscriber | undefined;
  let owned: OtlpProviders | undefined;
  let started: Promise<TracingSubscriber | undefined> | undefined;
  const start = async (): Promise<TracingSubscriber | undefined> => {
    const { createTracingSubscriber } = await import("../runtime/telemetry/tracing-subscriber.js");
    if (given !== undefined) {
      const meterProvider = options?.meterProvider;
      subscriber = createTracingSubscriber({
        tracerProvider: given,
        ...(meterProvider === undefined ? {} : { meterProvider }),
        captureContent,
      });
      return subscriber;
    }
    if (config === undefined) return undefined;
    const { startOtlp } = await import("../adapters/telemetry/otlp-sdk.js");
    owned = await startOtlp(config, warn);
    subscriber = createTracingSubscriber({
      tracerProvider: owned.tracerProvider,
      ...(owned.meterProvider === undefined ? {} : { meterProvider: owned.meterProvider }),
      captureContent,
    });
    return subscriber;
  };
  const flush = async (): Promise<void> => {
    if (owned !== undefined) return owned.flush();
    await Promise.all([flushOf(given), flushOf(options?.meterProvider)]);
  };
  return {
    enabled: true,
    captureContent,
    start() {
      started ??= start();
      return started;
    },
    observe(event) {
      try {
        subscriber?.observe(event);
      } catch {
        // Tracing's failure is its own: the drive and the other observers go on.
      }
    },
    flush,
    async interrupted() {
      subscriber?.interrupt();
      await flush();
    },
    async close() {
      await owned?.shutdown();
    },
  };
}
