// `warrant demo` traced the standard way (OTEL_EXPORTER_OTLP_ENDPOINT): one trace arrives at a real
// OTLP/HTTP receiver, over JSON or protobuf, with the GenAI spans, the runs, their steps and
// checks, the approvals and the facts; no content by default; without the variable nothing is
// sent and no OpenTelemetry module is even loaded.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPack } from "../../src/adapters/fs/pack-loader.js";
import { demoPack } from "../e2e/cli-run.js";
import { runCli } from "../helpers/cli.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./otlp-receiver.js";
import { runTracedCli, type TracedResult } from "./traced-cli.js";

const SCHEMA = "https://opentelemetry.io/schemas/gen-ai/1.42.0";
const dirs: string[] = [];
const receivers: OtlpReceiver[] = [];

function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-otel-demo-"));
  dirs.push(d);
  return d;
}

async function receiver(): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver();
  receivers.push(r);
  return r;
}

afterAll(async () => {
  for (const r of receivers) await r.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const childrenOf = (spans: readonly ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((s) => s.parentSpanId === parent.spanId);
const named = (spans: readonly ReceivedSpan[], prefix: string) =>
  spans.filter((s) => s.name.startsWith(prefix));

let implementerId: string;
let json: { result: TracedResult; spans: ReceivedSpan[]; receiver: OtlpReceiver; cwd: string };

beforeAll(async () => {
  const pack = await loadPack(demoPack);
  if (!pack.ok) throw new Error("the demo pack does not load");
  implementerId = pack.value.agents.implementer?.id ?? "";
  const r = await receiver();
  const cwd = tempDir();
  const result = await runTracedCli(["demo"], {
    cwd,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
  });
  json = { result, spans: r.spans, receiver: r, cwd };
});

describe("warrant demo with OTEL_EXPORTER_OTLP_ENDPOINT (http/json)", () => {
  it("succeeds as without tracing, and delivers every span in one trace, over JSON", () => {
    const { result, spans } = json;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("loop stopped: succeeded");
    expect(result.stderr).not.toContain("telemetry");
    expect(spans.length).toBeGreaterThan(20);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(new Set(spans.map((s) => s.encoding))).toEqual(new Set(["json"]));
    for (const s of spans) {
      expect(s.scope).toBe("warrant");
      expect(s.schemaUrl).toBe(SCHEMA);
      expect(s.resource["service.name"]).toBe("warrant");
      expect(s.endNs).toBeGreaterThanOrEqual(s.startNs);
    }
  });

  it("roots the trace at invoke_workflow fix-failing-test, with the loop's query, binding, store and stop", () => {
    const { result, spans } = json;
    const roots = spans.filter((s) => s.parentSpanId === "");
    expect(roots.map((s) => s.name)).toEqual(["invoke_workflow fix-failing-test"]);
    const root = roots[0] as ReceivedSpan;
    const query = /query: (\S+)\s*$/.exec(result.stdout)?.[1];
    expect(root.kind).toBe(1);
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_workflow",
      "gen_ai.workflow.name": "fix-failing-test",
      "warrant.query": query,
      "warrant.binding": expect.stringMatching(/^operator-task-local-binding:/),
      "warrant.store": "sqlite",
      "warrant.stop.reason": "succeeded",
      "warrant.drive.status": "stopped",
    });
    // Every appended fact is an event on the span that appended it, in order.
    const facts = root.events.filter((e) => e.name === "warrant.fact");
    expect(facts.map((e) => e.attributes["warrant.fact.kind"])).toContain("concluded");
    const sequences = facts.map((e) => e.attributes["warrant.fact.sequence"] as number);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(sequences.length).toBeGreaterThanOrEqual(12);
  });

  it("has an invoke_agent span per passage, the implementer's carrying its content ID, with chat and execute_tool children", () => {
    const { spans } = json;
    const root = spans.find((s) => s.parentSpanId === "") as ReceivedSpan;
    const agents = childrenOf(spans, root).filter((s) => s.name.startsWith("invoke_agent "));
    expect(agents.map((s) => s.name).sort()).toEqual([
      "invoke_agent implementer",
      "invoke_agent implementer",
      "invoke_agent implementer",
      "invoke_agent reviewer",
      "invoke_agent reviewer",
      "invoke_agent reviewer",
      "invoke_agent summarizer",
    ]);
    const implementers = agents.filter((s) => s.name === "invoke_agent implementer");
    expect(implementerId).toMatch(/^agent:/);
    for (const a of implementers) {
      expect(a.attributes).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "implementer",
        "gen_ai.agent.id": implementerId,
        "gen_ai.agent.version": "1",
        "warrant.role": "implementer",
        "warrant.passage.ref": expect.stringMatching(/^passage:/),
        "warrant.message.type": "Plan",
      });
      const chats = childrenOf(spans, a).filter((s) => s.name.startsWith("chat "));
      expect(chats.length).toBeGreaterThanOrEqual(1);
      for (const c of chats) {
        expect(c.kind).toBe(3);
        expect(c.name).toBe("chat implementer");
        expect(c.attributes).toMatchObject({
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "scripted",
          "gen_ai.request.model": "implementer",
          "gen_ai.usage.input_tokens": 0,
          "gen_ai.usage.output_tokens": 0,
        });
      }
    }
    // The first implementer passage reads a file before it plans: chat, tool, chat.
    const first = implementers.sort((a, b) => Number(a.startNs - b.startNs))[0] as ReceivedSpan;
    const steps = childrenOf(spans, first).sort((a, b) => Number(a.startNs - b.startNs));
    expect(steps.map((s) => s.name)).toEqual([
      "chat implementer",
      "execute_tool workspace.read_file",
      "chat implementer",
    ]);
    expect(steps[1]?.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "workspace.read_file",
      "gen_ai.tool.call.id": `${first.attributes["warrant.passage.ref"]}#0.0`,
      "gen_ai.tool.type": "function",
      "warrant.tool.kind": "workspace",
    });
  });

  it("has the two warrant.run spans with their steps, checks and the approval answered", () => {
    const { spans } = json;
    const root = spans.find((s) => s.parentSpanId === "") as ReceivedSpan;
    const runs = childrenOf(spans, root)
      .filter((s) => s.name.startsWith("warrant.run "))
      .sort((a, b) => Number(a.startNs - b.startNs));
    expect(runs).toHaveLength(2);
    expect(runs.map((r) => r.attributes["warrant.run.outcome"])).toEqual([
      "verification-failed",
      "verified",
    ]);
    for (const r of runs) {
      expect(r.name).toBe(`warrant.run ${r.attributes["warrant.proposal.ref"]}`);
      expect(r.attributes).toMatchObject({
        "warrant.sandbox.backend": expect.any(String),
        "warrant.environment.destroyed": true,
      });
    }
    const kids = (r: ReceivedSpan) =>
      childrenOf(spans, r)
        .sort((a, b) => Number(a.startNs - b.startNs))
        .map((s) => s.name);
    expect(kids(runs[1] as ReceivedSpan)).toEqual([
      "warrant.step read-slugify",
      "warrant.step fix-slugify",
      "warrant.step run-tests",
      "warrant.check tests-pass",
      "warrant.check tests-unchanged",
      "warrant.check only-allowed-changed",
      "warrant.check network-unreachable",
    ]);
    const steps = named(childrenOf(spans, runs[1] as ReceivedSpan), "warrant.step ");
    expect(steps.find((s) => s.name === "warrant.step run-tests")?.attributes).toMatchObject({
      "warrant.step.action": "observe-command",
      "warrant.step.status": "ok",
      "warrant.step.exit_code": 0,
    });
    expect(steps.find((s) => s.name === "warrant.step fix-slugify")?.attributes).toMatchObject({
      "warrant.step.class": "mutation",
      "warrant.step.action": "patch",
    });
    // The first run's test step failed: an error span with its exit code.
    const failed = named(childrenOf(spans, runs[0] as ReceivedSpan), "warrant.step run-tests")[0];
    expect(failed?.attributes["warrant.step.exit_code"]).toBe(1);
    expect(failed?.status.code).toBe(2);
    const checks = named(childrenOf(spans, runs[1] as ReceivedSpan), "warrant.check ");
    expect(checks.every((c) => c.attributes["warrant.check.passed"] === true)).toBe(true);
    // The demo approves its mutation itself: the answer, and who gave it, on the run.
    const answered = runs[1]?.events.filter((e) => e.name === "warrant.approval.answered");
    expect(answered?.map((e) => e.attributes)).toEqual([
      {
        "warrant.approval.step": "fix-slugify",
        "warrant.approval.kind": "mutation",
        "warrant.proposal.ref": runs[1]?.attributes["warrant.proposal.ref"],
        "warrant.approval.answer": "approved",
        "warrant.approval.by": "auto",
      },
    ]);
  });

  it("journals the drive's trace context in a signed record that warrant loop check accepts", async () => {
    const query = /query: (\S+)\s*$/.exec(json.result.stdout)?.[1] ?? "";
    const store = ["--store", "sqlite:.warrant/ledger.db"];
    const shown = await runCli(["show", query, "--json", ...store], { cwd: json.cwd });
    const kinds = (JSON.parse(shown.stdout) as { records: { kind: string }[] }).records.map(
      (r) => r.kind,
    );
    expect(kinds.filter((k) => k === "driveTrace")).toHaveLength(1);
    const check = await runCli(["loop", "check", ...store, query], { cwd: json.cwd });
    expect(check.stdout + check.stderr).toContain("valid");
    expect(check.code).toBe(0);
  });

  it("records no prompt, answer or tool payload without WARRANT_OTEL_CAPTURE_CONTENT", () => {
    const keys = json.spans.flatMap((s) => Object.keys(s.attributes));
    for (const k of [
      "gen_ai.input.messages",
      "gen_ai.output.messages",
      "gen_ai.system_instructions",
      "gen_ai.tool.call.arguments",
      "gen_ai.tool.call.result",
      "warrant.approval.description",
    ])
      expect(keys).not.toContain(k);
    const bodies = json.receiver.requests.map((r) => r.body.toString("utf8")).join("\n");
    expect(bodies).not.toContain("slugify replaced each");
    expect(bodies).not.toContain("You are the implementer");
  });

  it("sends the GenAI client metrics and Warrant's counters", async () => {
    const { receiver: r } = json;
    await r.until(() => r.metrics.some((m) => m.name === "warrant.budget.spent"));
    const metric = (name: string) => r.metrics.filter((m) => m.name === name).at(-1);
    const duration = metric("gen_ai.client.operation.duration");
    expect(duration?.kind).toBe("histogram");
    expect(duration?.unit).toBe("s");
    expect(duration?.points.map((p) => p.attributes["warrant.role"]).sort()).toEqual([
      "implementer",
      "reviewer",
      "summarizer",
    ]);
    const implementer = duration?.points.find(
      (p) => p.attributes["warrant.role"] === "implementer",
    );
    expect(implementer?.count).toBe(4);
    expect(implementer?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "scripted",
      "gen_ai.request.model": "implementer",
    });
    const tokens = metric("gen_ai.client.token.usage");
    expect(tokens?.points.map((p) => p.attributes["gen_ai.token.type"])).toContain("output");
    expect(metric("warrant.loop.stops")?.points).toEqual([
      { attributes: { "warrant.stop.reason": "succeeded" }, value: 1 },
    ]);
    const spent = Object.fromEntries(
      (metric("warrant.budget.spent")?.points ?? []).map((p) => [
        p.attributes["warrant.budget.counter"],
        p.value,
      ]),
    );
    expect(spent).toEqual({
      "max/passages": 7,
      "max/solver-passages": 3,
      "max/reviewer-passages": 3,
      "max/cycles": 3,
      "max/experiments": 2,
    });
  });
});

