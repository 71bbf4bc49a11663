// What stands outside a bwrap sandbox in overlay mode, in the command's own user and mount
// namespaces: it waits until the host has moved it into the environment's memory cgroup, mounts
// the overlays and a /tmp of its own, sets the command's resource limits on itself, runs bwrap as
// its child, says the command's exit status on fd 3, and waits while the host reads how full that
// /tmp was left (through /proc/PID/root) before it exits with the command's status. Nothing of it
// runs inside the sandbox: the command cannot reach it, and bwrap's own init is its pid 1.
// One program, `warrant-outer` (native/outer-exec.c, built with the package where a C compiler
// was), or where it was not built or does not run here, the same steps as a shell script behind
// unshare(1), with mount(8) and the shell's `ulimit` (or prlimit).
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { ResourceLimits } from "../../core/ports/sandbox.js";
import { SANDBOX_PATH } from "./contained-exec.js";
import type { RunAs } from "./environment-dir.js";
import { builtNativeProgram } from "./native-program.js";

/**
 * Runs the command (`$@`) with its limits, stdin from /dev/null and fd 3 closed, and leaves its
 * status in `$rc`; shared by OUTER_SCRIPT and the unshare backend's limits reporter. `$N` nproc,
 * `$D` RLIMIT_DATA in bytes (`-` for none), `$F` RLIMIT_FSIZE in bytes, `$S` whether the shell's
 * `ulimit` sets them (1: in the subshell that becomes the command, so the shell itself is not
 * held) or prlimit does (0). The shell's `ulimit -f` counts 512-byte blocks and `-d` KiB: the
 * host asks for it only where the sizes divide (limitArgs).
 */
export const LIMITED_RUN = `if [ "$S" = 1 ]; then
  (ulimit -p "$N" && ulimit -f $((F / 512)) || exit 125
  if [ "$D" != - ]; then ulimit -d $((D / 1024)) || exit 125; fi
  exec "$@") </dev/null 3>&-
elif [ "$D" = - ]; then prlimit --nproc="$N:$N" --fsize="$F:$F" -- "$@" </dev/null 3>&-
else prlimit --nproc="$N:$N" --data="$D:$D" --fsize="$F:$F" -- "$@" </dev/null 3>&-; fi
rc=$?
`;

/**
 * Arguments: whether to wait for the host's line first (1: the host is moving it into a memory
 * cgroup), the cgroup file to move itself in through (`-`: none), the fstab to mount, then
 * LIMITED_RUN's four (limitArgs) and bwrap's line. Once the command is over it says `rc N` on
 * fd 3, waits for the host's line or the end of stdin (the host reads its /tmp meanwhile), and
 * exits with N.
 */
export const OUTER_SCRIPT = `G=$1; J=$2; T=$3; N=$4; D=$5; F=$6; S=$7; shift 7
if [ "$G" = 1 ]; then read -r _ || exit 125; fi
if [ "$J" != - ]; then echo 0 > "$J" || exit 125; fi
mount --all --fstab "$T" || exit 125
${LIMITED_RUN}echo "rc $rc" >&3
read -r _
exit "$rc"
`;

/**
 * LIMITED_RUN's four arguments: nproc, RLIMIT_DATA (`-` for none), RLIMIT_FSIZE, and whether the
 * shell sets them (`builtins`, from shellSetsLimits, and only where the sizes divide its units).
 */
export function limitArgs(
  nproc: string,
  dataBytes: number | undefined,
  fsizeBytes: number,
  builtins: boolean,
): string[] {
  const divides = fsizeBytes % 512 === 0 && (dataBytes === undefined || dataBytes % 1024 === 0);
  return [
    nproc,
    dataBytes === undefined ? "-" : String(dataBytes),
    String(fsizeBytes),
    builtins && divides ? "1" : "0",
  ];
}

/**
 * One mount: its source, target and type, `flags` (nosuid, nodev, noexec, ro, comma-separated;
 * empty for none) and `data` (the file system's own options; empty for none).
 */
export interface OuterMount {
  readonly source: string;
  readonly target: string;
  readonly type: string;
  readonly flags: string;
  readonly data: string;
}

