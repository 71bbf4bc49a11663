// Passage overhead per model turn with an instantly answering scripted model: N−1 calls of an
// `add` tool, then a message, then the transcript record. Reports µs/turn (warm), bare (the passage
// executor alone) and with an agent definition's features on (middleware, a declared tool, skills,
// memory: ./passage-features.ts, through the agent passage runner), how a late turn costs against
// an early one, the RSS of a 1 000-turn passage in a fresh process (before its first turn, after
// its last, and the peak) beside a fresh process's that imports nothing, and the floor (JSON.parse
// + the precompiled seed validator per turn) with the ratio of each figure to it: each block of
// passages is followed at once by the floor, timed again, and a ratio is the median of the blocks'
// ratios to their own floor.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createScriptedModel } from "../../src/adapters/models/scripted-model.js";
import { validate as modelTurnValidator } from "../../src/core/contracts/generated/model-turn.js";
import { toolAnswer } from "../../src/core/ports/tool-host.js";
import { createToolRegistry, type ToolRegistry } from "../../src/core/turn/tool-registry.js";
import { runPassage } from "../../src/runtime/passage.js";
import { transcriptRecord } from "../../src/runtime/passage-transcript.js";
import { median, PEAK_RSS_SOURCE, round } from "../util.js";
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

/** What `program` (an ES module's text) writes on stdout as JSON, run in a fresh Node process. */
function inFreshProcess(program: string): unknown {
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", program], {
    encoding: "utf8",
  });
  if (child.status !== 0) throw new Error(`RSS child failed: ${child.stderr}`);
  return JSON.parse(child.stdout);
}

/**
 * The RSS of one `turns`-turn passage in a fresh process, bare or with the definition's features:
 * `rssBeforeFirstTurnMB` once the modules are imported and the workload set up (no turn run yet),
 * `rssAfterLastTurnMB` after the passage and its transcript record, `peakRssMB` the process's
 * peak; `turnsAddMB` is the peak over the RSS before the first turn.
 */
function rssInFreshProcess(turns: number, features: boolean) {
  const self = fileURLToPath(import.meta.url);
  const setup = features
    ? [
        `const { featuresPassage } = await import(${JSON.stringify(self.replace(/passage\.js$/, "passage-features.js"))});`,
        `const once = await featuresPassage(${turns});`,
      ]
    : [
        `const { scriptedPassage, script } = await import(${JSON.stringify(self)});`,
        `const answers = script(${turns});`,
        `const once = () => scriptedPassage(${turns}, undefined, answers);`,
      ];
  const program = [
    ...setup,
    "const before = process.memoryUsage().rss;",
    "await once();",
    "const after = process.memoryUsage().rss;",
    PEAK_RSS_SOURCE,
    "process.stdout.write(JSON.stringify({ before, after, peak: peakRssBytes() }));",
  ].join("\n");
  const { before, after, peak } = inFreshProcess(program) as Record<string, number>;
  const mb = (bytes: number) => round(bytes / 2 ** 20, 1);
  return {
    rssBeforeFirstTurnMB: mb(before as number),
    rssAfterLastTurnMB: mb(after as number),
    peakRssMB: mb(peak as number),
    turnsAddMB: mb((peak as number) - (before as number)),
  };
}

/**
 * The peak RSS of a fresh Node process that imports nothing (the same kind of program as
 * `rssInFreshProcess`'s, with no module and no turn), in MB: the median of three. The reference
 * the peak RSS figures sit on: what the runtime takes before any code of Warrant's is loaded.
 */
function nodeAloneRssMB(): number {
  const program = [PEAK_RSS_SOURCE, "process.stdout.write(String(peakRssBytes()));"].join("\n");
  const peaks = [0, 1, 2].map(() => (inFreshProcess(program) as number) / 2 ** 20);
  return round(median(peaks), 1);
}

/** The floor's turn: a 110-byte tool call, as a provider would send it. */
const FLOOR_TEXT = JSON.stringify(addTurn(7));
const FLOOR_TURNS = 10_000;

