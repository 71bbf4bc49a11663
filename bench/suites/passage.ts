// Passage overhead per model turn with an instantly answering scripted model: N−1 calls of an
// `add` tool, then a message, then the transcript record. Reports µs/turn (warm), how a late turn
// costs against an early one, peak RSS of a 1 000-turn passage in a fresh process, and the floor
// (JSON.parse + the precompiled seed validator per turn) with the ratio to it.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createScriptedModel } from "../../src/adapters/models/scripted-model.js";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { toolAnswer } from "../../src/core/ports/tool-host.js";
import { createToolRegistry, type ToolRegistry } from "../../src/core/turn/tool-registry.js";
import { runPassage } from "../../src/runtime/passage.js";
import { transcriptRecord } from "../../src/runtime/passage-transcript.js";
import { measureAsync, measureSync, median, round } from "../util.js";
import type { BenchSuite } from "./index.js";

export const ADD = {
  name: "math.add",
  description: "Add two integers",
  inputSchema: {
    type: "object",
    properties: { a: { type: "integer" }, b: { type: "integer" } },
    required: ["a", "b"],
    additionalProperties: false,
  },
  effect: "observation",
} as const;

function addTurn(i: number): Record<string, unknown> {
  return {
    kind: "tool_calls",
    summary: `step ${i}`,
    tool_calls: [{ name: ADD.name, arguments_json: `{"a":${i},"b":1}` }],
    message: null,
  };
}

const FINDING = {
  kind: "message",
  summary: "done",
  tool_calls: [],
  message: {
    type: "Finding",
    payload_json: '{"severity":"info","claim":"summed","evidence":[]}',
    paper_ref: null,
  },
};

export function script(turns: number): unknown[] {
  return [...Array.from({ length: turns - 1 }, (_, i) => addTurn(i)), FINDING];
}

function registry(): ToolRegistry {
  const r = createToolRegistry([ADD]);
  if (!r.ok) throw new Error("the bench registry does not compile");
  return r.value;
}

const host = {
  call: async (_name: string, args: Record<string, unknown>) =>
    toolAnswer(String((args.a as number) + (args.b as number))),
};

/**
 * One passage of `turns` model turns and its transcript record; `onTurn` sees each model call as it
 * completes.
 */
export async function scriptedPassage(
  turns: number,
  reg: ToolRegistry = registry(),
  answers: readonly unknown[] = script(turns),
  onTurn?: () => void,
): Promise<void> {
  const out = await runPassage({
    role: "implementer",
    agentId: "agent:bench",
    system: "Sum the numbers.",
    evidence: "Numbers 1 to N.",
    registry: reg,
    toolHost: host,
    provider: createScriptedModel(answers as never),
    limits: { maxTurns: turns, maxTokens: 1e12 },
    ...(onTurn === undefined ? {} : { onEvent: (e) => e.kind === "model-call-end" && onTurn() }),
  });
  if (!out.ok) throw new Error(`bench passage failed: ${out.code}`);
  // The finish is part of the cost: the transcript as a record, ref computed.
  transcriptRecord("query:bench", out.transcript);
}

/** Median µs of early and late turns of one long passage, over several passages. */
async function lateVsEarly(turns: number, window: number, repeats: number) {
  const reg = registry();
  const answers = script(turns);
  const early: number[] = [];
  const late: number[] = [];
  for (let r = 0; r < repeats + 1; r++) {
    const stamps: number[] = [];
    await scriptedPassage(turns, reg, answers, () => stamps.push(performance.now()));
    if (r === 0) continue; // warm-up
    const per = stamps.slice(1).map((t, i) => (t - (stamps[i] as number)) * 1000);
    early.push(median(per.slice(0, window)));
    late.push(median(per.slice(-window)));
  }
  return { earlyUs: round(median(early)), lateUs: round(median(late)) };
}

/**
 * Peak RSS of one passage in a fresh process, and what part of it the turns add: `beforeTurnsMB`
 * is the peak after the imports and a 1-turn passage (validators compiled, code warm).
 */
function peakRssInFreshProcess(turns: number) {
  const self = fileURLToPath(import.meta.url);
  const program = [
    `const { scriptedPassage } = await import(${JSON.stringify(self)});`,
    "await scriptedPassage(1);",
    "const before = process.resourceUsage().maxRSS;",
    `await scriptedPassage(${turns});`,
    "process.stdout.write(JSON.stringify({ before, peak: process.resourceUsage().maxRSS }));",
  ].join("\n");
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", program], {
    encoding: "utf8",
  });
  if (child.status !== 0) throw new Error(`RSS child failed: ${child.stderr}`);
  const { before, peak } = JSON.parse(child.stdout) as { before: number; peak: number };
  return {
    peakRssMB: round(peak / 1024, 1),
    beforeTurnsMB: round(before / 1024, 1),
    turnsAddMB: round((peak - before) / 1024, 1),
  };
}

/** CPU time (user + system) per passage in µs: steadier than wall time on a busy machine. */
async function cpuUsPerPassage(fn: () => Promise<void>, iterations: number): Promise<number> {
  for (let i = 0; i < iterations; i++) await fn();
  const per: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < iterations; i++) await fn();
    const d = process.cpuUsage(t0);
    per.push((d.user + d.system) / iterations);
  }
  return median(per);
}

async function run(): Promise<Record<string, unknown>> {
  const reg = registry();
  const perTurn: Record<string, number> = {};
  const cpuPerTurn: Record<string, number> = {};
  for (const [turns, iterations] of [
    [10, 200],
    [100, 20],
    [1000, 3],
  ] as const) {
    const answers = script(turns);
    const once = () => scriptedPassage(turns, reg, answers);
    const t = await measureAsync(once, { iterations, repeats: 7, warmup: iterations });
    perTurn[`turns${turns}`] = round(t.medianUs / turns);
    cpuPerTurn[`turns${turns}`] = round((await cpuUsPerPassage(once, iterations)) / turns);
  }
  const { earlyUs, lateUs } = await lateVsEarly(1000, 100, 5);

  const validate = contractValidators().modelTurn;
  const text = JSON.stringify(addTurn(7));
  const floor = measureSync(
    () => {
      const v = JSON.parse(text) as unknown;
      if (!validate(v)) throw new Error("floor turn invalid");
    },
    { iterations: 20_000 },
  );
  const floorCpuUs =
    (await cpuUsPerPassage(async () => {
      for (let i = 0; i < 1000; i++) {
        const v = JSON.parse(text) as unknown;
        if (!validate(v)) throw new Error("floor turn invalid");
      }
    }, 5)) / 1000;
  const rss = peakRssInFreshProcess(1000);
  const warm = perTurn.turns100 as number;
  return {
    usPerTurnWarm: perTurn,
    cpuUsPerTurnWarm: cpuPerTurn,
    targetUsPerTurn: 12,
    turn1000VsTurn10: round((perTurn.turns1000 as number) / (perTurn.turns10 as number)),
    cpuTurn1000VsTurn10: round((cpuPerTurn.turns1000 as number) / (cpuPerTurn.turns10 as number)),
    lateTurnsVsEarlyTurnsIn1000: { earlyUs, lateUs, ratio: round(lateUs / earlyUs) },
    targetLateRatio: 1.5,
    ...rss,
    targetPeakRssMB: 64,
    floorUsPerTurn: floor.medianUs,
    ratioToFloor: round(warm / floor.medianUs, 1),
    floorCpuUsPerTurn: round(floorCpuUs),
    cpuRatioToFloor: round((cpuPerTurn.turns100 as number) / floorCpuUs, 1),
  };
}

export const passageSuite: BenchSuite = { name: "passage", run };