/** A path or word as an fstab field: space, tab, newline and backslash as octal escapes. */
export function fstabField(text: string): string {
  return text.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`);
}

/**
 * Each fstab text an environment's commands were given, written once in `dir` (one per work slot
 * and layers): its file for a text.
 */
export function fstabFiles(dir: string, prefix: string): (text: string) => Promise<string> {
  const files = new Map<string, string>();
  return async (text) => {
    let file = files.get(text);
    if (file === undefined) {
      file = path.join(dir, `${prefix}-${files.size}.fstab`);
      await writeFile(file, text, { mode: 0o644 });
      files.set(text, file);
    }
    return file;
  };
}

/** `mounts` as an fstab's text, in order. */
export function fstabText(mounts: readonly OuterMount[]): string {
  return mounts
    .map((m) => {
      const options = [m.flags, m.data].filter((o) => o !== "").join(",") || "defaults";
      return `${fstabField(m.source)} ${fstabField(m.target)} ${m.type} ${options} 0 0\n`;
    })
    .join("");
}

let builtinLimits: Promise<boolean> | undefined;

/**
 * Whether this host's /bin/sh sets nproc, RLIMIT_FSIZE and RLIMIT_DATA with `ulimit -p`, `-f` (in
 * 512-byte blocks) and `-d` (in KiB), soft and hard together, as dash does: proven once per
 * process by reading the limits a shell set on itself back from /proc.
 */
export function shellSetsLimits(): Promise<boolean> {
  builtinLimits ??= new Promise<boolean>((resolve) => {
    let out = "";
    const child = spawn(
      "/bin/sh",
      ["-c", "ulimit -p 77 && ulimit -f 3 && ulimit -d 65536 && exec cat /proc/self/limits"],
      { env: { PATH: SANDBOX_PATH }, stdio: ["ignore", "pipe", "ignore"] },
    );
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString("latin1");
    });
    child.on("error", () => resolve(false));
    child.on("close", (code) => {
      const has = (name: string, value: number) =>
        new RegExp(`^Max ${name}\\s+${value}\\s+${value}\\s`, "m").test(out);
      resolve(
        code === 0 &&
          has("processes", 77) &&
          has("file size", 1536) &&
          has("data size", 65536 * 1024),
      );
    });
  });
  return builtinLimits;
}

/** What one command's outer steps are given besides its mounts and bwrap's line. */
export interface OuterCommand {
  /** Wait for the host's line first: it is moving the process into a memory cgroup. */
  readonly gate: boolean;
  /** The memory cgroup file to move itself in through (MemoryCgroup.join), if it does. */
  readonly join: string | undefined;
  readonly nproc: string;
  /** RLIMIT_DATA in bytes; undefined where a memory cgroup holds the command. */
  readonly dataBytes: number | undefined;
  readonly resources: ResourceLimits;
}

/** What `warrant-outer` is told of the descriptors it is handed. */
export interface HelperDescriptors {
  /** The last descriptor handed to it: it closes every one above (`--keep`). */
  readonly keep: number;
  /** The environment's user and network namespaces, to join (`--netns U,N`; environment-netns.ts). */
  readonly netns?: readonly [user: number, net: number];
}

/** `warrant-outer`'s options for what it is handed (`--keep`, `--netns`). */
function helperOptions(handed: HelperDescriptors | undefined): string[] {
  if (handed === undefined) return [];
  const netns = handed.netns === undefined ? [] : ["--netns", handed.netns.join(",")];
  return ["--keep", String(handed.keep), ...netns];
}

/**
 * `warrant-outer`'s command line: the program, its options (`handed`), its arguments, its mounts,
 * then `argv`.
 */
export function helperLine(
  helper: string,
  command: OuterCommand,
  mounts: readonly OuterMount[],
  argv: readonly string[],
  handed?: HelperDescriptors,
): string[] {
  return [
    helper,
    ...helperOptions(handed),
    command.gate ? "1" : "0",
    command.join ?? "-",
    command.nproc,
    command.dataBytes === undefined ? "-" : String(command.dataBytes),
    String(command.resources.diskBytes),
    String(mounts.length),
    ...mounts.flatMap((m) => [m.type, m.source, m.target, m.flags || "-", m.data || "-"]),
    ...argv,
  ];
}

/**
 * The same steps as a shell script behind unshare(1): `fstab` holds the mounts (fstabText),
 * `builtins` whether /bin/sh sets the limits itself (shellSetsLimits).
 */
export function shellLine(
  unsharePath: string,
  command: OuterCommand,
  fstab: string,
  builtins: boolean,
  argv: readonly string[],
): string[] {
  return [
    unsharePath,
    "--user",
    "--map-root-user",
    "--mount",
    "--",
    "/bin/sh",
    "-c",
    OUTER_SCRIPT,
    "warrant-outer",
    command.gate ? "1" : "0",
    command.join ?? "-",
    fstab,
    ...limitArgs(command.nproc, command.dataBytes, command.resources.diskBytes, builtins),
    ...argv,
  ];
}

/** The `warrant-outer` built with this package, when it was. */
export function defaultOuterHelper(): string | undefined {
  return builtNativeProgram("warrant-outer");
}

/**
 * Whether `helper` runs here as `runAs` (undefined: this process's own user): proven by running
 * it, with no mounts, in front of `true` and reading its `rc 0` on fd 3; with `netns`, joining
 * those namespaces first (`--netns`), as an environment's commands will.
 */
export function helperRuns(
  helper: string,
  runAs: RunAs | undefined,
  netns?: { readonly user: number; readonly net: number },
): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let said = "";
    // The namespaces at 4 and 5, after fd 3.
    const join = helperOptions(netns === undefined ? undefined : { keep: 5, netns: [4, 5] });
    const child = spawn(helper, [...join, "0", "-", "64", "-", "1048576", "0", "true"], {
      env: { PATH: SANDBOX_PATH },
      stdio: [
        "pipe",
        "ignore",
        "ignore",
        "pipe",
        ...(netns === undefined ? [] : [netns.user, netns.net]),
      ],
      ...(runAs === undefined ? {} : { uid: runAs.uid, gid: runAs.gid }),
    });
    child.stdin?.on("error", () => undefined);
    child.stdin?.end();
    child.stdio[3]?.on("data", (c: Buffer) => {
      said += c.toString("latin1");
    });
    child.on("error", () => resolve(false));
    child.on("close", (code) => resolve(code === 0 && said === "rc 0\n"));
  });
}
