// A fake of the runtime's SandboxPort for tests on hosts without bwrap or unshare: each run gets a
// plain copy of the baseline in a temporary folder, and commands are not run at all — the test
// answers them (`exec`). Nothing is contained: never use it to run an untrusted plan.
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { confinedPath, snapshotTree } from "../adapters/sandbox/environment-dir.js";
import { digestOf, digestOfBytes } from "../core/records/canonical.js";
import type { RunEnvironment, SandboxPort } from "../runtime/ports.js";

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
          const target = await confinedPath(workspace, p);
          if (!target.ok) return undefined;
          return readFile(target.value).then(
            (b) => new Uint8Array(b),
            () => undefined,
          );
        },
        async writeFile(p, bytes) {
          const target = await confinedPath(workspace, p);
          if (!target.ok) return target.errors[0];
          await mkdir(path.dirname(target.value), { recursive: true });
          await writeFile(target.value, bytes);
          return undefined;
        },
        snapshot: () => snapshotTree(workspace),
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