/**
 * The floor now: µs (wall and CPU, user + system) per turn of JSON.parse and the precompiled
 * model-turn validator, over FLOOR_TURNS turns in a tight loop.
 */
function floorNow(): { us: number; cpuUs: number } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < FLOOR_TURNS; i++) {
    const v = JSON.parse(FLOOR_TEXT) as unknown;
    if (!modelTurnValidator(v)) throw new Error("floor turn invalid");
  }
  const us = ((performance.now() - t0) * 1000) / FLOOR_TURNS;
  const c = process.cpuUsage(c0);
  return { us, cpuUs: (c.user + c.system) / FLOOR_TURNS };
}

const SIZES = [
  [10, 200],
  [100, 20],
  [1000, 3],
] as const;
const REPEATS = 7;

/** What `perTurnFigures` gives, by size (`turns10`, …). */
interface PerTurn {
  readonly perTurn: Record<string, number>;
  readonly cpuPerTurn: Record<string, number>;
  /** Each repeat's µs a turn over the floor timed right after it: the median of those ratios. */
  readonly ratios: Record<string, number>;
  readonly cpuRatios: Record<string, number>;
  /** Every floor timed beside a repeat, µs a turn (wall and CPU). */
  readonly floors: number[];
  readonly cpuFloors: number[];
}

/**
 * µs per turn (wall and CPU) of `make(turns)`'s passages at each size, each of REPEATS blocks of
 * passages followed by the floor timed at once: a machine whose speed drifts over the run (shared,
 * throttled) moves both alike, so the ratio of each block to its own floor is steadier than the
 * ratio of two medians taken minutes apart.
 */
async function perTurnFigures(
  make: (turns: number) => Promise<() => Promise<void>>,
): Promise<PerTurn> {
  const out: PerTurn = {
    perTurn: {},
    cpuPerTurn: {},
    ratios: {},
    cpuRatios: {},
    floors: [],
    cpuFloors: [],
  };
  for (const [turns, iterations] of SIZES) {
    const once = await make(turns);
    for (let i = 0; i < iterations; i++) await once();
    floorNow();
    const wall: number[] = [];
    const cpu: number[] = [];
    const ratio: number[] = [];
    const cpuRatio: number[] = [];
    for (let r = 0; r < REPEATS; r++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < iterations; i++) await once();
      const us = ((performance.now() - t0) * 1000) / iterations / turns;
      const c = process.cpuUsage(c0);
      const cpuUs = (c.user + c.system) / iterations / turns;
      const floor = floorNow();
      wall.push(us);
      cpu.push(cpuUs);
      ratio.push(us / floor.us);
      cpuRatio.push(cpuUs / floor.cpuUs);
      out.floors.push(floor.us);
      out.cpuFloors.push(floor.cpuUs);
    }
    const key = `turns${turns}`;
    out.perTurn[key] = round(median(wall));
    out.cpuPerTurn[key] = round(median(cpu));
    out.ratios[key] = round(median(ratio), 1);
    out.cpuRatios[key] = round(median(cpuRatio), 1);
  }
  return out;
}

