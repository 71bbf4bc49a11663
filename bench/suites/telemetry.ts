// What tracing costs per model turn, in one run, rounds interleaved so drift hits every variant
// alike. A 1 000-turn passage (an instant scripted model calling an `add` tool, then a message) is
// run four ways: `bare`, the passage bench's own loop (no events); `events`, through the agent
// passage runner with the composition's event stream and no telemetry hook; `off`, the same with
// the hook of a runtime whose tracing is off (what every untraced drive does); `on`, traced by the
// SDK with spans and metrics sent over OTLP/HTTP protobuf to a local collector in another process,
// each passage followed by a flush, so serialising and sending count too. Targets: `off` within
// noise of `events`; `on` at most 15 µs per turn above `off`, and at most 1.5× `off` (`onVsOff`).
// With WARRANT_BENCH_BASELINE naming another build's `dist/src` (the main branch's, say), its
// passage loop, event path and traced passage run in the same rounds, so `bare`, `events` and `on`
// are compared with the code before a change in one run (`onVsBaseline`: the noise between two
// runs is larger than most changes to tracing).
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { loadPack } from "../../src/adapters/fs/pack-loader.js";
import { createScriptedModel } from "../../src/adapters/models/scripted-model.js";
import { startOtlp } from "../../src/adapters/telemetry/otlp-sdk.js";
import { packageRoot } from "../../src/cli/packs.js";
import { type ToolHost, toolAnswer } from "../../src/core/ports/tool-host.js";
import { ok } from "../../src/core/result.js";
import { createToolRegistry } from "../../src/core/turn/tool-registry.js";
import { createTelemetry } from "../../src/library/telemetry.js";
import { createAgentPassages } from "../../src/runtime/agent-passages.js";
import {
  type Emit,
  eventStamper,
  type WarrantEvent,
  type WarrantEventBody,
} from "../../src/runtime/events.js";
import { systemClock } from "../../src/runtime/system-time.js";
import type { LoadedPack } from "../../src/runtime/task-pack.js";
import { createTracingSubscriber } from "../../src/runtime/telemetry/tracing-subscriber.js";
import { median, round } from "../util.js";
import type { BenchSuite } from "./index.js";
import { ADD, script, scriptedPassage } from "./passage.js";

/**
 * The models of a passage runner: a callable (the form earlier builds take, for a baseline measured
 * in the same run) that also answers as the current runner asks, by the definition's model alone.
 */
function passageModels<M>(make: () => M) {
  return Object.assign(make, { override: () => undefined, definition: make }) as never;
}

const TURNS = 1000;
const ROUNDS = 31;
const WARMUP = 3;
const QUERY = "query:bench";

const host: ToolHost = {
  specs: () => [ADD],
  call: async (_name, args) => toolAnswer(String((args.a as number) + (args.b as number))),
};

/** The passage bench's script, with token counts as a provider reports them (so the token
 * histograms record as they would live). */
const withUsage = (turns: number) =>
  script(turns).map((turn) => ({ turn, usage: { input: 120, output: 16 } }));

