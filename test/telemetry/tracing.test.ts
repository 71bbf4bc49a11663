// Tracing through createWarrant, exported to a real OTLP/HTTP receiver: repairs and failures on the
// chat spans, budget refusals, content capture only when asked, resume continuity through the
// journaled trace context, providers a library user passes, and a collector that is unreachable,
// slow or misnamed never failing a drive.
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it } from "vitest";
import type { WarrantOptions } from "../../src/library/options.js";
import type { DriveTraceBody, PassageEndBody } from "../../src/runtime/records.js";
import {
  accept,
  type Harness,
  harness,
  plan,
  recordsOf,
  reject,
  result,
  turn,
} from "../runtime/harness.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./otlp-receiver.js";

const Plan = (name: string) => turn("Plan", plan(name));
const readFile = {
  kind: "tool_calls",
  summary: "read it",
  tool_calls: [{ name: "workspace.read_file", arguments_json: '{"path":"src/slugify.js"}' }],
  message: null,
};

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function receiver(mode?: "hang"): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver(mode === undefined ? {} : { mode });
  cleanup.push(() => r.close());
  return r;
}

/** A harness traced through the standard variables, with `env` on top of an endpoint at `r`. */
async function traced(
  scripts: Parameters<typeof harness>[0],
  r: OtlpReceiver | undefined,
  env: Record<string, string> = {},
  more: Omit<Parameters<typeof harness>[1] & object, "openTelemetry"> & {
    readonly openTelemetry?: Exclude<WarrantOptions["openTelemetry"], false>;
  } = {},
): Promise<{ h: Harness; warnings: string[] }> {
  const warnings: string[] = [];
  const h = await harness(scripts, {
    ...more,
    openTelemetry: {
      env: {
        ...(r === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: r.url }),
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        ...env,
      },
      onWarning: (w) => warnings.push(w),
      ...more.openTelemetry,
    },
  });
  cleanup.push(() => h.warrant.close());
  return { h, warnings };
}

async function exported(h: Harness, r: OtlpReceiver, root = 1): Promise<ReceivedSpan[]> {
  await h.warrant.telemetry.flush();
  await r.until(() => r.spans.filter((s) => s.parentSpanId === "").length >= root);
  return r.spans;
}

const byName = (spans: readonly ReceivedSpan[], name: string) =>
  spans.filter((s) => s.name === name).sort((a, b) => Number(a.startNs - b.startNs));

