// Environments against workspace size: for 200, 2 000 and 20 000 files of 10 kB, on each backend
// and in each mode (overlay, the copy fallback), the median cost of making an environment over a
// pinned baseline, running `true` in it, reading its changes, and destroying it — untouched, and
// with 5 files changed — beside the full-copy path environments used before, measured in the same
// run (`legacy`). The baseline's pin (once per loop) is reported on its own (`pinMs`).
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { probeSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { hostRunAs } from "../../src/adapters/sandbox/managed-environment.js";
import { createUnshareSandbox } from "../../src/adapters/sandbox/unshare-sandbox.js";
import type { Baseline, EnvironmentMode, Sandbox } from "../../src/core/ports/sandbox.js";
import { median, round } from "../util.js";
import type { BenchSuite } from "./index.js";
import { legacyCreate, legacyDestroy, legacySnapshot } from "./workspace-legacy.js";

const SIZES = [200, 2000, 20_000] as const;
const FILE_BYTES = 10 * 1024;
const PER_DIR = 100;
const CHANGED = 5;
const LIMITS = { timeoutMs: 60_000, maxOutputBytes: 4096 };

/** Cycles per size: many where they are cheap, few where each is a full copy. */
function repeatsFor(layers: EnvironmentMode | "legacy"): number {
  return layers === "overlay" ? 21 : 3;
}

interface Row {
  files: number;
  bytes: number;
  createMs: number;
  execMs: number | null;
  snapshotMs: number;
  destroyMs: number;
  /** create + snapshot + destroy: what a run pays beside its commands. */
  cycleMs: number;
  repeats: number;
}

function workspace(root: string, files: number): string {
  const dir = path.join(root, `ws-${files}`);
  const content = Buffer.alloc(FILE_BYTES, 0x61);
  for (let i = 0; i < files; i++) {
    const sub = path.join(dir, `d${Math.floor(i / PER_DIR)}`);
    if (i % PER_DIR === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `f${i}.txt`), content);
  }
  return dir;
}

const changeScript = Array.from({ length: CHANGED }, (_, i) => `echo x >> d0/f${i}.txt`).join(
  " && ",
);

function row(files: number, samples: Record<string, number[]>, repeats: number): Row {
  const m = (k: string) => round(median(samples[k] ?? [0]));
  const createMs = m("create");
  const snapshotMs = m("snapshot");
  const destroyMs = m("destroy");
  return {
    files,
    bytes: files * FILE_BYTES,
    createMs,
    execMs: samples.exec === undefined ? null : m("exec"),
    snapshotMs,
    destroyMs,
    cycleMs: round(createMs + snapshotMs + destroyMs),
    repeats,
  };
}

async function time<T>(into: number[], f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const v = await f();
  into.push(performance.now() - t0);
  return v;
}

type Samples = Record<"create" | "exec" | "snapshot" | "destroy", number[]>;

const emptySamples = (): Samples => ({ create: [], exec: [], snapshot: [], destroy: [] });

/** One environment's life: untouched (`change` false) or with 5 files changed. */
async function cycle(
  sandbox: Sandbox,
  baseline: Baseline,
  change: boolean,
  into: Samples | undefined,
): Promise<void> {
  const s = into ?? emptySamples();
  const env = await time(s.create, () => sandbox.createEnvironment(baseline));
  const r = await time(s.exec, () =>
    env.exec(change ? ["sh", "-c", changeScript] : ["true"], LIMITS),
  );
  if (r.exitCode !== 0) throw new Error(`exec failed: ${r.stderr}`);
  const c = await time(s.snapshot, () => env.changes());
  const seen = c.added.length + c.modified.length + c.deleted.length;
  if (seen !== (change ? CHANGED : 0)) throw new Error(`expected ${CHANGED} changes, saw ${seen}`);
  const d = await time(s.destroy, () => env.destroy());
  if (!d.confirmed) throw new Error("destroy not confirmed");
}

/**
 * Every size's cycles, interleaved (one of each size per round, after a round of warm-up), so
 * that drift in the machine's load falls on all sizes alike.
 */
