// CLI start-up: every command's `--help` (found by reading `warrant --help` and each group's help),
// `warrant --version`, `warrant definition validate FILE` and `warrant loops` on an empty SQLite
// store, each spawned fresh and timed from spawn to exit, interleaved with a bare `node -e 0` in the
// same run. Reports medians and each figure over bare node; the targets are for `--version` and
// `definition validate` (≤ 60 ms over bare node).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openStore } from "../../src/adapters/store/open-store.js";
import { median, percentile, round } from "../util.js";
import type { BenchSuite } from "./index.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const cli = path.join(root, "src/cli/main.js");
const definition = path.resolve(root, "../examples/agents/implementer.json");

const TARGET_OVER_BARE_MS = 60;

interface Probe {
  readonly name: string;
  readonly args: readonly string[];
  /** Samples per probe: the targeted probes get more. */
  readonly samples: number;
}

function run(args: readonly string[]): { ms: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) {
    throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr.slice(0, 300)}`);
  }
  return { ms, stdout: r.stdout };
}

/** Command names listed under "Commands:" in a commander help text (not `help`). */
function commandsIn(help: string): string[] {
  const at = help.indexOf("\nCommands:\n");
  if (at < 0) return [];
  const names: string[] = [];
  for (const line of help.slice(at + 11).split("\n")) {
    const m = /^ {2}([a-z][a-z0-9-]*)/.exec(line);
    if (m?.[1] !== undefined && m[1] !== "help") names.push(m[1]);
    else if (line.trim() === "" || !line.startsWith(" ")) break;
  }
  return names;
}

/** `--help` of every command and subcommand the CLI lists. */
function helpProbes(): Probe[] {
  const probes: Probe[] = [];
  for (const cmd of commandsIn(run([cli, "--help"]).stdout)) {
    const help = run([cli, cmd, "--help"]).stdout;
    probes.push({ name: `${cmd} --help`, args: [cli, cmd, "--help"], samples: 5 });
    for (const sub of commandsIn(help)) {
      probes.push({ name: `${cmd} ${sub} --help`, args: [cli, cmd, sub, "--help"], samples: 5 });
    }
  }
  return probes;
}

function summary(xs: readonly number[], bare: number) {
  const p50 = median(xs);
  return { p50Ms: round(p50), p95Ms: round(percentile(xs, 95)), overBareMs: round(p50 - bare) };
}

async function runSuite(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-startup-"));
  try {
    const store = `sqlite:${path.join(dir, "ledger.db")}`;
    const targeted: Probe[] = [
      { name: "--version", args: [cli, "--version"], samples: 21 },
      {
        name: "definition validate FILE",
        args: [cli, "definition", "validate", definition],
        samples: 21,
      },
      { name: "loops (empty SQLite store)", args: [cli, "loops", "--store", store], samples: 11 },
    ];
    // The empty store is made (and migrated) once, before any timing: read-only commands such as
    // `loops` never create one (a missing store is store/not-found).
    await (await openStore(store)).close();
    const probes = [...targeted, ...helpProbes()];
    for (const p of probes) run(p.args);
    run(["-e", "0"]);
    const bare: number[] = [];
    const times = new Map<string, number[]>(probes.map((p) => [p.name, []]));
    const rounds = Math.max(...probes.map((p) => p.samples));
    // Interleaved, so machine drift hits bare node and every command alike.
    for (let i = 0; i < rounds; i++) {
      bare.push(run(["-e", "0"]).ms);
      for (const p of probes) if (i < p.samples) times.get(p.name)?.push(run(p.args).ms);
    }
    const b = median(bare);
    const byName = (p: Probe) => summary(times.get(p.name) ?? [], b);
    const target = Object.fromEntries(
      targeted.slice(0, 2).map((p) => {
        const over = byName(p).overBareMs;
        return [p.name, { overBareMs: over, met: over <= TARGET_OVER_BARE_MS }];
      }),
    );
    return {
      bareNodeMs: { p50Ms: round(b), p95Ms: round(percentile(bare, 95)), samples: bare.length },
      ...Object.fromEntries(targeted.map((p) => [p.name, { ...byName(p), samples: p.samples }])),
      help: Object.fromEntries(probes.slice(targeted.length).map((p) => [p.name, byName(p)])),
      targetOverBareMs: TARGET_OVER_BARE_MS,
      target,
      loadAverage: os.loadavg().map((x) => round(x)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const cliSuite: BenchSuite = { name: "cli", run: runSuite };
