// The Environment every backend hands out: its directory, confined file access, and the
// bookkeeping that lets destroy() kill whatever still runs before removing the directory.

import { tmpdir } from "node:os";
import { WarrantError } from "../../core/result.js";
import type {
  Environment,
  ExecOptions,
  ExecResult,
  SandboxBackend,
} from "../../core/sandbox/sandbox-port.js";
import {
  createEnvironmentDir,
  discardNamedEnvironmentDir,
  type EnvironmentDir,
  type RunAs,
  readConfined,
  removeConfined,
  removeEnvironmentDir,
  snapshotTree,
  writeConfined,
} from "./environment-dir.js";

export interface BackendOptions {
  readonly bwrapPath?: string;
  readonly unsharePath?: string;
  readonly setprivPath?: string;
  /** Host paths exposed read-only besides the system directories. */
  readonly readOnlyPaths?: readonly string[];
  /**
   * Who contained commands run as. Default: when the host runs as root, uid/gid 65534 (nobody) —
   * a process-count limit does not bind root, and root's capabilities must not reach the host's
   * files; otherwise the host's own user. `null` keeps the host's user even as root.
   */
  readonly runAs?: RunAs | null;
  /** Where environment directories are made (default: the OS temp directory). */
  readonly tempRoot?: string;
}

const NOBODY: RunAs = { uid: 65534, gid: 65534 };

export function hostRunAs(options: BackendOptions): RunAs | undefined {
  if (options.runAs === null) return undefined;
  if (options.runAs !== undefined) return options.runAs;
  return process.getuid?.() === 0 ? NOBODY : undefined;
}

type Exec = (argv: readonly string[], opts: ExecOptions) => Promise<ExecResult>;

export async function managedEnvironment(
  backend: SandboxBackend,
  baselineDir: string,
  runAs: RunAs | undefined,
  options: BackendOptions,
  name: string | undefined,
  makeExec: (dir: EnvironmentDir) => Exec | Promise<Exec>,
): Promise<Environment> {
  const dir = await createEnvironmentDir(baselineDir, runAs, options.tempRoot, name);
  let run: Exec;
  try {
    run = await makeExec(dir);
  } catch (e) {
    await removeEnvironmentDir(dir);
    throw e;
  }
  const running = new Set<{ controller: AbortController; done: Promise<unknown> }>();
  let destroyed = false;
  return {
    id: dir.id,
    backend,
    root: dir.workspace,
    async exec(argv, opts) {
      if (destroyed)
        throw new WarrantError("sandbox/destroyed", `environment ${dir.id} is destroyed`);
      if (argv.length === 0) throw new WarrantError("sandbox/empty-argv", "exec needs a command");
      const controller = new AbortController();
      const outer = opts.signal;
      const forward = () => controller.abort();
      if (outer?.aborted === true) controller.abort();
      else outer?.addEventListener("abort", forward, { once: true });
      const done = run(argv, { ...opts, signal: controller.signal });
      const entry = { controller, done };
      running.add(entry);
      try {
        return await done;
      } finally {
        running.delete(entry);
        outer?.removeEventListener("abort", forward);
      }
    },
    writeFile: (relPath, bytes) => writeConfined(dir, runAs, relPath, bytes),
    readFile: (relPath) => readConfined(dir, relPath),
    removeFile: (relPath) => removeConfined(dir, relPath),
    snapshot: () => snapshotTree(dir.workspace),
    async destroy() {
      destroyed = true;
      for (const r of running) r.controller.abort();
      await Promise.allSettled([...running].map((r) => r.done));
      return removeEnvironmentDir(dir);
    },
  };
}

/** Sandbox.discardEnvironment for a backend made with `options`. */
export function discardEnvironment(
  options: BackendOptions,
  name: string,
): Promise<{ readonly confirmed: boolean }> {
  return discardNamedEnvironmentDir(options.tempRoot ?? tmpdir(), name);
}
