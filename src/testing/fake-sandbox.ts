// A fake of the Sandbox port for tests on hosts without bwrap or unshare: each baseline is a plain
// copy, each environment a plain copy of its baseline in a temporary folder, and commands are not
// run at all — the test answers them (`exec`). It meets `sandboxContract` (the port's behaviour)
// but contains nothing: never use it to run an untrusted plan.
import { randomBytes } from "node:crypto";
import { cp, lstat, mkdir, mkdtemp, readFile, rm, stat, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { readConfinedFile } from "../adapters/sandbox/confined-read.js";
import { snapshotTree } from "../adapters/sandbox/environment-dir.js";
import type {
  Baseline,
  Environment,
  EnvironmentChanges,
  ExecResult,
  Sandbox,
} from "../core/ports/sandbox.js";
import { DEFAULT_CHANGE_BOUNDS, isEnvironmentName } from "../core/ports/sandbox.js";
import { digestOf, digestOfBytes } from "../core/records/canonical.js";
import { fail, ok, type Result, WarrantError } from "../core/result.js";
import { normaliseRelativePath } from "../core/taskpack/relative-path.js";

/** What a faked command printed and how it exited. */
export interface FakeExecResult {
  readonly exitCode: number;
  readonly stdout?: string;
  readonly stderr?: string;
  readonly timedOut?: boolean;
}

export interface FakeSandboxOptions {
  /**
   * Answers a command (a plan step's or a verifier check's argv) run in the environment whose
   * workspace is `cwd`. Default: exit 0 with no output.
   */
  readonly exec?: (
    argv: readonly string[],
    context: { readonly cwd: string },
  ) => FakeExecResult | Promise<FakeExecResult>;
  /** Where environments are made (default: a fresh folder under the system's temp folder). */
  readonly root?: string;
}

export interface FakeSandbox extends Sandbox {
  readonly backend: "fake";
  /** Every command the fake was asked to run, in order. */
  readonly commands: readonly (readonly string[])[];
}

const encoder = new TextEncoder();
const PREFIX = "warrant-env-";
const DEFAULT_MAX_READ = 64 << 20;

/**
 * The host path of a workspace file: refused (`workbench/patch-outside-policy`) when the path is not
 * a safe relative path or any part of it is a symlink. Simpler than the real sandboxes' rule (which
 * follows symlinks that stay inside): the fake contains nothing and needs no more.
 */
async function confined(workspace: string, relPath: string): Promise<Result<string>> {
  const refuse = (message: string) =>
    fail([{ code: "workbench/patch-outside-policy", path: relPath, message }]);
  const norm = normaliseRelativePath(relPath);
  if (!norm.ok) return refuse(norm.errors[0]?.message ?? "not a safe relative path");
  let current = workspace;
  for (const part of norm.value.split("/")) {
    current = path.join(current, part);
    const st = await lstat(current).catch(() => undefined);
    if (st === undefined) break;
    if (st.isSymbolicLink()) return refuse("a symlink is on the path");
  }
  return ok(path.join(workspace, norm.value));
}

/** A regular file's bytes, or why not: absent, not a regular file (never opened), or too large. */
async function regularFile(file: string, relPath: string, maxBytes: number) {
  const st = await lstat(file).catch(() => undefined);
  if (st === undefined)
    return fail([{ code: "sandbox/not-found", path: relPath, message: `no file ${relPath}` }]);
  if (!st.isFile())
    return fail([
      { code: "environment/special-file", path: relPath, message: `${relPath} is not a file` },
    ]);
  const bytes = new Uint8Array(await readFile(file));
  return ok({ bytes: bytes.subarray(0, maxBytes), truncated: bytes.length > maxBytes });
}

/** What changed from `before` to `after` (both digest maps by relative path), within `maxEntries`. */
function changesOf(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  maxEntries: number,
): EnvironmentChanges {
  const added = [...after].filter(([p]) => !before.has(p));
  const modified = [...after].filter(([p, d]) => before.has(p) && before.get(p) !== d);
  const deleted = [...before].filter(([p]) => !after.has(p));
  const complete = added.length + modified.length + deleted.length <= maxEntries;
  const entries = (xs: [string, string][]) => xs.map(([p, digest]) => ({ path: p, digest }));
  return {
    added: entries(added),
    modified: modified.map(([p, digest]) => ({ path: p, digest, before: before.get(p) ?? "" })),
    deleted: entries(deleted),
    findings: complete
      ? []
      : [
          {
            code: "environment/too-many-changes",
            path: "",
            message: `more than ${maxEntries} changed entries`,
          },
        ],
    complete,
  };
}

function checkName(name: string): void {
  if (!isEnvironmentName(name))
    throw new WarrantError("sandbox/invalid-name", `not an environment name: ${name}`);
}

/** A fake's state: its options, the commands it was asked to run, its folder and baselines' copies. */
interface Fake {
  readonly options: FakeSandboxOptions;
  readonly commands: (readonly string[])[];
  /** The folder environments and baselines are made in, made on first use. */
  readonly rootDir: () => Promise<string>;
  /** The copy of each baseline the fake opened. */
  readonly pins: WeakMap<Baseline, string>;
}

export function fakeSandbox(options: FakeSandboxOptions = {}): FakeSandbox {
  let root: Promise<string> | undefined;
  const f: Fake = {
    options,
    commands: [],
    rootDir: () => {
      root ??=
        options.root === undefined
          ? mkdtemp(path.join(tmpdir(), "warrant-fake-"))
          : mkdir(options.root, { recursive: true }).then(() => options.root as string);
      return root;
    },
    pins: new WeakMap(),
  };
  return {
    backend: "fake",
    commands: f.commands,
    environmentMode: async () => "copy",
    openBaseline: (dir, opts) => openBaseline(f, dir, opts),
    createEnvironment: (given, opts) => createEnvironment(f, given, opts),
    async discardEnvironment(name) {
      checkName(name);
      const base = path.join(await f.rootDir(), `${PREFIX}${name}`);
      await rm(base, { recursive: true, force: true });
      return { confirmed: true };
    },
    async discardEnvironmentAt(envRoot) {
      const base = path.dirname(envRoot);
      if (path.dirname(base) !== (await f.rootDir()) || !path.basename(base).startsWith(PREFIX))
        return { confirmed: false };
      await rm(base, { recursive: true, force: true });
      return { confirmed: true };
    },
  };
}

/** A baseline: a plain copy of `dir`, removed when its last holder releases it. */
async function openBaseline(
  f: Fake,
  dir: string,
  opts: { readonly dependencies?: readonly string[] } = {},
): Promise<Baseline> {
  const copy = path.join(await f.rootDir(), `baseline-${randomBytes(6).toString("hex")}`);
  await cp(dir, copy, { recursive: true, verbatimSymlinks: true });
  const digests = await snapshotTree(copy);
  let bytes = 0;
  for (const p of digests.keys()) {
    const st = await lstat(path.join(copy, p));
    if (st.isFile()) bytes += st.size;
  }
  let refs = 1;
  const baseline: Baseline = {
    source: dir,
    dependencies: opts.dependencies ?? [],
    files: digests.size,
    bytes,
    digests: async () => digests,
    async release() {
      refs -= 1;
      if (refs === 0) await rm(copy, { recursive: true, force: true });
    },
  };
  f.pins.set(baseline, copy);
  return baseline;
}

/** An environment: a plain copy of its baseline's files in a folder of its own. */
async function createEnvironment(
  f: Fake,
  given: Parameters<Sandbox["createEnvironment"]>[0],
  opts: Parameters<Sandbox["createEnvironment"]>[1] = {},
): Promise<Environment> {
  if (opts.name !== undefined) checkName(opts.name);
  const baseline = typeof given === "string" ? await openBaseline(f, given) : given;
  const baselineDir = f.pins.get(baseline) ?? baseline.source;
  const before = await baseline.digests();
  const base =
    opts.name === undefined
      ? await mkdtemp(path.join(await f.rootDir(), PREFIX))
      : path.join(await f.rootDir(), `${PREFIX}${opts.name}`);
  await rm(base, { recursive: true, force: true });
  await mkdir(base, { recursive: true });
  const workspace = path.join(base, "workspace");
  await cp(baselineDir, workspace, { recursive: true, verbatimSymlinks: true });
  return {
    id: path.basename(base).slice(PREFIX.length),
    backend: "fake",
    mode: "copy",
    root: workspace,
    exec: (argv) => fakeExec(f, workspace, argv),
    async writeFile(p, bytes) {
      const target = await confined(workspace, p);
      if (!target.ok) return target;
      await mkdir(path.dirname(target.value), { recursive: true });
      await writeFile(target.value, bytes);
      return ok({ path: p });
    },
    readFile: (p, o) => readWholeFile(workspace, p, o?.maxBytes ?? DEFAULT_MAX_READ),
    async readPart(p, maxBytes) {
      const target = await confined(workspace, p);
      if (!target.ok) return target;
      return regularFile(target.value, p, maxBytes);
    },
    readBaseline: (p, maxBytes) => readConfinedFile(baselineDir, p, maxBytes),
    async removeFile(p) {
      const target = await confined(workspace, p);
      if (!target.ok) return target;
      const gone = await unlink(target.value).then(
        () => true,
        () => false,
      );
      return gone
        ? ok({ path: p })
        : fail([{ code: "sandbox/not-found", path: p, message: `no file ${p}` }]);
    },
    snapshot: () => snapshotTree(workspace),
    changes: async (bounds) =>
      changesOf(
        before,
        await snapshotTree(workspace),
        bounds?.maxEntries ?? DEFAULT_CHANGE_BOUNDS.maxEntries,
      ),
    connections: () => undefined,
    async destroy() {
      await rm(base, { recursive: true, force: true });
      if (typeof given === "string") await baseline.release();
      const left = await stat(base).then(
        () => true,
        () => false,
      );
      return { confirmed: !left };
    },
  };
}

/** A command, not run: recorded, and answered by the options' `exec` (default: exit 0). */
async function fakeExec(f: Fake, workspace: string, argv: readonly string[]): Promise<ExecResult> {
  const startedAt = new Date().toISOString();
  f.commands.push([...argv]);
  const r = (await f.options.exec?.(argv, { cwd: workspace })) ?? { exitCode: 0 };
  const stdout = r.stdout ?? "";
  const stderr = r.stderr ?? "";
  return {
    exitCode: r.exitCode,
    signal: null,
    timedOut: r.timedOut ?? false,
    cancelled: false,
    stdout,
    stderr,
    truncated: false,
    outputDigest: digestOf({
      stderr: digestOfBytes(encoder.encode(stderr)),
      stdout: digestOfBytes(encoder.encode(stdout)),
    }),
    startedAt,
    endedAt: new Date().toISOString(),
  };
}

/** A workspace file's bytes, whole: `sandbox/too-large` past `max`. */
async function readWholeFile(
  workspace: string,
  p: string,
  max: number,
): Promise<Result<Uint8Array>> {
  const target = await confined(workspace, p);
  if (!target.ok) return target;
  const r = await regularFile(target.value, p, max);
  if (!r.ok) return r;
  if (r.value.truncated)
    return fail([{ code: "sandbox/too-large", path: p, message: `${p} is over ${max} bytes` }]);
  return ok(r.value.bytes);
}
