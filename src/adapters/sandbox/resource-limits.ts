// Holding a command to its environment's resource limits: a memory cgroup (v2 `memory.max`, or v1
// `memory.limit_in_bytes`) made once per environment and reused by each of its commands (one per
// command running at once; a command's OOM kills counted from its own start) where the host's own
// cgroup is delegated and writable, RLIMIT_DATA otherwise; RLIMIT_FSIZE per file; a size-limited /tmp (the backends mount
// it); a watchdog on the workspace's writable layer; and the small reporter that runs in the
// sandbox around the command to say whether /tmp was left full or the file-size limit was hit.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chown, mkdir, readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { LimitHit, ResourceLimits } from "../../core/ports/sandbox.js";
import { DEFAULT_RESOURCES } from "../../core/ports/sandbox.js";
import { closeQuietly, openDirPath } from "./host-fs.js";
import { walkTree } from "./tree-walk.js";

export function resourcesOf(given: Partial<ResourceLimits> | undefined): ResourceLimits {
  return { ...DEFAULT_RESOURCES, ...given };
}

/** Where the host may make memory cgroups: its own cgroup, in the v2 or the v1 hierarchy. */
export interface CgroupParent {
  readonly dir: string;
  readonly version: 1 | 2;
}

interface MountLine {
  readonly root: string;
  readonly mountPoint: string;
  readonly fsType: string;
  readonly superOptions: string;
}

function mountLines(text: string): MountLine[] {
  const out: MountLine[] = [];
  const octal = (s: string) =>
    s.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
  for (const line of text.split("\n")) {
    const [left, right] = line.split(" - ");
    // A line that is not a mount (an empty last line, a short one) is passed over.
    const [, , , root, mountPoint] = left?.split(" ") ?? [];
    const [fsType, , superOptions] = right?.split(" ") ?? [];
    if (root === undefined || mountPoint === undefined) continue;
    if (fsType === undefined || superOptions === undefined) continue;
    out.push({ root: octal(root), mountPoint: octal(mountPoint), fsType, superOptions });
  }
  return out;
}

/**
 * The directories a memory cgroup could be made under, v2 first, from this process's
 * `/proc/self/cgroup` and `/proc/self/mountinfo` (given as text): its cgroup in each cgroup2
 * mount, and its cgroup in each v1 hierarchy that carries the memory controller.
 */
export function cgroupCandidates(procCgroup: string, mountinfo: string): CgroupParent[] {
  const mounts = mountLines(mountinfo);
  const out: CgroupParent[] = [];
  const inside = (m: MountLine, rel: string) => {
    const sub = path.posix.relative(m.root, rel);
    // Outside the mount only when the way there climbs (`..` as a whole segment: `..x` is a name).
    return sub === ".." || sub.startsWith("../") ? undefined : path.join(m.mountPoint, sub);
  };
  for (const line of procCgroup.split("\n")) {
    // `.*` takes the rest of the line (a line holds no line break).
    const m = /^(\d+):([^:]*):(.*)/.exec(line);
    if (m === null) continue;
    const [, id, controllers = "", rel = ""] = m;
    if (id === "0" && controllers === "") {
      for (const mount of mounts.filter((x) => x.fsType === "cgroup2")) {
        const dir = inside(mount, rel);
        if (dir !== undefined) out.push({ dir, version: 2 });
      }
    } else if (controllers.split(",").includes("memory")) {
      for (const mount of mounts.filter(
        (x) => x.fsType === "cgroup" && x.superOptions.split(",").includes("memory"),
      )) {
        const dir = inside(mount, rel);
        if (dir !== undefined) out.push({ dir, version: 1 });
      }
    }
  }
  return out.sort((a, b) => b.version - a.version);
}

