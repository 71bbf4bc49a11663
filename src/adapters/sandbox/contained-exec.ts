// Running one backend invocation as a child process with the run's limits: wall time (the whole
// process group is killed), a combined output byte cap (cut and flagged), and cancellation.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync } from "node:fs";
import { statfs, writeFile } from "node:fs/promises";
import type { ExecResult, LimitHit, ResourceLimits } from "../../core/ports/sandbox.js";
import { digestOf, digestOfBytes } from "../../core/records/canonical.js";
import { CREDENTIAL_NAME } from "../../core/taskpack/ignore.js";
import { type StdioEntry, withoutInherited } from "./inherited-fds.js";
import { type MemoryCgroup, reportedLimit, XFSZ_STATUS } from "./resource-limits.js";

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
  /** Open files handed on after `fds`, which stay open here (the environment's namespaces). */
  readonly lent?: readonly number[];
  /**
   * The chain's first program closes every descriptor past those it is handed, before anything
   * else (`warrant-outer --keep`): the host need not look for descriptors it inherited itself.
   */
  readonly closesInherited?: boolean;
  /**
   * The chain's first process waits for a line on stdin while the host moves it into
   * `enforce.cgroup` by its pid (where it cannot move itself: MemoryCgroup.selfJoin).
   */
  readonly gate?: boolean;
  /**
   * The chain reports as OUTER_SCRIPT does (outer-shell.ts): its fd 3 says `rc N` when the
   * command is over, then it waits for the end of stdin while the host looks at the /tmp mounted
   * at `statusTmp` in the mount namespace of the chain's first process (through /proc/PID/root).
   */
  readonly statusTmp?: string;
  /** The uid and gid the chain is started as, with no other groups. */
  readonly spawnAs?: { readonly uid: number; readonly gid: number };
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

/**
 * The host's side of a chain's stdin and fd 3: the gate (LimitedRun.gate), what the chain reports
 * on fd 3 (its first 64 bytes), and its status (LimitedRun.statusTmp): the /tmp looked at, then
 * the chain let go. `report()` is what was reported, with `tmp` and `fsize` added for a status.
 */
function hostSide(child: ChildProcess, limits: LimitedRun) {
  const { gate: gated, statusTmp } = limits;
  let report = "";
  let joinError: Error | undefined;
  const gate = child.stdin;
  gate?.on("error", () => undefined);
  // The chain waits on its stdin until the host has moved it into the cgroup: every process of
  // the command is forked after that.
  const join = limits.enforce?.cgroup?.join;
  if (gated === true && gate !== null && child.pid !== undefined) {
    if (join === undefined) gate.end();
    else
      writeFile(join, String(child.pid)).then(
        () => (statusTmp === undefined ? gate.end("\n") : gate.write("\n")),
        (e: Error) => {
          joinError = e;
          gate.end();
        },
      );
  }
  let told = false;
  /** The chain said the command's status: look at its /tmp, then let it exit. */
  const onStatus = (rc: number) => {
    statfs(`/proc/${child.pid}/root${statusTmp}`)
      .then(
        (s) => {
          if (s.bavail === 0) report += " tmp";
        },
        () => undefined,
      )
      .finally(() => {
        if (rc === XFSZ_STATUS) report += " fsize";
        gate?.end();
      });
  };
  const reporter = child.stdio[3];
  if (reporter !== null && reporter !== undefined && "on" in reporter) {
    reporter.on("data", (chunk: Buffer) => {
      if (report.length < 64) report += chunk.toString("latin1");
      const m = statusTmp === undefined || told ? null : /^rc (\d+)\n/m.exec(report);
      if (m !== null) {
        told = true;
        onStatus(Number(m[1]));
      }
    });
    reporter.on("error", () => undefined);
  }
  return { report: () => report, joinError: () => joinError };
}

/**
 * A chain's descriptors: stdin (the gate), stdout, stderr, fd 3 (the reporter), `fds`, `lent`, and
 * nothing this process inherited (inherited-fds.ts), unless the chain closes that itself.
 */
function chainStdio(limits: LimitedRun): { readonly stdio: StdioEntry[]; close(): void } {
  const given: StdioEntry[] = [
    limits.gate === true || limits.statusTmp !== undefined ? "pipe" : "ignore",
    "pipe",
    "pipe",
    limits.enforce === undefined ? "ignore" : "pipe",
    ...(limits.fds ?? []),
    ...(limits.lent ?? []),
  ];
  if (limits.closesInherited === true) return { stdio: given, close: () => undefined };
  return withoutInherited(given);
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
    let hit: LimitHit | undefined;
    const fds = limits.fds ?? [];
    const stdio = chainStdio(limits);
    const child = spawn(argv[0] as string, argv.slice(1), {
      env: { ...env },
      stdio: stdio.stdio,
      // Its own process group, so a kill reaches everything the backend started outside its
      // namespaces; inside, the backend's pid namespace dies with its init.
      detached: true,
      ...(limits.spawnAs === undefined ? {} : { uid: limits.spawnAs.uid, gid: limits.spawnAs.gid }),
    });
    for (const fd of fds) closeSync(fd);
    stdio.close();
    const side = hostSide(child, limits);
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
        hit ??= reportedLimit(side.report(), resources);
        await cgroup?.release();
      }
      const out = Buffer.concat(stdout);
      const err = Buffer.concat(stderr);
      const failed = spawnError ?? side.joinError();
      const errText =
        failed === undefined
          ? err.toString("utf8")
          : `${err.toString("utf8")}${spawnError === undefined ? "could not join the memory cgroup: " : ""}${failed.message}\n`;
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
