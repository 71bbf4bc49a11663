// Sandbox start latency: a contained `true` on each backend against a bare spawn of `true` in the
// same run, plus the cost of making and destroying an environment.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { median, percentile, round } from "../util.js";
import type { BenchSuite } from "./index.js";

const SAMPLES = 40;
const WARMUP = 5;

function bareTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("true", [], { stdio: "ignore" });
    child.on("error", reject);
    child.on("close", () => resolve());
  });
}

async function sample(
  fn: () => Promise<unknown>,
  n = SAMPLES,
): Promise<{ p50Ms: number; p95Ms: number }> {
  for (let i = 0; i < WARMUP; i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return { p50Ms: round(median(ms)), p95Ms: round(percentile(ms, 95)) };
}

/**
 * The suite in a fresh process of its own (`node bench/run.js sandbox`): a spawn's cost grows with
 * the spawning process's memory (fork copies its page tables), so measured in the bench's process
 * after the suites before it, the bare spawn the figures are divided by would carry their heap.
 */
function inFreshProcess(): Record<string, unknown> {
  const runJs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../run.js");
  const child = spawnSync(process.execPath, [runJs, "sandbox"], {
    encoding: "utf8",
    env: { ...process.env, [IN_CHILD]: "1" },
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 16 * 2 ** 20,
  });
  if (child.status !== 0) throw new Error(`the sandbox bench's process exited ${child.status}`);
  const report = JSON.parse(child.stdout) as { results: { sandbox: Record<string, unknown> } };
  return { ...report.results.sandbox, measuredIn: "a fresh process" };
}

const IN_CHILD = "WARRANT_BENCH_SANDBOX_CHILD";

export const sandboxSuite: BenchSuite = {
  name: "sandbox",
  async run() {
    if (process.env[IN_CHILD] !== "1") return inFreshProcess();
    const baseline = mkdtempSync(path.join(tmpdir(), "warrant-bench-"));
    mkdirSync(path.join(baseline, "src"));
    for (let i = 0; i < 20; i++)
      writeFileSync(path.join(baseline, `src/f${i}.js`), "x\n".repeat(100));
    const out: Record<string, unknown> = { samples: SAMPLES };
    try {
      const bare = await sample(bareTrue);
      out.bareSpawn = bare;
      for (const backend of ["bwrap", "unshare"] as const) {
        const found = await detectSandbox({ only: backend });
        if (!found.ok) {
          out[backend] = { unavailable: found.errors[0]?.message };
          continue;
        }
        const sandbox = found.value;
        const env = await sandbox.createEnvironment(baseline);
        try {
          const exec = await sample(async () => {
            const r = await env.exec(["true"], { timeoutMs: 10_000, maxOutputBytes: 1024 });
            if (r.exitCode !== 0)
              throw new Error(`${backend}: true exited ${r.exitCode}: ${r.stderr}`);
          });
          // The same with memory held by RLIMIT_DATA alone: what a cgroup per command costs.
          const plain = await detectSandbox({ only: backend, cgroups: false });
          let execTrueWithoutCgroup: { p50Ms: number; p95Ms: number } | undefined;
          if (plain.ok) {
            const e = await plain.value.createEnvironment(baseline);
            try {
              execTrueWithoutCgroup = await sample(async () => {
                await e.exec(["true"], { timeoutMs: 10_000, maxOutputBytes: 1024 });
              });
            } finally {
              await e.destroy();
            }
          }
          const lifecycle = await sample(async () => {
            const e = await sandbox.createEnvironment(baseline);
            await e.destroy();
          }, 20);
          out[backend] = {
            execTrue: exec,
            ratioP50: round(exec.p50Ms / bare.p50Ms),
            ratioP95: round(exec.p95Ms / bare.p95Ms),
            execTrueWithoutCgroup,
            createDestroy21Files: lifecycle,
          };
        } finally {
          await env.destroy();
        }
      }
    } finally {
      rmSync(baseline, { recursive: true, force: true });
    }
    return out;
  },
};
