// A fake of the runtime's SandboxPort for tests on hosts without bwrap or unshare: each run gets a
// plain copy of the baseline in a temporary folder, and commands are not run at all — the test
// answers them (`exec`). Nothing is contained: never use it to run an untrusted plan.
import { cp, lstat, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { readConfinedFile } from "../adapters/sandbox/confined-read.js";
import { snapshotTree } from "../adapters/sandbox/environment-dir.js";
import type { EnvironmentChanges } from "../core/ports/sandbox.js";
import { digestOf, digestOfBytes } from "../core/records/canonical.js";
import { fail, ok, type Result } from "../core/result.js";
import { normaliseRelativePath } from "../core/taskpack/relative-path.js";
import type { RunEnvironment, SandboxPort } from "../runtime/context.js";

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

export interface FakeSandbox extends SandboxPort {
  readonly backend: "fake";
  /** Every command the fake was asked to run, in order. */
  readonly commands: readonly (readonly string[])[];
}

const encoder = new TextEncoder();

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

/** What changed from `before` to `after` (both digest maps by relative path). */
function changesOf(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): EnvironmentChanges {
  const added = [...after].filter(([p]) => !before.has(p));
  const modified = [...after].filter(([p, d]) => before.has(p) && before.get(p) !== d);
  const deleted = [...before].filter(([p]) => !after.has(p));
  const entries = (xs: [string, string][]) => xs.map(([p, digest]) => ({ path: p, digest }));
  return {
    added: entries(added),
    modified: entries(modified),
    deleted: entries(deleted),
    findings: [],
    complete: true,
  };
}
const PREFIX = "warrant-env-";

export function fakeSandbox(options: FakeSandboxOptions = {}): FakeSandbox {
  const commands: (readonly string[])[] = [];
  let root: Promise<string> | undefined;
  const rootDir = () => {
    root ??=
      options.root === undefined
        ? mkdtemp(path.join(tmpdir(), "warrant-fake-"))
        : Promise.resolve(options.root);
    return root;
  };
  const inRoot = async (dir: string) => path.dirname(path.dirname(dir)) === (await rootDir());
  return {
    backend: "fake",
    commands,
    async create(baselineDir, ref, name) {
      const base = path.join(await rootDir(), `${PREFIX}${name}`);
      await rm(base, { recursive: true, force: true });
      const workspace = path.join(base, "workspace");
      await mkdir(base, { recursive: true });
      await cp(baselineDir, workspace, { recursive: true });
      const env: RunEnvironment = {
        ref,
        dir: workspace,
        async exec(argv) {
          commands.push([...argv]);
          const r = (await options.exec?.(argv, { cwd: workspace })) ?? { exitCode: 0 };
          const stdout = r.stdout ?? "";
          const stderr = r.stderr ?? "";
          return {
            exitCode: r.exitCode,
            stdout,
            stderr,
            truncated: false,
            timedOut: r.timedOut ?? false,
            outputDigest: digestOf({
              stderr: digestOfBytes(encoder.encode(stderr)),
              stdout: digestOfBytes(encoder.encode(stdout)),
            }),
          };
        },
        async readFile(p) {
          const target = await confined(workspace, p);
          if (!target.ok) return undefined;
          return readFile(target.value).then(
            (b) => new Uint8Array(b),
            () => undefined,
          );
        },
        async writeFile(p, bytes) {
          const target = await confined(workspace, p);
          if (!target.ok) return target.errors[0];
          await mkdir(path.dirname(target.value), { recursive: true });
          await writeFile(target.value, bytes);
          return undefined;
        },
        async read(p, maxBytes) {
          const target = await confined(workspace, p);
          if (!target.ok) return target;
          const bytes = await readFile(target.value).catch(() => undefined);
          if (bytes === undefined)
            return fail([{ code: "sandbox/not-found", path: p, message: `no file ${p}` }]);
          return ok({
            bytes: new Uint8Array(bytes.subarray(0, maxBytes)),
            truncated: bytes.length > maxBytes,
          });
        },
        readBaseline: (p, maxBytes) => readConfinedFile(baselineDir, p, maxBytes),
        snapshot: () => snapshotTree(workspace),
        changes: async () =>
          changesOf(await snapshotTree(baselineDir), await snapshotTree(workspace)),
        async destroy() {
          await rm(base, { recursive: true, force: true });
          return true;
        },
      };
      return env;
    },
    async destroyDir(dir) {
      if (!(await inRoot(dir))) return false;
      await rm(path.dirname(dir), { recursive: true, force: true });
      return true;
    },
    async discard(name) {
      await rm(path.join(await rootDir(), `${PREFIX}${name}`), { recursive: true, force: true });
      return true;
    },
    snapshotDir: (dir) => snapshotTree(dir),
  };
}
