// Running one backend invocation as a child process with the run's limits: wall time (the whole
// process group is killed), a combined output byte cap (cut and flagged), and cancellation.
import { spawn } from "node:child_process";
import { closeSync } from "node:fs";
import type { ExecResult, LimitHit, ResourceLimits } from "../../core/ports/sandbox.js";
import { digestOf, digestOfBytes } from "../../core/records/canonical.js";
import { CREDENTIAL_NAME } from "../../core/taskpack/ignore.js";
import { type MemoryCgroup, reportedLimit } from "./resource-limits.js";

export interface LimitedRun {
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly signal?: AbortSignal;
  /**
   * Resource limits being held: the reporter's fd 3 is read (see resource-limits.ts), the memory
   * cgroup asked whether it killed, and `watch` started (it calls `breach` to stop the command).
   */
  readonly enforce?: {
    readonly resources: ResourceLimits;
    readonly cgroup?: MemoryCgroup | undefined;
    readonly watch?: (breach: (hit: LimitHit) => void) => () => void;
  };
  /** Open files handed to the backend at fd 4 onwards (closed here once the child has them). */
  readonly fds?: readonly number[];
}

export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The fixed environment of a contained command: PATH, HOME (the workspace), LANG, TMPDIR, plus the
 * caller's extra variables except any whose name looks like a secret and except HOME. Nothing is
 * inherited from the host process.
 */
export function scrubbedEnv(
  home: string,
  extra: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (!CREDENTIAL_NAME.test(k) && k !== "HOME" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) env[k] = v;
  }
  return { ...env, PATH: env.PATH ?? SANDBOX_PATH, HOME: home, LANG: "C.UTF-8", TMPDIR: "/tmp" };
}

/** Spawn `argv` (the backend's full command line) with `env` and enforce the limits. */
export function runLimited(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  limits: LimitedRun,
): Promise<ExecResult> {
  const startedAt = new Date().toISOString();
  return new Promise((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let timedOut = false;
    let cancelled = false;
    let spawnError: Error | undefined;
    const enforce = limits.enforce;
    let report = "";
    let hit: LimitHit | undefined;
    const fds = limits.fds ?? [];
    const child = spawn(argv[0] as string, argv.slice(1), {
      env: { ...env },
      stdio: ["ignore", "pipe", "pipe", enforce === undefined ? "ignore" : "pipe", ...fds],
      // Its own process group, so a kill reaches everything the backend started outside its
      // namespaces; inside, the backend's pid namespace dies with its init.
      detached: true,
    });
    for (const fd of fds) closeSync(fd);
    let exited = false;
    // Only while the child is unreaped: afterwards its pid (the group id) may belong to another.
    const killTree = () => {
      if (child.pid === undefined || exited) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const take = (into: Buffer[]) => (chunk: Buffer) => {
      const room = limits.maxOutputBytes - kept;
      if (room <= 0) {
        truncated = true;
        return;
      }
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      if (part.length < chunk.length) truncated = true;
      into.push(part);
      kept += part.length;
    };
    const reporter = child.stdio[3];
    if (reporter !== null && reporter !== undefined && "on" in reporter) {
      reporter.on("data", (chunk: Buffer) => {
        if (report.length < 64) report += chunk.toString("latin1");
      });
      reporter.on("error", () => undefined);
    }
    const stopWatch = enforce?.watch?.((h) => {
      hit ??= h;
      killTree();
    });
    child.stdout?.on("data", take(stdout));
    child.stderr?.on("data", take(stderr));
    const timer = setTimeout(() => {
      timedOut = true;
      killTree();
    }, limits.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      killTree();
    };
    if (limits.signal?.aborted === true) onAbort();
    else limits.signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (e) => {
      spawnError = e;
    });
    child.on("exit", () => {
      exited = true;
    });
    child.on("close", async (code, sig) => {
      clearTimeout(timer);
      stopWatch?.();
      limits.signal?.removeEventListener("abort", onAbort);
      if (enforce !== undefined) {
        const { cgroup, resources } = enforce;
        if (hit === undefined && cgroup !== undefined && (await cgroup.oomKilled()))
          hit = { resource: "memory", bytes: resources.memoryBytes, via: "cgroup" };
        hit ??= reportedLimit(report, resources);
        await cgroup?.release();
      }
      const out = Buffer.concat(stdout);
      const err = Buffer.concat(stderr);
      const errText =
        spawnError === undefined
          ? err.toString("utf8")
          : `${err.toString("utf8")}${spawnError.message}\n`;
      resolve({
        exitCode: code ?? (spawnError === undefined ? null : 127),
        signal: sig,
        timedOut,
        cancelled,
        stdout: out.toString("utf8"),
        stderr: errText,
        truncated,
        outputDigest: digestOf({
          stderr: digestOfBytes(new Uint8Array(err)),
          stdout: digestOfBytes(new Uint8Array(out)),
        }),
        startedAt,
        endedAt: new Date().toISOString(),
        ...(hit === undefined ? {} : { limit: hit }),
      });
    });
  });
}
