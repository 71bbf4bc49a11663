// `npm run bench:peers [-- --quick] [-- --save] [-- SYSTEM…]`: the same agent loop in Warrant and in the agent
// frameworks people use, each measurement repeated in fresh processes. One JSON array on stdout,
// a table on stderr; --save also writes bench/peers/results.json (read by report.mjs).
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const argv = process.argv.slice(2);
const args = new Set(argv.filter((a) => a.startsWith("--")));
/** Systems named on the command line (all when none is). */
const only = argv.filter((a) => !a.startsWith("--"));
const quick = args.has("--quick");
const save = args.has("--save");

const NS = quick ? [100] : [10, 100, 1000];
const REPS = quick ? 3 : 5;
const WARMUP_STEPS = 1000;
/** And at least this long: a system whose steps are fast gets as long to be optimised as the rest. */
const WARMUP_MS = 500;
const MEASURED_STEPS = quick ? 1000 : 3000;

/** What runs, in order; `pkg` is the package whose version is reported. */
const ALL_CONFIGS = [
  { system: "warrant", store: "memory" },
  { system: "warrant", store: "sqlite" },
  { system: "openai-agents", pkg: "@openai/agents" },
  { system: "ai", pkg: "ai" },
  { system: "langgraph", pkg: "@langchain/langgraph" },
];

const CONFIGS = ALL_CONFIGS.filter((c) => only.length === 0 || only.includes(c.system));

/** Every exporter and tracer the frameworks know of, off. */
const CHILD_ENV = {
  ...process.env,
  LANGCHAIN_TRACING_V2: "false",
  LANGSMITH_TRACING: "false",
  LANGCHAIN_CALLBACKS_BACKGROUND: "false",
  OPENAI_AGENTS_DISABLE_TRACING: "1",
  OTEL_SDK_DISABLED: "true",
  NODE_ENV: "production",
};

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function round(x, digits = 1) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function readJson(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}

function versionOf(config) {
  if (config.system === "warrant") return readJson(join(root, "package.json")).version;
  return readJson(join(here, "node_modules", config.pkg, "package.json")).version;
}

/** Runs one child process; resolves to its JSON line plus start-up (spawn to first turn) in ms. */
function runChild(argv) {
  return new Promise((resolve, reject) => {
    const spawnedAt = performance.timeOrigin + performance.now();
    const child = spawn(process.execPath, argv, { cwd: here, env: CHILD_ENV });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) {
        reject(
          new Error(
            `${argv.join(" ")} exited ${code}: ${stderr.trim().split("\n").slice(-5).join("\n")}`,
          ),
        );
        return;
      }
      const line = stdout.trim().split("\n").at(-1) ?? "";
      try {
        const out = JSON.parse(line);
        resolve({ ...out, startupMs: out.firstTurnAt - spawnedAt });
      } catch {
        reject(new Error(`${argv.join(" ")} printed no result: ${stdout.slice(0, 200)}`));
      }
    });
  });
}

function preflight() {
  const problems = [];
  if (!existsSync(join(here, "node_modules")))
    problems.push("bench/peers/node_modules is missing: run `npm ci --prefix bench/peers` first.");
  if (CONFIGS.length === 0)
    problems.push(
      `no such system; known: ${[...new Set(ALL_CONFIGS.map((c) => c.system))].join(", ")}`,
    );
  const warrant = CONFIGS.some((c) => c.system === "warrant");
  if (warrant && !existsSync(join(root, "dist", "src", "runtime", "passage.js")))
    problems.push("dist/ has no runtime/passage.js: run `npm run build` first.");
  return problems;
}

function table(rows, bareMs) {
  const head = [
    "system",
    "version",
    "store",
    "n",
    "µs/step warm",
    "µs/step cold",
    "first 10th",
    "last 10th",
    "final step",
    "peak RSS MB",
    "start-up ms",
  ];
  const body = rows.map((r) =>
    r.error !== undefined
      ? [r.system, r.version, r.store ?? "", String(r.n), "FAILED", "", "", "", "", "", ""]
      : [
          r.system,
          r.version,
          r.store ?? "",
          String(r.n),
          String(r.usPerStepWarm),
          String(r.usPerStepCold),
          String(r.firstTenthUs),
          String(r.lastTenthUs),
          String(r.finalStepUs),
          String(r.peakRssMB),
          `${r.startupMs} (+${r.startupOverNodeMs})`,
        ],
  );
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => cells.map((c, i) => c.padStart(widths[i])).join("  ");
  return [
    line(head),
    ...body.map(line),
    `µs unless stated; start-up is spawn to first model turn, +x over a bare node probe (median ${bareMs} ms)`,
  ].join("\n");
}