/** The memory cgroup one command runs in. */
export interface MemoryCgroup {
  /**
   * The file a process writes `0` to, to move itself in: on cgroup v1 its `tasks` file, which
   * moves the writing thread alone (the first process of a command is a single-threaded shell);
   * a write to `cgroup.procs` moves a whole thread group, and for that the kernel takes a lock
   * over every process's threads whose release waits for an RCU grace period (4 to 23 ms a
   * command on a busy host). On v2, where `tasks` does not exist, `cgroup.procs`.
   */
  readonly join: string;
  /**
   * Whether the commands' first process can move itself in (write `0` to `join`): on v1 the
   * `tasks` file is the commands' uid's; on v2 only where the commands run as this process's own
   * user (moving needs write access to the parent's `cgroup.procs`). Otherwise the host moves it,
   * by its pid (the kernel then takes that lock: moving another process is never the cheap way).
   */
  readonly selfJoin: boolean;
  /** The cgroup hierarchy's version. */
  readonly version: 1 | 2;
  /** True when the kernel killed a process in it for going over the limit during this command. */
  oomKilled(): Promise<boolean>;
  /** The command is over: kill whatever of it is still in the cgroup, and hand the cgroup back. */
  release(): Promise<void>;
}

/** A memory cgroup on disk. */
interface CgroupDir {
  /** See MemoryCgroup.join. */
  readonly join: string;
  /** See MemoryCgroup.selfJoin. */
  readonly selfJoin: boolean;
  /** How many processes the kernel has killed in it for going over its limit, so far. */
  oomKills(): Promise<number>;
  /** Kill whatever is in it (best effort; true when it is empty afterwards). */
  empty(): Promise<boolean>;
  /** Kill whatever is still in it, then remove it (best effort). */
  remove(): Promise<void>;
}

const readText = (p: string) => readFile(p, "utf8").catch(() => undefined);

/**
 * A cgroup file's text, read at once: each command reads two (a few µs each, where the promise
 * API took tens), and the kernel makes their text without waiting on anything.
 */
function readNow(p: string): string | undefined {
  try {
    return readFileSync(p, "latin1");
  } catch {
    return undefined;
  }
}

/** A uid and gid (the commands' own). */
interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/**
 * A memory cgroup of `bytes` under `parent`; on v1 its `tasks` file given to `owner` (the uid
 * commands run as, when not this process's), so that their first process moves itself in.
 */
async function makeCgroup(parent: CgroupParent, bytes: number, owner?: Owner): Promise<CgroupDir> {
  const dir = path.join(parent.dir, `warrant-${process.pid}-${randomBytes(6).toString("hex")}`);
  await mkdir(dir);
  try {
    if (parent.version === 2) {
      await writeFile(path.join(dir, "memory.max"), String(bytes));
      if (existsSync(path.join(dir, "memory.swap.max")))
        await writeFile(path.join(dir, "memory.swap.max"), "0").catch(() => undefined);
    } else {
      await writeFile(path.join(dir, "memory.limit_in_bytes"), String(bytes));
      if (existsSync(path.join(dir, "memory.memsw.limit_in_bytes")))
        await writeFile(path.join(dir, "memory.memsw.limit_in_bytes"), String(bytes)).catch(
          () => undefined,
        );
    }
  } catch (e) {
    await rmdir(dir).catch(() => undefined);
    throw e;
  }
  const counterFile = path.join(dir, parent.version === 2 ? "memory.events" : "memory.oom_control");
  const procs = path.join(dir, "cgroup.procs");
  const join = parent.version === 2 ? procs : path.join(dir, "tasks");
  let selfJoin = owner === undefined;
  if (owner !== undefined && parent.version === 1) {
    try {
      await chown(join, owner.uid, owner.gid);
      selfJoin = true;
    } catch {
      // The host moves the commands in instead.
    }
  }
  /** Signals what is in the cgroup; true when nothing was. */
  const killLeft = async () => {
    const left = (readNow(procs) ?? "").split("\n").filter((l) => /^\d+$/.test(l));
    for (const pid of left) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    return left.length === 0;
  };
  const pause = () => new Promise((r) => setTimeout(r, 20));
  return {
    join,
    selfJoin,
    async oomKills() {
      const text = readNow(counterFile) ?? "";
      const m = /^oom_kill (\d+)$/m.exec(text);
      return m === null ? 0 : Number(m[1]);
    },
    async empty() {
      for (let i = 0; i < 50; i += 1) {
        if (await killLeft()) return true;
        await pause();
      }
      return false;
    },
    async remove() {
      for (let i = 0; i < 50; i += 1) {
        await killLeft();
        try {
          await rmdir(dir);
          return;
        } catch {
          await pause();
        }
      }
    },
  };
}

