// One measurement in a fresh process: import a system, run one cold loop, warm it up, then time
// measured loops. Prints one JSON line on stdout; any failed check makes the figure not count.
//   node child.mjs SYSTEM N WARMUP_STEPS MEASURED_STEPS [STORE] [WARMUP_MS]
// The warm-up runs at least WARMUP_STEPS steps and at least WARMUP_MS milliseconds (default 0):
// each system gets the same time to be optimised, however fast its steps are.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { Script } from "./script.mjs";

const [systemName, nArg, warmupArg, measuredArg, storeArg, warmupMsArg] = process.argv.slice(2);
const store = storeArg === "" ? undefined : storeArg;
const warmupMs = Number(warmupMsArg ?? 0);
const n = Number(nArg);
const warmupLoops = Math.max(1, Math.ceil(Number(warmupArg) / n));
const measuredLoops = Math.max(3, Math.ceil(Number(measuredArg) / n));

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Mean duration in µs of steps [from, to) of the loop just run. */
function meanStepUs(stamps, from, to) {
  return ((stamps[to] - stamps[from]) * 1000) / (to - from);
}

const mod = await import(`./systems/${systemName}.mjs`);
const script = new Script(n);
const system = await mod.create(script, { store });

let loopIndex = 0;
/** Runs one loop and checks it; returns its duration in ms. */
async function loop() {
  script.reset();
  const t0 = performance.now();
  const answer = await system.runLoop(loopIndex++);
  const t1 = performance.now();
  script.stamps[n] = t1;
  const problems = script.check(answer);
  if (problems.length > 0) throw new Error(`${systemName} n=${n}: ${problems.join("; ")}`);
  return t1 - t0;
}

try {
  const coldUs = ((await loop()) * 1000) / n;
  const warmupStart = performance.now();
  let warmupDone = 0;
  while (warmupDone < warmupLoops || performance.now() - warmupStart < warmupMs) {
    await loop();
    warmupDone++;
  }
  const warm = [];
  const first = [];
  const last = [];
  const finalStep = [];
  // Tenths are taken over the n-1 tool steps (model call k to model call k+1): the final step
  // also carries the loop's one-off finish (result assembly, the transcript write), which the warm
  // and cold figures include but which says nothing about growth with the conversation's length.
  const toolSteps = Math.max(1, n - 1);
  const tenth = Math.max(1, Math.floor(toolSteps / 10));
  for (let i = 0; i < measuredLoops; i++) {
    warm.push(((await loop()) * 1000) / n);
    first.push(meanStepUs(script.stamps, 0, tenth));
    last.push(meanStepUs(script.stamps, toolSteps - tenth, toolSteps));
    finalStep.push(meanStepUs(script.stamps, n - 1, n));
  }
  const result = {
    usPerStepWarm: median(warm),
    usPerStepCold: coldUs,
    firstTenthUs: median(first),
    lastTenthUs: median(last),
    finalStepUs: median(finalStep),
    peakRssMB: peakRssKiB() / 1024,
    firstTurnAt: script.firstTurnAt,
    loops: loopIndex,
    warmupSteps: warmupDone * n,
    extra: system.describe?.() ?? {},
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await system.close();
}

/**
 * This process's own peak RSS in KiB: VmHWM (its memory since exec). resourceUsage().maxRSS, the
 * fallback without /proc, carries over the parent's RSS at fork time on Linux.
 */
function peakRssKiB() {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) return Number(m[1]);
  } catch {}
  return process.resourceUsage().maxRSS;
}