async function main() {
  const problems = preflight();
  if (problems.length > 0) {
    for (const p of problems) process.stderr.write(`bench:peers: ${p}\n`);
    process.exitCode = 2;
    return;
  }
  const t0 = Date.now();
  const loadAtStart = os.loadavg()[0];
  // Each measurement is paired with a bare `node` probe spawned just before it, so start-up over
  // bare node is taken under the same load (the machine may be shared).
  const bare = [];

  const samples = new Map();
  for (let rep = 0; rep < REPS; rep++) {
    for (const n of NS) {
      for (const config of CONFIGS) {
        const key = `${config.system}/${config.store ?? ""}/${n}`;
        const argv = [
          "child.mjs",
          config.system,
          String(n),
          String(WARMUP_STEPS),
          String(MEASURED_STEPS),
          config.store ?? "",
          String(WARMUP_MS),
        ];
        process.stderr.write(`bench:peers: ${key} run ${rep + 1}/${REPS}\n`);
        if (!samples.has(key)) samples.set(key, { config, n, runs: [], errors: [] });
        const sample = samples.get(key);
        // A failed check (or crash) voids the measurement: the row reports the error, not a figure.
        if (sample.errors.length > 0) continue;
        try {
          const probe = (await runChild(["bare.mjs"])).startupMs;
          bare.push(probe);
          const out = await runChild(argv);
          sample.runs.push({ ...out, startupOverNodeMs: out.startupMs - probe });
        } catch (e) {
          sample.errors.push(e.message);
          process.stderr.write(`bench:peers: ${key} FAILED: ${e.message}\n`);
        }
      }
    }
  }

  const bareMs = round(median(bare));
  const rows = [];
  for (const { config, n, runs, errors } of samples.values()) {
    if (errors.length > 0) {
      process.exitCode = 1;
      rows.push({
        system: config.system,
        version: versionOf(config),
        ...(config.store ? { store: config.store } : {}),
        n,
        error: errors[0],
      });
      continue;
    }
    const m = (field) => median(runs.map((r) => r[field]));
    const startupMs = round(m("startupMs"));
    rows.push({
      system: config.system,
      version: versionOf(config),
      ...(config.store ? { store: config.store } : {}),
      n,
      usPerStepWarm: round(m("usPerStepWarm")),
      usPerStepCold: round(m("usPerStepCold")),
      firstTenthUs: round(m("firstTenthUs")),
      lastTenthUs: round(m("lastTenthUs")),
      finalStepUs: round(m("finalStepUs")),
      peakRssMB: round(m("peakRssMB")),
      startupMs,
      startupOverNodeMs: round(m("startupOverNodeMs")),
      reps: runs.length,
    });
  }
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  process.stderr.write(`${table(rows, bareMs)}\n`);
  process.stderr.write(`bench:peers: done in ${round((Date.now() - t0) / 1000)} s\n`);
  if (save) {
    const cpus = os.cpus();
    const report = {
      at: new Date().toISOString(),
      mode: quick ? "quick" : "full",
      machine: {
        cpus: cpus.length,
        cpuModel: cpus[0]?.model,
        memGiB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        platform: `${os.platform()} ${os.release()}`,
      },
      bareNodeStartupMs: bareMs,
      // 1-minute load average when the run started and ended: above the core count, figures are
      // inflated by other work on the machine.
      loadAverage: { start: round(loadAtStart, 2), end: round(os.loadavg()[0], 2) },
      settings: {
        reps: REPS,
        warmupSteps: WARMUP_STEPS,
        warmupMs: WARMUP_MS,
        measuredSteps: MEASURED_STEPS,
      },
      rows,
    };
    writeFileSync(join(here, "results.json"), `${JSON.stringify(report, null, 2)}\n`);
    process.stderr.write("bench:peers: wrote bench/peers/results.json\n");
  }
}

await main();