describe("warrant demo traced over the default protocol (http/protobuf)", () => {
  it("delivers the same spans, decoded from protobuf", async () => {
    const r = await receiver();
    const result = await runTracedCli(["demo"], {
      cwd: tempDir(),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_SERVICE_NAME: "agents-ci" },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(new Set(r.spans.map((s) => s.encoding))).toEqual(new Set(["protobuf"]));
    expect(r.requests.every((q) => q.contentType === "application/x-protobuf")).toBe(true);
    // A run's span is named after its proposal, whose ref differs from loop to loop.
    const shape = (spans: readonly ReceivedSpan[]) =>
      spans.map((s) => s.name.replace(/^warrant\.run .*/, "warrant.run")).sort();
    expect(shape(r.spans)).toEqual(shape(json.spans));
    const root = r.spans.find((s) => s.parentSpanId === "");
    expect(root?.name).toBe("invoke_workflow fix-failing-test");
    expect(root?.resource["service.name"]).toBe("agents-ci");
    const tool = r.spans.find((s) => s.name.startsWith("execute_tool"));
    expect(tool?.attributes["gen_ai.tool.type"]).toBe("function");
    // The SDK's OTLP/HTTP transport sends the spans; Warrant writes their protobuf body itself.
    expect(result.packages).toContain("@opentelemetry/otlp-exporter-base");
  });
});

describe("warrant demo without an OTLP endpoint", () => {
  it("exports nothing and loads no OpenTelemetry module at all", async () => {
    const r = await receiver();
    const result = await runTracedCli(["demo"], { cwd: tempDir() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.packages).toContain("commander");
    expect(result.packages.filter((p) => p.startsWith("@opentelemetry/"))).toEqual([]);
    expect(r.requests).toEqual([]);
  });

  it("loads the API, the SDK and the OTLP transport when the endpoint is set (the check above can fail)", () => {
    for (const p of [
      "@opentelemetry/api",
      "@opentelemetry/sdk-trace",
      "@opentelemetry/sdk-metrics",
      "@opentelemetry/otlp-exporter-base",
      "@opentelemetry/otlp-transformer",
    ])
      expect(json.result.packages).toContain(p);
  });

  it("with OTEL_SDK_DISABLED=true beside the endpoint: nothing is sent or loaded", async () => {
    const r = await receiver();
    const result = await runTracedCli(["demo"], {
      cwd: tempDir(),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_SDK_DISABLED: "true" },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.packages.filter((p) => p.startsWith("@opentelemetry/"))).toEqual([]);
    expect(r.requests).toEqual([]);
  });
});
