// The peers of `bench:peers` in the same run as the other suites: its quick mode (N = 100, three
// fresh processes per system, interleaved) run as a child, and Warrant's warm µs per step against
// the best peer's. Skipped, with the reason, where the peers are not installed (they are
// dependencies of the benchmark only: `npm ci --prefix bench/peers`).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { round } from "../util.js";
import type { BenchSuite } from "./index.js";

/** One row of `bench:peers` (bench/README.md lists its fields). */
interface PeerRow {
  readonly system: string;
  readonly version?: string;
  readonly store?: string;
  readonly n: number;
  readonly usPerStepWarm?: number;
  readonly error?: string;
}

/** The repository root, found from this file in `bench/suites/` or `dist/bench/suites/`. */
function repositoryRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "bench", "peers", "run.mjs"))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error("the bench finds no bench/peers/run.mjs");
    dir = up;
  }
  return dir;
}

function runQuick(root: string): Promise<PeerRow[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, "bench/peers/run.mjs"), "--quick"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      err += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        resolve(JSON.parse(out) as PeerRow[]);
      } catch {
        reject(
          new Error(`bench:peers exited ${code}: ${err.trim().split("\n").slice(-3).join(" ")}`),
        );
      }
    });
  });
}

/** Warrant (memory store) against the fastest peer at N = 100, from the rows of one run. */
export function againstPeers(rows: readonly PeerRow[]): Record<string, unknown> {
  const warm = (r: PeerRow | undefined) =>
    r !== undefined && r.error === undefined ? r.usPerStepWarm : undefined;
  const warrant = warm(rows.find((r) => r.system === "warrant" && r.store === "memory"));
  const peers = rows.filter((r) => r.system !== "warrant" && warm(r) !== undefined);
  const best = peers.reduce<PeerRow | undefined>(
    (b, r) => (b === undefined || (warm(r) as number) < (warm(b) as number) ? r : b),
    undefined,
  );
  const bestUs = warm(best);
  return {
    n: 100,
    warrantUsPerStepWarm: warrant,
    bestPeer: best === undefined ? undefined : { system: best.system, version: best.version },
    bestPeerUsPerStepWarm: bestUs,
    /** How many times Warrant's warm step fits in the best peer's (target: at least 30). */
    bestPeerOverWarrant:
      warrant === undefined || bestUs === undefined ? undefined : round(bestUs / warrant, 1),
    targetBestPeerOverWarrant: 30,
    rows,
  };
}

export const peersSuite: BenchSuite = {
  name: "peers",
  async run() {
    const root = repositoryRoot();
    if (!existsSync(path.join(root, "bench/peers/node_modules")))
      return { skipped: "the peers are not installed: npm ci --prefix bench/peers" };
    return againstPeers(await runQuick(root));
  },
};
