// One passage of a provider model, traced by the tracing subscriber over the SDK this runtime uses
// (OTLP/HTTP to a real receiver): the passage's own events come from the agent-passage runner; the
// drive and passage bounds around it are the driver's events, emitted here as it would.
import path from "node:path";
import { loadPack } from "../../src/adapters/fs/pack-loader.js";
import { startOtlp } from "../../src/adapters/telemetry/otlp-sdk.js";
import type { ModelProvider } from "../../src/core/ports/model-provider.js";
import { ok } from "../../src/core/result.js";
import { createAgentPassages } from "../../src/runtime/agent-passages.js";
import type { PassageOutcome } from "../../src/runtime/context.js";
import type { WarrantEventBody } from "../../src/runtime/events.js";
import { createTracingSubscriber } from "../../src/runtime/telemetry/tracing-subscriber.js";
import { repoRoot } from "../helpers/cli.js";
import { addHost } from "../passage/helpers.js";
import { type OtlpReceiver, startOtlpReceiver } from "./otlp-receiver.js";

export interface TracedPassage {
  readonly outcome: PassageOutcome;
  readonly receiver: OtlpReceiver;
  /** Every request body the receiver got, as text. */
  readonly exported: string;
  readonly warnings: readonly string[];
}

const QUERY = "query:traced-passage";
const REF = "passage:traced";

/** Runs one implementer passage of `provider` and sends its spans (content captured or not). */
export async function tracedPassage(
  provider: ModelProvider,
  options: { readonly captureContent: boolean },
): Promise<TracedPassage> {
  const receiver = await startOtlpReceiver();
  const warnings: string[] = [];
  const sdk = await startOtlp(
    {
      serviceName: "warrant",
      resourceAttributes: {},
      traces: {
        url: `${receiver.url}/v1/traces`,
        protocol: "http/json",
        headers: {},
        timeoutMs: 5000,
      },
      captureContent: options.captureContent,
      maxQueueSize: 2048,
      scheduleDelayMs: 5000,
      sampler: { kind: "always_on", parentBased: true, ratio: 1 },
      metricIntervalMs: 60_000,
    },
    (w) => warnings.push(w),
  );
  const tracing = createTracingSubscriber({
    tracerProvider: sdk.tracerProvider,
    captureContent: options.captureContent,
  });
  const emit = (e: WarrantEventBody) =>
    tracing.observe({ ...e, at: new Date().toISOString() } as never);
  const pack = await loadPack(path.join(repoRoot, "test/fixtures/runtime/task-pack.json"));
  if (!pack.ok) throw new Error("the fixture pack does not load");
  const agentId = pack.value.agents.implementer?.id ?? "agent:none";
  emit({
    kind: "drive-start",
    query: QUERY,
    pack: pack.value.pack.name,
    binding: "binding:test",
    holder: "test",
    store: "memory",
  });
  emit({
    kind: "passage-start",
    query: QUERY,
    role: "implementer",
    passageRef: REF,
    agentId,
    redone: false,
  });
  const outcome = await createAgentPassages({
    models: { override: () => undefined, definition: () => provider },
    tools: async () => ok(addHost()),
    emit,
    captureContent: options.captureContent,
  }).run({
    query: QUERY,
    role: "implementer",
    agentId,
    passageRef: REF,
    evidence: "Add 1 and 2.",
    pack: pack.value,
    priorCalls: 0,
  });
  emit({
    kind: "passage-end",
    query: QUERY,
    role: "implementer",
    passageRef: REF,
    agentId,
    outcome: outcome.ok
      ? { ok: true, type: outcome.message.type }
      : { ok: false, code: outcome.code, message: outcome.message },
    ...(outcome.usage === undefined ? {} : { usage: outcome.usage }),
  });
  emit({ kind: "drive-end", query: QUERY, status: outcome.ok ? "stopped" : "blocked" });
  await sdk.shutdown();
  await receiver.until(() => receiver.spans.some((s) => s.parentSpanId === ""));
  await receiver.close();
  const exported = receiver.requests.map((r) => r.body.toString("utf8")).join("\n");
  return { outcome, receiver, exported, warnings };
}
