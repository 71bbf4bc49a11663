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

export function fakeSandbox(options: FakeSandboxOptions = {}): FakeSandbox {
  const commands: (readonly string[])[] = [];
  let root: Promise<string> | undefined;
  const rootDir = () => {
    root ??=
      options.root === undefined
        ? mkdtemp(path.join(tmpdir(), "warrant-fake-"))
        : mkdir(options.root, { recursive: true }).then(() => options.root as string);
    return root;
  };
  const pins = new WeakMap<Baseline, string>();

  const openBaseline = async (
    dir: string,
    opts: { readonly dependencies?: readonly string[] } = {},
  ): Promise<Baseline> => {
    const copy = path.join(await rootDir(), `baseline-${randomBytes(6).toString("hex")}`);
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
    pins.set(baseline, copy);
    return baseline;
  };

  return {
    backend: "fake",
    commands,
    environmentMode: async () => "copy",
    openBaseline,
    async createEnvironment(given, opts = {}) {
      if (opts.name !== undefined) checkName(opts.name);
      const baseline = typeof given === "string" ? await openBaseline(given) : given;
      const baselineDir = pins.get(baseline) ?? baseline.source;
      const before = await baseline.digests();
      const base =
        opts.name === undefined
          ? await mkdtemp(path.join(await rootDir(), PREFIX))
          : path.join(await rootDir(), `${PREFIX}${opts.name}`);
      await rm(base, { recursive: true, force: true });
      await mkdir(base, { recursive: true });
      const workspace = path.join(base, "workspace");
      await cp(baselineDir, workspace, { recursive: true, verbatimSymlinks: true });
      const env: Environment = {
        id: path.basename(base).slice(PREFIX.length),
        backend: "fake",
        mode: "copy",
        root: workspace,
        async exec(argv): Promise<ExecResult> {
          const startedAt = new Date().toISOString();
          commands.push([...argv]);
          const r = (await options.exec?.(argv, { cwd: workspace })) ?? { exitCode: 0 };
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
        },
        async writeFile(p, bytes) {
          const target = await confined(workspace, p);
          if (!target.ok) return target;
          await mkdir(path.dirname(target.value), { recursive: true });
          await writeFile(target.value, bytes);
          return ok({ path: p });
        },
        async readFile(p, o = {}) {
          const target = await confined(workspace, p);
          if (!target.ok) return target;
          const max = o.maxBytes ?? DEFAULT_MAX_READ;
          const r = await regularFile(target.value, p, max);
          if (!r.ok) return r;
          if (r.value.truncated)
            return fail([
              { code: "sandbox/too-large", path: p, message: `${p} is over ${max} bytes` },
            ]);
          return ok(r.value.bytes);
        },
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
      return env;
    },
    async discardEnvironment(name) {
      checkName(name);
      const base = path.join(await rootDir(), `${PREFIX}${name}`);
      await rm(base, { recursive: true, force: true });
      return { confirmed: true };
    },
    async discardEnvironmentAt(envRoot) {
      const base = path.dirname(envRoot);
      if (path.dirname(base) !== (await rootDir()) || !path.basename(base).startsWith(PREFIX))
        return { confirmed: false };
      await rm(base, { recursive: true, force: true });
      return { confirmed: true };
    },
  };
}