async function run(): Promise<Record<string, unknown>> {
  const reg = registry();
  const bare = await perTurnFigures(async (turns) => {
    const answers = script(turns);
    return () => scriptedPassage(turns, reg, answers);
  });
  // Imported here: a fresh process measuring the bare passage loads none of the runner's modules.
  const { featuresPassage } = await import("./passage-features.js");
  const features = await perTurnFigures(featuresPassage);
  const { earlyUs, lateUs } = await lateVsEarly(1000, 100, 5);
  const record = await recordFloor();
  const rss = rssInFreshProcess(1000, false);
  const featuresRss = rssInFreshProcess(1000, true);
  const nodeAlone = nodeAloneRssMB();
  const { perTurn, cpuPerTurn } = bare;
  const floorUs = median([...bare.floors, ...features.floors]);
  const floorCpuUs = median([...bare.cpuFloors, ...features.cpuFloors]);
  return {
    usPerTurnWarm: perTurn,
    featuresUsPerTurnWarm: features.perTurn,
    featuresCpuUsPerTurnWarm: features.cpuPerTurn,
    cpuUsPerTurnWarm: cpuPerTurn,
    targetUsPerTurn: 12,
    turn1000VsTurn10: round((perTurn.turns1000 as number) / (perTurn.turns10 as number)),
    cpuTurn1000VsTurn10: round((cpuPerTurn.turns1000 as number) / (cpuPerTurn.turns10 as number)),
    lateTurnsVsEarlyTurnsIn1000: { earlyUs, lateUs, ratio: round(lateUs / earlyUs) },
    targetLateRatio: 1.5,
    ...rss,
    features: { ...featuresRss, overNodeAloneMB: round(featuresRss.peakRssMB - nodeAlone, 1) },
    // The reference of the RSS figures: a fresh Node process with nothing imported.
    nodeAloneRssMB: nodeAlone,
    overNodeAloneMB: round(rss.peakRssMB - nodeAlone, 1),
    targetPeakRssMB: 64,
    // The floor: the median of the floors timed beside each block of passages; each ratio below
    // is the median of the blocks' ratios to their own floor (see perTurnFigures).
    floorUsPerTurn: round(floorUs, 3),
    floorSpreadUs: [
      round(Math.min(...bare.floors, ...features.floors), 3),
      round(Math.max(...bare.floors, ...features.floors), 3),
    ],
    ratioToFloor: bare.ratios.turns100,
    floorCpuUsPerTurn: round(floorCpuUs, 3),
    cpuRatioToFloor: bare.cpuRatios.turns100,
    ratiosToFloor: bare.ratios,
    cpuRatiosToFloor: bare.cpuRatios,
    featuresRatiosToFloor: features.ratios,
    featuresCpuRatiosToFloor: features.cpuRatios,
    targetRatioToFloor: 6,
    // What the transcript's entries cost at the least, a turn: not a target, the reference that
    // says how much of a turn the record the spec asks for takes (bench/README.md).
    recordFloorUsPerTurn: round(record.usPerTurn, 3),
    recordFloorBytesPerTurn: record.bytesPerTurn,
    recordFloorRatioToFloor: round(record.ratioToFloor, 1),
    featuresOverRecordFloor: round((features.perTurn.turns100 as number) / record.usPerTurn, 1),
  };
}

/**
 * The least a turn's record can cost: the entries of a 100-turn features passage's transcript (as
 * the runner made them: each model call with its request digest, raw output, parsed turn, usage
 * and validation, each tool call with its arguments and result) written by V8's own
 * `JSON.stringify` (faster than any JavaScript writer, and not canonical) and hashed once with
 * SHA-256, per turn; each block timed beside the floor, as the passages are. The request digests'
 * steps, which hash each turn's output and results again, are left out: a lower bound.
 */
async function recordFloor(): Promise<{
  usPerTurn: number;
  ratioToFloor: number;
  bytesPerTurn: number;
}> {
  const turns = 100;
  const { featuresPassage } = await import("./passage-features.js");
  const once = await featuresPassage(turns);
  await once();
  const text = once.lastTranscript();
  if (text === undefined) throw new Error("the features passage made no transcript");
  const { entries } = JSON.parse(text) as { entries: unknown[] };
  const write = () => {
    const json = JSON.stringify(entries);
    if (createHash("sha256").update(json).digest("base64url").length !== 43)
      throw new Error("no digest");
  };
  const blocks = 200;
  for (let i = 0; i < blocks; i++) write();
  const per: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < blocks; i++) write();
    const us = ((performance.now() - t0) * 1000) / blocks / turns;
    per.push(us);
    ratios.push(us / floorNow().us);
  }
  return {
    usPerTurn: median(per),
    ratioToFloor: median(ratios),
    bytesPerTurn: Math.round(Buffer.byteLength(JSON.stringify(entries)) / turns),
  };
}

export const passageSuite: BenchSuite = { name: "passage", run };