describe("spans of a drive", () => {
  it("an invalid turn's chat span carries its repair as an event; the next call is its sibling", async () => {
    const r = await receiver();
    const { h } = await traced(
      {
        implementer: [{ kind: "message", summary: "no message" }, Plan("good-fix")],
        reviewer: [accept],
        summarizer: [result],
      },
      r,
    );
    expect((await h.drive()).status).toBe("stopped");
    const spans = await exported(h, r);
    const [first, second] = byName(spans, "chat implementer");
    expect(first?.attributes["warrant.turn.valid"]).toBe(false);
    expect(first?.events.map((e) => e.name)).toEqual(["warrant.repair"]);
    expect(first?.events[0]?.attributes["warrant.repair.codes"]).toEqual(
      expect.arrayContaining([expect.stringMatching(/^turn\//)]),
    );
    expect(second?.attributes["warrant.turn.valid"]).toBeUndefined();
    expect(second?.events).toEqual([]);
    expect(second?.parentSpanId).toBe(first?.parentSpanId);
    // Start times are taken to the millisecond.
    expect((second?.startNs ?? 0n) + 1_000_000n).toBeGreaterThanOrEqual(first?.endNs ?? 0n);
    const agent = spans.find((s) => s.spanId === first?.parentSpanId);
    expect(agent?.attributes["warrant.passage.repairs"]).toBe(1);
  });

  it("a failed model call: error.type on the chat and agent spans; the drive ends blocked on the model", async () => {
    const r = await receiver();
    const { h } = await traced({ implementer: [] }, r);
    const out = await h.drive();
    expect(out.status).toBe("blocked");
    const spans = await exported(h, r);
    const [chat] = byName(spans, "chat implementer");
    expect(chat?.attributes["error.type"]).toBe("model/script-exhausted");
    expect(chat?.status.code).toBe(2);
    const [agent] = byName(spans, "invoke_agent implementer");
    expect(agent?.attributes["error.type"]).toBe("model/script-exhausted");
    // The failure's text is content (it can quote the model): not recorded without capture.
    expect(agent?.status).toEqual({ code: 2 });
    const root = spans.find((s) => s.parentSpanId === "");
    expect(root?.attributes).toMatchObject({
      "warrant.drive.status": "blocked",
      "warrant.blocked.reason": "model",
    });
    expect(root?.events.map((e) => e.name)).toContain("warrant.blocked");
  });

  it("a budget refusal is an event on the drive naming the counter", async () => {
    const r = await receiver();
    const { h } = await traced(
      { implementer: [Plan("observe"), Plan("observe")], reviewer: [reject, reject] },
      r,
      {},
      { pack: "tight-budget.task-pack.json" },
    );
    expect((await h.drive()).status).toBe("blocked");
    const spans = await exported(h, r);
    const root = spans.find((s) => s.parentSpanId === "");
    const refused = root?.events.filter((e) => e.name === "warrant.budget.refused");
    expect(refused?.map((e) => e.attributes)).toEqual([
      {
        "warrant.blocked.reason": "budget",
        "warrant.budget.counter": "max/passages",
      },
    ]);
  });

  it("a drive that fails (its store gone) still ends its spans, marked failed", async () => {
    const r = await receiver();
    let broken = false;
    const { h } = await traced(
      { implementer: [Plan("good-fix")], reviewer: [accept] },
      r,
      {},
      {
        wrapStore: (store) =>
          new Proxy(store, {
            get(target, prop, receiver) {
              const v = Reflect.get(target, prop, receiver) as unknown;
              if (typeof v !== "function") return v;
              if (prop === "putRecords" && broken)
                return async () => {
                  throw Object.assign(new Error("the disk is gone"), { code: "store/io" });
                };
              if (prop === "acquireLease") broken = true;
              return v.bind(target);
            },
          }),
      },
    );
    await expect(h.drive()).rejects.toThrow();
    const spans = await exported(h, r);
    const root = spans.find((s) => s.parentSpanId === "");
    expect(root?.attributes["warrant.drive.status"]).toBe("failed");
    expect(root?.status.code).toBe(2);
    // Nothing was left open: every span that started was exported.
    expect(spans.every((s) => s.endNs >= s.startNs)).toBe(true);
  });
});

describe("content capture", () => {
  const scripts = {
    implementer: [readFile, Plan("good-fix")],
    reviewer: [accept],
    summarizer: [result],
  };
  const CONTENT = [
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
  ] as const;

  it("is off by default: no prompt, answer or tool payload on any span", async () => {
    const r = await receiver();
    const { h } = await traced(scripts, r);
    await h.drive();
    const spans = await exported(h, r);
    for (const s of spans) {
      for (const k of [...CONTENT, "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"])
        expect(s.attributes[k]).toBeUndefined();
    }
    expect(r.requests.map((q) => q.body.toString()).join("")).not.toContain("slugify(title)");
  });

  it("with WARRANT_OTEL_CAPTURE_CONTENT=1: the messages, the system prompt and the tool payloads", async () => {
    const r = await receiver();
    const { h } = await traced(scripts, r, { WARRANT_OTEL_CAPTURE_CONTENT: "1" });
    await h.drive();
    const spans = await exported(h, r);
    const [first, second] = byName(spans, "chat implementer");
    const input = JSON.parse(String(first?.attributes["gen_ai.input.messages"])) as {
      role: string;
      parts: { type: string; content?: string }[];
    }[];
    expect(input).toHaveLength(1);
    expect(input[0]?.role).toBe("user");
    expect(input[0]?.parts[0]?.content).toContain("slugify");
    expect(String(first?.attributes["gen_ai.system_instructions"])).toContain("implementer");
    expect(JSON.parse(String(first?.attributes["gen_ai.output.messages"]))).toEqual([
      {
        role: "assistant",
        parts: [
          { type: "text", content: "read it" },
          { type: "tool_call", name: "workspace.read_file", arguments: { path: "src/slugify.js" } },
        ],
        finish_reason: "complete",
      },
    ]);
    // The second call is sent the history: the evidence, the first answer, the tool's result.
    const history = JSON.parse(String(second?.attributes["gen_ai.input.messages"])) as {
      role: string;
    }[];
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    const [tool] = byName(spans, "execute_tool workspace.read_file");
    expect(JSON.parse(String(tool?.attributes["gen_ai.tool.call.arguments"]))).toEqual({
      path: "src/slugify.js",
    });
    expect(String(tool?.attributes["gen_ai.tool.call.result"])).toContain(
      "export function slugify",
    );
  });

  it("is off when the option says so, whatever the environment", async () => {
    const r = await receiver();
    const { h } = await traced(
      scripts,
      r,
      { WARRANT_OTEL_CAPTURE_CONTENT: "1" },
      { openTelemetry: { captureContent: false } },
    );
    await h.drive();
    const spans = await exported(h, r);
    expect(spans.some((s) => s.attributes["gen_ai.input.messages"] !== undefined)).toBe(false);
  });
});

describe("resume continuity", () => {
  it("a resumed drive's root links to the earlier drive's trace, kept in a driveTrace record", async () => {
    const r = await receiver();
    const { h } = await traced(
      {
        implementer: [turn("Question", { question: "May I change the tests?" }), Plan("good-fix")],
        reviewer: [accept],
        summarizer: [result],
      },
      r,
    );
    expect((await h.drive()).status).toBe("blocked");
    const asked = (await recordsOf(h, "passageEnd"))[0]?.body as PassageEndBody;
    await h.store.postOperatorAct({
      query: h.query,
      kind: "answer",
      target: asked["passage/ref"],
      text: "No.",
      operator: "node-operator-binding:test",
      at: h.clock.now().toISOString(),
    });
    expect((await h.drive()).status).toBe("stopped");
    const spans = await exported(h, r, 2);
    const roots = spans
      .filter((s) => s.parentSpanId === "")
      .sort((a, b) => Number(a.startNs - b.startNs));
    expect(roots).toHaveLength(2);
    const [earlier, later] = roots as [ReceivedSpan, ReceivedSpan];
    expect(later.traceId).not.toBe(earlier.traceId);
    expect(earlier.links).toEqual([]);
    expect(later.links).toEqual([
      {
        traceId: earlier.traceId,
        spanId: earlier.spanId,
        attributes: { "warrant.link": "earlier-drive" },
      },
    ]);
    const journaled = (await recordsOf(h, "driveTrace")).map(
      (x) => (x.body as DriveTraceBody).traceparent,
    );
    expect(journaled).toEqual([
      `00-${earlier.traceId}-${earlier.spanId}-01`,
      `00-${later.traceId}-${later.spanId}-01`,
    ]);
  });

  it("journals nothing when nothing traces the drive", async () => {
    const h = await harness({
      implementer: [Plan("good-fix")],
      reviewer: [accept],
      summarizer: [result],
    });
    await h.drive();
    expect(await recordsOf(h, "driveTrace")).toEqual([]);
  });
});

describe("switching it on", () => {
  const scripts = { implementer: [Plan("good-fix")], reviewer: [accept], summarizer: [result] };

  it("a TracerProvider passed in gets the spans; the environment's endpoint is then not used", async () => {
    const mine = await receiver();
    const envs = await receiver();
    const provider = new TracerProvider({
      spanProcessors: [
        new SimpleSpanProcessor({
          exporter: new OTLPTraceExporter({ url: `${mine.url}/v1/traces` }),
        }),
      ],
    });
    cleanup.push(() => provider.shutdown());
    const { h } = await traced(scripts, envs, {}, { openTelemetry: { tracerProvider: provider } });
    expect(h.warrant.telemetry.enabled).toBe(true);
    await h.drive();
    await h.warrant.telemetry.flush();
    await mine.until(() => mine.spans.some((s) => s.parentSpanId === ""));
    expect(mine.spans.map((s) => s.name)).toContain("invoke_workflow fix-failing-test");
    await h.warrant.close();
    expect(envs.requests).toEqual([]);
  });

  it("sends OTEL_EXPORTER_OTLP_HEADERS with every export, and OTEL_SERVICE_NAME on the resource", async () => {
    const r = await receiver();
    const { h } = await traced(scripts, r, {
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20t0ken-42,x-tenant=acme",
      OTEL_SERVICE_NAME: "agents",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test",
    });
    await h.drive();
    const spans = await exported(h, r);
    expect(r.requests[0]?.headers.authorization).toBe("Bearer t0ken-42");
    expect(r.requests[0]?.headers["x-tenant"]).toBe("acme");
    expect(spans[0]?.resource).toMatchObject({
      "service.name": "agents",
      "deployment.environment": "test",
    });
  });

  it.each(["http/json", "http/protobuf"])(
    "%s: headers of the process's own environment never reach the collector of the environment given",
    async (protocol) => {
      const own = {
        OTEL_EXPORTER_OTLP_HEADERS: "x-leak=process-wide,authorization=Bearer%20not-for-this-one",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-leak-traces=process-wide",
        OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-leak-metrics=process-wide",
      };
      const before = Object.fromEntries(Object.keys(own).map((k) => [k, process.env[k]]));
      Object.assign(process.env, own);
      try {
        const r = await receiver();
        const { h } = await traced(scripts, r, {
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
          OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=acme",
        });
        await h.drive();
        await exported(h, r);
        await h.warrant.close();
        expect(new Set(r.requests.map((q) => q.path))).toEqual(
          new Set(["/v1/traces", "/v1/metrics"]),
        );
        for (const q of r.requests) {
          expect(q.headers["x-tenant"]).toBe("acme");
          expect(q.headers.authorization).toBeUndefined();
          expect(Object.keys(q.headers).filter((k) => k.startsWith("x-leak"))).toEqual([]);
        }
      } finally {
        for (const [k, v] of Object.entries(before)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
    },
  );

  it("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone: traces go to that URL as given, no metrics are sent", async () => {
    const r = await receiver();
    const { h } = await traced(scripts, undefined, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${r.url}/v1/traces`,
    });
    await h.drive();
    await exported(h, r);
    await h.warrant.close();
    expect(new Set(r.requests.map((q) => q.path))).toEqual(new Set(["/v1/traces"]));
  });

  it("OTEL_TRACES_SAMPLER=always_off: no span is sent and no trace is journaled; the metrics still are", async () => {
    const r = await receiver();
    const { h } = await traced(scripts, r, { OTEL_TRACES_SAMPLER: "always_off" });
    await h.drive();
    await h.warrant.close();
    expect(r.requests.map((q) => q.path)).not.toContain("/v1/traces");
    expect(r.metrics.map((m) => m.name)).toContain("gen_ai.client.operation.duration");
    expect(await recordsOf(h, "driveTrace")).toEqual([]);
  });

  it("refuses grpc (one warning, tracing off) and stays off with openTelemetry: false", async () => {
    const r = await receiver();
    const grpc = await traced(scripts, r, { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
    expect(grpc.h.warrant.telemetry.enabled).toBe(false);
    expect(grpc.warnings).toEqual([expect.stringContaining('"grpc" is not supported')]);
    await grpc.h.drive();
    const off = await harness(scripts, { openTelemetry: false });
    await off.drive();
    expect(off.warrant.telemetry.enabled).toBe(false);
    expect(r.requests).toEqual([]);
  });
});

describe("a collector that does not answer never holds a drive up", () => {
  const scripts = { implementer: [Plan("good-fix")], reviewer: [accept], summarizer: [result] };

  it("unreachable: the loop succeeds, and one warning says so without the headers or the path", async () => {
    const gone = await receiver();
    const url = gone.url;
    await gone.close();
    const { h, warnings } = await traced(scripts, undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `${url}/some/secret-path`,
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20hidden-credential",
      OTEL_EXPORTER_OTLP_TIMEOUT: "300",
    });
    const out = await h.drive();
    expect(out.status === "stopped" && out.stop.reason).toBe("succeeded");
    await h.warrant.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(url);
    expect(warnings[0]).not.toContain("secret-path");
    expect(warnings[0]).not.toContain("hidden-credential");
  });

  it("hanging: spans past the bounded queue are dropped, said once; the loop succeeds", async () => {
    const r = await receiver("hang");
    // The export that hangs times out well after the drive has filled the queue, so the full queue
    // is the first loss however slow the machine runs the drive.
    const { h, warnings } = await traced(scripts, r, {
      OTEL_BSP_MAX_QUEUE_SIZE: "2",
      OTEL_EXPORTER_OTLP_TIMEOUT: "3000",
    });
    const out = await h.drive();
    expect(out.status === "stopped" && out.stop.reason).toBe("succeeded");
    await h.warrant.close();
    expect(r.requests.length).toBeGreaterThan(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("the span queue is full (2)");
  });
});