async function rounds(
  sandbox: Sandbox,
  baselines: readonly Baseline[],
  repeats: number,
): Promise<{ untouched: Row[]; changed: Row[] }> {
  const untouched = baselines.map(emptySamples);
  const changed = baselines.map(emptySamples);
  for (let round = 0; round <= repeats; round++) {
    for (const [i, baseline] of baselines.entries()) {
      await cycle(sandbox, baseline, false, round === 0 ? undefined : untouched[i]);
      await cycle(sandbox, baseline, true, round === 0 ? undefined : changed[i]);
    }
  }
  return {
    untouched: untouched.map((s, i) => row(SIZES[i] as number, s, repeats)),
    changed: changed.map((s, i) => row(SIZES[i] as number, s, repeats)),
  };
}

async function legacyCycles(source: string, tempRoot: string, files: number): Promise<Row> {
  const repeats = files >= 20_000 ? 2 : repeatsFor("legacy");
  const runAs = hostRunAs({});
  const s: Record<string, number[]> = { create: [], snapshot: [], destroy: [] };
  for (let i = 0; i < repeats; i++) {
    const base = await time(s.create as number[], () => legacyCreate(source, tempRoot, runAs));
    // A verification took the baseline's snapshot and the environment's, every file hashed.
    await time(s.snapshot as number[], async () => {
      await legacySnapshot(source);
      await legacySnapshot(path.join(base, "workspace"));
    });
    await time(s.destroy as number[], () => legacyDestroy(base));
  }
  return row(files, s, repeats);
}

function make(backend: "bwrap" | "unshare", layers: EnvironmentMode, tempRoot: string): Sandbox {
  const options = { layers, tempRoot };
  return backend === "bwrap" ? createBwrapSandbox(options) : createUnshareSandbox(options);
}

export const workspaceSuite: BenchSuite = {
  name: "workspace",
  async run() {
    const root = mkdtempSync(path.join(tmpdir(), "warrant-bench-ws-"));
    const tempRoot = path.join(root, "envs");
    mkdirSync(tempRoot);
    // Commands may run as another uid: they must reach the environments' folder.
    for (const d of [root, tempRoot]) chmodSync(d, 0o711);
    const out: Record<string, unknown> = {
      fileBytes: FILE_BYTES,
      changedFiles: CHANGED,
      target: "create + snapshot + destroy at 20 000 files <= 150 ms and <= 3x the 200-file figure",
    };
    try {
      const sources = new Map<number, string>();
      for (const files of SIZES) {
        process.stderr.write(`bench: workspace: making ${files} files\n`);
        sources.set(files, workspace(root, files));
      }
      const legacy: Row[] = [];
      for (const files of SIZES) {
        process.stderr.write(`bench: workspace: legacy full copy, ${files} files\n`);
        legacy.push(await legacyCycles(sources.get(files) as string, tempRoot, files));
      }
      out.legacy = legacy;
      for (const backend of ["bwrap", "unshare"] as const) {
        const byMode: Record<string, unknown> = {};
        for (const layers of ["overlay", "copy"] as const) {
          const sandbox = make(backend, layers, tempRoot);
          const why = await probeSandbox(sandbox);
          if (why !== undefined) {
            byMode[layers] = { unavailable: why };
            continue;
          }
          const baselines: Baseline[] = [];
          const pinMs: number[] = [];
          let measured: { untouched: Row[]; changed: Row[] };
          try {
            for (const files of SIZES) {
              const t0 = performance.now();
              baselines.push(await sandbox.openBaseline(sources.get(files) as string));
              pinMs.push(round(performance.now() - t0));
            }
            process.stderr.write(`bench: workspace: ${backend} ${layers}\n`);
            measured = await rounds(sandbox, baselines, repeatsFor(layers));
          } finally {
            for (const b of baselines) await b.release();
          }
          const { untouched, changed } = measured;
          const first = untouched[0] as Row;
          const last = untouched[untouched.length - 1] as Row;
          const legacyLast = legacy[legacy.length - 1] as Row;
          byMode[layers] = {
            untouched,
            changed5: changed,
            pinMs: Object.fromEntries(SIZES.map((n, i) => [n, pinMs[i]])),
            flatness: round(last.cycleMs / first.cycleMs),
            legacyOverThis20k: round(legacyLast.cycleMs / last.cycleMs),
            meetsTarget: last.cycleMs <= 150 && last.cycleMs <= 3 * first.cycleMs,
          };
        }
        out[backend] = byMode;
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    return out;
  },
};
