// CLI start-up: `warrant --version` in a fresh process against a bare `node -e 0` in the same run.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median, percentile, round } from "../util.js";
import type { BenchSuite } from "./index.js";

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src/cli/main.js");

function wallMs(args: readonly string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}`);
  return performance.now() - t0;
}

async function run(): Promise<Record<string, unknown>> {
  const samples = 15;
  const bare: number[] = [];
  const warrant: number[] = [];
  wallMs(["-e", "0"]);
  wallMs([cli, "--version"]);
  // Interleaved, so machine drift hits both alike.
  for (let i = 0; i < samples; i++) {
    bare.push(wallMs(["-e", "0"]));
    warrant.push(wallMs([cli, "--version"]));
  }
  const b = median(bare);
  const w = median(warrant);
  return {
    samples,
    bareNodeMs: { p50: round(b), p95: round(percentile(bare, 95)) },
    warrantVersionMs: { p50: round(w), p95: round(percentile(warrant, 95)) },
    overBareMs: round(w - b),
    ratio: round(w / b),
  };
}

export const cliSuite: BenchSuite = { name: "cli", run };