/** Whether a process with this pid exists (signal 0; EPERM means it does, as another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Remove the (empty) cgroups a host killed mid-command left: `warrant-<pid>-…` of dead pids. */
async function sweepDeadCgroups(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const m = /^warrant-(\d+)-[0-9a-f]+$/.exec(name);
    if (m === null || alive(Number(m[1]))) continue;
    await rmdir(path.join(dir, name)).catch(() => undefined);
  }
}

/**
 * Makes memory cgroups where this host can, proven once by making (and removing) one; where it
 * cannot, environments' `take()` gives `undefined`: the RLIMIT_DATA fallback. `enabled: false`
 * always falls back.
 */
export function memoryCgroups(enabled: boolean, owner?: Owner) {
  let parent: Promise<CgroupParent | undefined> | undefined;
  const find = async (): Promise<CgroupParent | undefined> => {
    if (!enabled) return undefined;
    const [procCgroup, mountinfo] = await Promise.all([
      readText("/proc/self/cgroup"),
      readText("/proc/self/mountinfo"),
    ]);
    if (procCgroup === undefined || mountinfo === undefined) return undefined;
    for (const c of cgroupCandidates(procCgroup, mountinfo)) {
      // A v2 child gets a memory controller only where this cgroup hands it down.
      if (c.version === 2) {
        const control = await readText(path.join(c.dir, "cgroup.subtree_control"));
        if (!(control ?? "").split(/\s+/).includes("memory")) continue;
      }
      try {
        const probe = await makeCgroup(c, 64 << 20);
        await probe.remove();
        await sweepDeadCgroups(c.dir);
        return c;
      } catch {
        // Not writable here: the next, or the fallback.
      }
    }
    return undefined;
  };
  return {
    /** The cgroup parent in use, or undefined (RLIMIT_DATA). */
    parent: (): Promise<CgroupParent | undefined> => parent_(),
    /**
     * One environment's memory cgroups, each limited to `bytes`: made when a command first needs
     * one and reused by every later command (one per command running at once), removed by
     * `close()`. `take()` gives `undefined` where this host has no cgroups (RLIMIT_DATA).
     */
    forEnvironment(bytes: number) {
      const idle: CgroupDir[] = [];
      const all = new Set<CgroupDir>();
      let closed = false;
      return {
        async take(): Promise<MemoryCgroup | undefined> {
          const p = await parent_();
          if (p === undefined || closed) return undefined;
          const dir = idle.pop() ?? (await makeCgroup(p, bytes, owner));
          all.add(dir);
          const before = await dir.oomKills();
          return {
            join: dir.join,
            selfJoin: dir.selfJoin,
            version: p.version,
            oomKilled: async () => (await dir.oomKills()) > before,
            async release() {
              // A cgroup something of the command outlived is not handed to the next command.
              if (!closed && (await dir.empty())) idle.push(dir);
              else {
                all.delete(dir);
                await dir.remove();
              }
            },
          };
        },
        async close(): Promise<void> {
          closed = true;
          idle.length = 0;
          const dirs = [...all];
          all.clear();
          await Promise.all(dirs.map((d) => d.remove()));
        },
      };
    },
  };
  function parent_(): Promise<CgroupParent | undefined> {
    parent ??= find();
    return parent;
  }
}

export type EnvironmentCgroups = ReturnType<MemoryCgroups["forEnvironment"]>;

export type MemoryCgroups = ReturnType<typeof memoryCgroups>;