/** A local collector in its own process: takes every POST and answers 200 at once. */
async function startCollector(): Promise<{ url: string; child: ChildProcess }> {
  const program = [
    'const http = require("node:http");',
    "const s = http.createServer((q, r) => { q.resume(); q.on('end', () => {",
    "  r.writeHead(200, { 'content-type': 'application/x-protobuf' }); r.end(); }); });",
    "s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));",
  ].join("\n");
  const child = spawn(process.execPath, ["-e", program], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout?.setEncoding("utf8").once("data", (d: string) => resolve(d.trim()));
    child.once("exit", () => reject(new Error("the bench collector did not start")));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

/** The modules a traced passage is made of: this build's, or a baseline's of the same shape. */
interface TracedModules {
  readonly startOtlp: typeof startOtlp;
  readonly createTracingSubscriber: typeof createTracingSubscriber;
  readonly createAgentPassages: typeof createAgentPassages;
  readonly createScriptedModel: typeof createScriptedModel;
  readonly eventStamper: typeof eventStamper;
  readonly systemClock: typeof systemClock;
}

/**
 * The `on` variant made of `m`: a passage traced by the SDK, spans and metrics sent to the collector
 * at `url`, each passage followed by a flush. `shutdown` stops its providers.
 */
async function tracedVariant(
  m: TracedModules,
  url: string,
  pack: LoadedPack,
  answers: readonly unknown[],
): Promise<{ run: () => Promise<void>; shutdown: () => Promise<void> }> {
  const agentId = pack.agents.implementer?.id ?? "agent:bench";
  const target = (signal: string) => ({
    url: `${url}/v1/${signal}`,
    protocol: "http/protobuf" as const,
    headers: {},
    timeoutMs: 10_000,
  });
  const sdk = await m.startOtlp(
    {
      serviceName: "warrant-bench",
      resourceAttributes: {},
      traces: target("traces"),
      metrics: target("metrics"),
      captureContent: false,
      // A whole 1 000-turn passage (two spans a turn) fits: nothing is dropped.
      maxQueueSize: 4 * TURNS,
      scheduleDelayMs: 5000,
      sampler: { kind: "always_on", parentBased: true, ratio: 1 },
      metricIntervalMs: 60_000,
    },
    (w) => process.stderr.write(`bench: ${w}\n`),
  );
  const tracing = m.createTracingSubscriber({
    tracerProvider: sdk.tracerProvider,
    ...(sdk.meterProvider === undefined ? {} : { meterProvider: sdk.meterProvider }),
  });
  const stamp = m.eventStamper(m.systemClock);
  const seen: WarrantEvent[] = [];
  const emitOn: Emit = (body: WarrantEventBody) => {
    const e = stamp(body);
    seen.length = 0;
    seen.push(e);
    tracing.observe(e);
  };
  const passages = m.createAgentPassages({
    models: passageModels(() => m.createScriptedModel(answers as never)),
    tools: async () => ok(host),
    emit: emitOn,
  });
  const passage = {
    query: QUERY,
    role: "implementer",
    passageRef: "passage:bench",
    agentId,
  } as const;
  const run = async () => {
    emitOn({
      kind: "drive-start",
      query: QUERY,
      pack: pack.pack.name,
      binding: "binding:bench",
      holder: "bench",
      store: "memory",
    });
    emitOn({ kind: "passage-start", ...passage, redone: false });
    const out = await passages.run({
      ...passage,
      evidence: "Numbers 1 to N.",
      pack,
      priorCalls: 0,
    });
    if (!out.ok) throw new Error(`bench passage failed: ${out.code}`);
    emitOn({ kind: "passage-end", ...passage, outcome: { ok: true, type: "Finding" } });
    emitOn({ kind: "drive-end", query: QUERY, status: "stopped" });
    await sdk.flush();
  };
  return { run, shutdown: () => sdk.shutdown() };
}

/**
 * The passage loop and the event path of another build (its `dist/src`), to compare in the same
 * rounds: the same workload through its own modules.
 */
async function baselineVariants(
  dist: string,
  answers: readonly unknown[],
  collectorUrl: string,
): Promise<{
  bare: () => Promise<void>;
  events: () => Promise<void>;
  on: () => Promise<void>;
  shutdown: () => Promise<void>;
}> {
  const from = <T>(file: string) => import(path.resolve(dist, file)) as Promise<T>;
  const passage = await from<typeof import("../../src/runtime/passage.js")>("runtime/passage.js");
  const transcript = await from<typeof import("../../src/runtime/passage-transcript.js")>(
    "runtime/passage-transcript.js",
  );
  const scripted = await from<typeof import("../../src/adapters/models/scripted-model.js")>(
    "adapters/models/scripted-model.js",
  );
  const registries = await from<typeof import("../../src/core/turn/tool-registry.js")>(
    "core/turn/tool-registry.js",
  );
  const agents = await from<typeof import("../../src/runtime/agent-passages.js")>(
    "runtime/agent-passages.js",
  );
  const packs = await from<typeof import("../../src/adapters/fs/pack-loader.js")>(
    "adapters/fs/pack-loader.js",
  );
  const reg = registries.createToolRegistry([ADD]);
  if (!reg.ok) throw new Error("the baseline registry does not compile");
  const loaded = await packs.loadPack(
    path.join(packageRoot(), "examples/fix-failing-test/task-pack.json"),
  );
  if (!loaded.ok) throw new Error("the baseline does not load the demo pack");
  const pack = {
    ...loaded.value,
    pack: { ...loaded.value.pack, passage: { maxTurns: TURNS, maxTokens: 1e12, repairs: 0 } },
  };
  const traced = await tracedVariant(
    {
      startOtlp: (
        await from<typeof import("../../src/adapters/telemetry/otlp-sdk.js")>(
          "adapters/telemetry/otlp-sdk.js",
        )
      ).startOtlp,
      createTracingSubscriber: (
        await from<typeof import("../../src/runtime/telemetry/tracing-subscriber.js")>(
          "runtime/telemetry/tracing-subscriber.js",
        )
      ).createTracingSubscriber,
      createAgentPassages: agents.createAgentPassages,
      createScriptedModel: scripted.createScriptedModel,
      eventStamper: (await from<typeof import("../../src/runtime/events.js")>("runtime/events.js"))
        .eventStamper,
      systemClock: (
        await from<typeof import("../../src/runtime/system-time.js")>("runtime/system-time.js")
      ).systemClock,
    },
    collectorUrl,
    pack as LoadedPack,
    answers,
  );
  const seen: unknown[] = [];
  const runner = agents.createAgentPassages({
    models: passageModels(() => scripted.createScriptedModel(answers as never)),
    tools: async () => ok(host),
    emit: (body) => {
      seen.length = 0;
      seen.push({ ...body, at: new Date().toISOString() });
    },
  });
  return {
    on: traced.run,
    shutdown: traced.shutdown,
    async bare() {
      const out = await passage.runPassage({
        role: "implementer",
        agentId: "agent:bench",
        system: "Sum the numbers.",
        evidence: "Numbers 1 to N.",
        registry: reg.value,
        toolHost: host,
        provider: scripted.createScriptedModel(answers as never),
        limits: { maxTurns: TURNS, maxTokens: 1e12 },
      });
      if (!out.ok) throw new Error(`baseline passage failed: ${out.code}`);
      transcript.transcriptRecord("query:bench", out.transcript);
    },
    async events() {
      const out = await runner.run({
        query: QUERY,
        role: "implementer",
        agentId: pack.agents.implementer?.id ?? "agent:bench",
        passageRef: "passage:bench",
        evidence: "Numbers 1 to N.",
        pack,
        priorCalls: 0,
      });
      if (!out.ok) throw new Error(`baseline passage failed: ${out.code}`);
    },
  };
}

async function run(): Promise<Record<string, unknown>> {
  const loaded = await loadPack(
    path.join(packageRoot(), "examples/fix-failing-test/task-pack.json"),
  );
  if (!loaded.ok) throw new Error("the demo pack does not load");
  const pack: LoadedPack = {
    ...loaded.value,
    pack: { ...loaded.value.pack, passage: { maxTurns: TURNS, maxTokens: 1e12, repairs: 0 } },
  };
  const agentId = pack.agents.implementer?.id ?? "agent:bench";
  const answers = withUsage(TURNS);

  /** The composition's emitter: each event copied and stamped, then handed to `observe`. */
  const emitter = (observe: (e: WarrantEvent) => void): Emit => {
    const stamp = eventStamper(systemClock);
    return (body: WarrantEventBody) => observe(stamp(body));
  };
  const passageWith = (emit: Emit) => {
    const passages = createAgentPassages({
      models: passageModels(() => createScriptedModel(answers as never)),
      tools: async () => ok(host),
      emit,
    });
    return async () => {
      const out = await passages.run({
        query: QUERY,
        role: "implementer",
        agentId,
        passageRef: "passage:bench",
        evidence: "Numbers 1 to N.",
        pack,
        priorCalls: 0,
      });
      if (!out.ok) throw new Error(`bench passage failed: ${out.code}`);
    };
  };

  const seen: WarrantEvent[] = [];
  const events = passageWith(
    emitter((e) => {
      seen.length = 0;
      seen.push(e);
    }),
  );
  const offTelemetry = createTelemetry({ env: {} });
  if (offTelemetry.enabled) throw new Error("tracing must be off for the `off` variant");
  const off = passageWith(
    emitter((e) => {
      seen.length = 0;
      seen.push(e);
      // As the composition's emitter does: an untraced runtime never calls into telemetry.
      if (offTelemetry.enabled) offTelemetry.observe(e);
    }),
  );

  const collector = await startCollector();
  try {
    const traced = await tracedVariant(
      {
        startOtlp,
        createTracingSubscriber,
        createAgentPassages,
        createScriptedModel,
        eventStamper,
        systemClock,
      },
      collector.url,
      pack,
      answers,
    );
    const on = traced.run;
    const shutdowns = [traced.shutdown];
    const registry = createToolRegistry([ADD]);
    if (!registry.ok) throw new Error("the bench registry does not compile");
    const bare = () => scriptedPassage(TURNS, registry.value, answers);

    const variants: Record<string, () => Promise<void>> = { bare, events, off, on };
    const baseline = process.env.WARRANT_BENCH_BASELINE;
    if (baseline !== undefined && baseline !== "") {
      const other = await baselineVariants(baseline, answers, collector.url);
      variants["baseline-bare"] = other.bare;
      variants["baseline-events"] = other.events;
      variants["baseline-on"] = other.on;
      shutdowns.push(other.shutdown);
    }
    // WARRANT_BENCH_VARIANTS=on (a comma list) runs only the named variants: for a profile of one.
    const only = process.env.WARRANT_BENCH_VARIANTS?.split(",").filter((v) => v !== "");
    if (only !== undefined && only.length > 0)
      for (const name of Object.keys(variants)) if (!only.includes(name)) delete variants[name];
    const wall: Record<string, number[]> = {};
    const cpu: Record<string, number[]> = {};
    for (const name of Object.keys(variants)) {
      wall[name] = [];
      cpu[name] = [];
    }
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      // A new order each round: no variant always runs after the same one.
      const order = Object.entries(variants).sort(() => Math.random() - 0.5);
      for (const [name, fn] of order) {
        await yieldToLoop();
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await fn();
        await yieldToLoop();
        const ms = performance.now() - t0;
        const c = process.cpuUsage(c0);
        if (round < WARMUP) continue;
        wall[name]?.push((ms * 1000) / TURNS);
        cpu[name]?.push((c.user + c.system) / TURNS);
      }
    }
    for (const stop of shutdowns) await stop();
    const us = (xs: number[]) => round(median(xs));
    const perTurn = Object.fromEntries(Object.entries(wall).map(([k, v]) => [k, us(v)]));
    const cpuPerTurn = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, us(v)]));
    const m = (xs: Record<string, number[]>, k: string) => median(xs[k] ?? []);
    // Each variant against the baseline's, where both ran (WARRANT_BENCH_VARIANTS may leave some out).
    const vsBaseline: Record<string, number> = {};
    const ran = (k: string) => (wall[k]?.length ?? 0) > 0;
    for (const name of ["bare", "events", "on"]) {
      const other = `baseline-${name}`;
      if (!ran(name) || !ran(other)) continue;
      vsBaseline[`${name}VsBaseline`] = round(m(wall, name) / m(wall, other), 3);
      vsBaseline[`cpu${name[0]?.toUpperCase()}${name.slice(1)}VsBaseline`] = round(
        m(cpu, name) / m(cpu, other),
        3,
      );
    }
    if (ran("off") && ran("baseline-on"))
      vsBaseline.baselineOnVsOff = round(m(wall, "baseline-on") / m(wall, "off"), 2);
    return {
      turns: TURNS,
      rounds: ROUNDS,
      usPerTurn: perTurn,
      cpuUsPerTurn: cpuPerTurn,
      offVsEvents: round(m(wall, "off") / m(wall, "events"), 3),
      cpuOffVsEvents: round(m(cpu, "off") / m(cpu, "events"), 3),
      eventsVsBare: round(m(wall, "events") / m(wall, "bare"), 3),
      ...vsBaseline,
      onAddedUsPerTurn: round(m(wall, "on") - m(wall, "off")),
      onAddedCpuUsPerTurn: round(m(cpu, "on") - m(cpu, "off")),
      targetOnAddedUsPerTurn: 15,
      onVsOff: round(m(wall, "on") / m(wall, "off"), 2),
      cpuOnVsOff: round(m(cpu, "on") / m(cpu, "off"), 2),
      targetOnVsOff: 1.5,
    };
  } finally {
    collector.child.kill();
  }
}

export const telemetrySuite: BenchSuite = { name: "telemetry", run };
