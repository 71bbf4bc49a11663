// The Sandbox port: fresh contained environments for runs (SPEC §7). Its adapters (bwrap,
// unshare) implement it outside the core, which never starts a process.
import type { Result } from "../result.js";

export type SandboxBackend = "bwrap" | "unshare";

/** A stable environment name: the directory is `warrant-env-<name>`, found again after a crash. */
export const ENVIRONMENT_NAME = /^[a-z0-9-]{1,64}$/;

export function isEnvironmentName(name: string): boolean {
  return ENVIRONMENT_NAME.test(name);
}

export interface EnvironmentOptions {
  /** Default process-count limit for commands in this environment (RLIMIT_NPROC). */
  readonly maxProcesses?: number;
  /**
   * A stable name (`[a-z0-9-]{1,64}`, else `sandbox/invalid-name` is thrown): the private
   * directory is `<tempRoot>/warrant-env-<name>`, so a process that dies before recording it can
   * still have it removed (`discardEnvironment`). Whatever is already at that path is removed
   * first: it can only be a leftover of an earlier attempt under the same name. Without a name
   * the directory gets a fresh random name.
   */
  readonly name?: string;
}

export interface ExecOptions {
  /** Wall-clock limit; the whole process tree is killed when it passes. */
  readonly timeoutMs: number;
  /** stdout and stderr together; bytes past the limit are dropped and `truncated` is set. */
  readonly maxOutputBytes: number;
  /** Extra variables on top of the fixed minimal environment; secret-looking names are dropped. */
  readonly env?: Readonly<Record<string, string>>;
  /** Aborting kills the process tree and reports `cancelled`. */
  readonly signal?: AbortSignal;
  /** Overrides the environment's process-count limit for this command. */
  readonly maxProcesses?: number;
}

export interface ExecResult {
  /** The command's exit status; null when it was killed by a signal. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly truncated: boolean;
  /** `sha256:<b64url>` over JCS `{stderr: digest(stderr bytes), stdout: digest(stdout bytes)}`. */
  readonly outputDigest: string;
  /** RFC 3339 UTC. */
  readonly startedAt: string;
  readonly endedAt: string;
}

export interface Environment {
  readonly id: string;
  readonly backend: SandboxBackend;
  /** Absolute host path of the workspace copy; commands see it at the same path as their cwd and HOME. */
  readonly root: string;
  exec(argv: readonly string[], opts: ExecOptions): Promise<ExecResult>;
  /**
   * Write a workspace file (creating parent directories). Refused with
   * `workbench/patch-outside-policy` when the path is not a safe relative path or its real path
   * leaves the workspace (symlink escapes), whatever the plan check said.
   */
  writeFile(relPath: string, bytes: Uint8Array): Promise<Result<{ readonly path: string }>>;
  /** Refused like writeFile; `sandbox/not-found` when the file does not exist. */
  readFile(relPath: string): Promise<Result<Uint8Array>>;
  /** Remove a workspace file; refused like writeFile. */
  removeFile(relPath: string): Promise<Result<{ readonly path: string }>>;
  /**
   * Digest of every file under the workspace, by normalised relative path: regular files
   * `sha256:<b64url>` of their bytes, symlinks `symlink:<digest of the target text>`.
   */
  snapshot(): Promise<Map<string, string>>;
  /** Kill anything still running and remove the directory; confirmed when it is gone. */
  destroy(): Promise<{ readonly confirmed: boolean }>;
}

export interface Sandbox {
  readonly backend: SandboxBackend;
  /** A fresh environment: a private copy of `baselineDir`. */
  createEnvironment(baselineDir: string, opts?: EnvironmentOptions): Promise<Environment>;
  /**
   * Remove the directory of the environment named `name` if one is left (a dead process's); no
   * process is killed. Confirmed when nothing is at that path any more. Throws
   * `sandbox/invalid-name` for a name `createEnvironment` would refuse.
   */
  discardEnvironment(name: string): Promise<{ readonly confirmed: boolean }>;
}