/** The command line that moves itself into `cgroup` before it becomes `argv`. */
export function inCgroup(cgroup: MemoryCgroup | undefined, argv: readonly string[]): string[] {
  if (cgroup === undefined) return [...argv];
  return ["/bin/sh", "-c", 'echo 0 > "$0" && exec "$@"', cgroup.join, ...argv];
}

/** The exit status a shell reports for a process killed by SIGXFSZ (25). */
export const XFSZ_STATUS = 128 + 25;

/**
 * The reporter around a contained command (run inside the sandbox, the command's parent): the
 * command runs under prlimit with fd 3 closed; afterwards the reporter writes `fsize` to fd 3 when
 * the command died of SIGXFSZ and `tmp` when /tmp has no block left. Arguments: nproc, the
 * RLIMIT_DATA value (`-` for none: a cgroup holds memory), RLIMIT_FSIZE, then the command.
 */
export const REPORTER_SCRIPT = `N=$1; D=$2; F=$3; shift 3
if [ "$D" = - ]; then prlimit --nproc="$N:$N" --fsize="$F:$F" -- "$@" 3>&-
else prlimit --nproc="$N:$N" --data="$D:$D" --fsize="$F:$F" -- "$@" 3>&-; fi
rc=$?
if [ "$rc" -eq ${XFSZ_STATUS} ]; then echo fsize >&3; fi
a=$(stat -f -c %a /tmp 2>/dev/null) && [ "$a" = 0 ] && echo tmp >&3
exit "$rc"
`;

/** The reporter's command line for `argv`. */
export function reporterLine(
  nproc: string,
  limits: ResourceLimits,
  cgroup: boolean,
  argv: readonly string[],
): string[] {
  return [
    "/bin/sh",
    "-c",
    REPORTER_SCRIPT,
    "warrant-limits",
    nproc,
    cgroup ? "-" : String(limits.memoryBytes),
    String(limits.diskBytes),
    ...argv,
  ];
}

/** What the reporter said (its fd 3), as the limit hit, if any. */
export function reportedLimit(report: string, limits: ResourceLimits): LimitHit | undefined {
  const words = new Set(report.split(/\s+/));
  if (words.has("fsize")) return { resource: "disk", bytes: limits.diskBytes, via: "rlimit-fsize" };
  if (words.has("tmp")) return { resource: "tmp", bytes: limits.tmpBytes, via: "tmpfs" };
  return undefined;
}

/** Bytes the tree under `dir` takes on disk (allocated blocks; a sparse file counts what it holds). */
export async function diskUse(dir: string): Promise<number> {
  const fd = openDirPath(dir);
  let total = 0n;
  try {
    // Every folder is walked into (the walk goes into folders only; the state is not used).
    await walkTree(fd, null, {
      entry(_dirFd, _name, st) {
        total += st.blocks * 512n;
        return null;
      },
    });
  } finally {
    closeQuietly(fd);
  }
  return Number(total);
}

/**
 * Watches what the workspace's writable layer grows by while a command runs, from `initial`
 * bytes; calls `breach` once when it passes `limit` (growth of exactly `limit` is within it).
 * `onPass` is told what each pass measured. Each pass waits at least `everyMs` and four
 * times as long as the last pass took, so a large copy is not walked back to back. Returns stop().
 */
export function watchDisk(
  dir: string,
  initial: number,
  limit: number,
  breach: () => void,
  everyMs = 200,
  onPass?: (used: number | undefined) => void,
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const pass = async () => {
    const t0 = Date.now();
    let used: number | undefined;
    try {
      used = await diskUse(dir);
    } catch {
      // A tree changing under the walk: measured again next pass.
    }
    if (stopped) return;
    onPass?.(used);
    if (used !== undefined && used - initial > limit) {
      // Told once: no pass is scheduled after this one.
      breach();
      return;
    }
    timer = setTimeout(pass, Math.max(everyMs, 4 * (Date.now() - t0)));
  };
  timer = setTimeout(pass, everyMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
