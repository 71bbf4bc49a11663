// The util-linux `unshare` backend, for hosts without bubblewrap. Each command runs in fresh user
// (mapped to root), mount, pid, net, ipc and uts namespaces. Read-only strategy: rather than
// remounting the host's tree, a new root is assembled in the environment's stage directory — a
// skeleton made on the host (mountpoints, merged-/usr links, device placeholders), then inside the
// namespaces: the stage bound onto itself, the system directories bound read-only, single device
// nodes bound into /dev, a new /proc, a private /tmp, the workspace bound read-write at its host
// path (in overlay mode: the environment's overlay mounted there), and the stage remounted
// read-only. The command is chrooted into it with every capability
// dropped (bounding set included, no_new_privs), so it cannot undo the read-only mounts. The
// private /tmp is a tmpfs of `tmpBytes`, the control files (.git/hooks, .git/config) are bound
// read-only over themselves, and the command runs under the limits reporter (resource-limits.ts).
// util-linux has no way to load a seccomp filter: the last step of the setup, before the chroot,
// runs the package's loader (seccomp-loader.ts), which loads the same filter as bwrap's for
// everything that follows — the reporter and the command. Where the loader is missing or does not
// work, environments are refused (`sandbox/no-seccomp`) unless the weaker sandbox is allowed.
import { existsSync } from "node:fs";
import { chmod, copyFile, lchown, mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type {
  Baseline,
  EnvironmentOptions,
  ExecOptions,
  ExecResult,
  ResourceLimits,
  Sandbox,
} from "../../core/ports/sandbox.js";
import { WarrantError } from "../../core/result.js";
import { DEFAULT_MAX_PROCESSES } from "./bwrap-sandbox.js";
import { runLimited, SANDBOX_PATH, scrubbedEnv } from "./contained-exec.js";
import type { EnvironmentDir, RunAs } from "./environment-dir.js";
import {
  type HostBinds,
  moreMounts,
  type OverlayMount,
  withRootBinds,
  writableRoot,
} from "./host-binds.js";
import {
  type BackendOptions,
  type ExecLine,
  environmentHost,
  hostRunAs,
} from "./managed-environment.js";
import {
  fstabFiles,
  fstabText,
  LIMITED_RUN,
  limitArgs,
  type OuterMount,
  shellSetsLimits,
} from "./outer-shell.js";
import { setprivPrefix } from "./overlay-mount.js";
import {
  diskUse,
  type EnvironmentCgroups,
  inCgroup,
  memoryCgroups,
  resourcesOf,
  watchDisk,
  XFSZ_STATUS,
} from "./resource-limits.js";
import { DEVICE_NODES, type LayoutEntry, readOnlyLayout } from "./root-layout.js";
import { type FilterArch, filterArch, seccompProgram } from "./seccomp-filter.js";
import { checkSeccompLoader, type LoaderStatus, openWithoutFilter } from "./seccomp-loader.js";

/**
 * The limits reporter in the new root, the command's parent (LIMITED_RUN, outer-shell.ts):
 * arguments nproc, RLIMIT_DATA, RLIMIT_FSIZE, whether the shell sets them, then the command.
 * Afterwards it writes `fsize` to fd 3 when the command died of SIGXFSZ and `tmp` when /tmp has
 * no block left.
 */
export const UNSHARE_REPORTER = `N=$1; D=$2; F=$3; S=$4; shift 4
${LIMITED_RUN}if [ "$rc" -eq ${XFSZ_STATUS} ]; then echo fsize >&3; fi
a=$(stat -f -c %a /tmp 2>/dev/null) && [ "$a" = 0 ] && echo tmp >&3
exit "$rc"
`;

// Arguments: the seccomp loader and its filter (`-` `-` for none), workspace, stage, nproc, the
// command's fstab (commandFstab: the root's fixed mounts, the workspace, the dependencies and
// toolchains, in that order), RLIMIT_DATA (`-` under a memory cgroup), RLIMIT_FSIZE, the limits
// reporter's script (UNSHARE_REPORTER), whether it sets the limits with the shell's `ulimit` (1)
// or prlimit (0), the v1 memory cgroup's `tasks` file to move itself in through first (`-`:
// none; the host handed it to the commands' uid), then the command line to exec in the new root
// (`env -i` with the command's variables, its folder, the argv). Runs as root of the new user
// namespace and pid 1 of the new pid namespace; mount propagation is already private (unshare's
// default). Every mount is made by one `mount --all` over that fstab, in its order, instead of
// one process per mount, the first of them the stage onto itself (so that it can be made
// read-only once everything is in it). The workspace's mountpoint is made by its own mount
// (`X-mount.mkdir`, an option mount(8) keeps to itself), after the fixed ones: it is under the
// new /tmp where the host's temp folder is /tmp. A control file is bound only when neither it nor
// .git is a link (nothing runs in these namespaces yet).
const SETUP_SCRIPT = `set -eu
L=$1; B=$2; shift 2
W=$1; S=$2; N=$3; X=$4; D=$5; F=$6; R=$7; U=$8; J=$9; shift 9
if [ "$J" != - ]; then echo 0 > "$J"; fi
if command -v ip >/dev/null; then ip link set lo up 2>/dev/null || true; fi
mount --all --fstab "$X"
if [ -d "$S$W/.git" ] && [ ! -L "$S$W/.git" ]; then
  for c in hooks config; do
    t="$S$W/.git/$c"
    if [ -e "$t" ] && [ ! -L "$t" ]; then mount --bind "$t" "$t"; mount -o remount,bind,ro "$t"; fi
  done
fi
mount -o remount,bind,ro "$S"
P="--no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all"
if [ "$L" = - ]; then exec chroot "$S" setpriv $P -- /bin/sh -c "$R" warrant-limits "$N" "$D" "$F" "$U" "$@"; fi
exec "$L" "$B" chroot "$S" setpriv $P -- /bin/sh -c "$R" warrant-limits "$N" "$D" "$F" "$U" "$@"
`;

/**
 * The new root's fixed mounts as an fstab, in order: the stage bound onto itself, the system
 * folders read-only, the device nodes the skeleton holds, /dev/shm, a new /proc, and a private
 * /tmp of `tmpBytes`.
 */
export function rootFstab(
  stage: string,
  roDirs: readonly string[],
  devices: readonly string[],
  tmpBytes: number,
): string {
  return fstabText(
    inStage(stage, [
      { source: stage, target: "/", type: "none", flags: "", data: "bind" },
      ...roDirs.map((d) => ({ source: d, target: d, type: "none", flags: "", data: "bind,ro" })),
      ...devices.map((n) => ({
        source: `/dev/${n}`,
        target: `/dev/${n}`,
        type: "none",
        flags: "",
        data: "bind",
      })),
      {
        source: "tmpfs",
        target: "/dev/shm",
        type: "tmpfs",
        flags: "",
        data: "mode=1777,nosuid,nodev",
      },
      { source: "proc", target: "/proc", type: "proc", flags: "", data: "nosuid,nodev,noexec" },
      {
        source: "tmpfs",
        target: "/tmp",
        type: "tmpfs",
        flags: "",
        data: `mode=1777,nosuid,nodev,size=${tmpBytes}`,
      },
    ]),
  );
}

/** `mounts` with their targets inside the stage (the new root). */
function inStage(stage: string, mounts: readonly OuterMount[]): OuterMount[] {
  return mounts.map((m) => ({ ...m, target: path.join(stage, m.target) }));
}

/**
 * One command's fstab: the root's fixed mounts (rootFstab's text), then the workspace at its own
 * path inside the stage (its overlay given `mount`, else the environment's folder bound), then
 * `more` (moreMounts: overlays over folders inside the workspace and read-only binds).
 */
export function commandFstab(
  root: string,
  dir: { readonly workspace: string; readonly stage: string },
  mount: string | undefined,
  more: readonly OuterMount[],
): string {
  const workspace: OuterMount =
    mount === undefined
      ? { source: dir.workspace, target: dir.workspace, type: "none", flags: "", data: "bind" }
      : { source: "overlay", target: dir.workspace, type: "overlay", flags: "", data: mount };
  const made = { ...workspace, data: `${workspace.data},X-mount.mkdir` };
  return root + fstabText(inStage(dir.stage, [made, ...more]));
}

/**
 * The root's skeleton on the host: mountpoints, links, and empty files to bind devices onto.
 * Returns the device nodes it holds.
 */
async function buildSkeleton(
  stage: string,
  layout: readonly LayoutEntry[],
  runAs: RunAs | undefined,
): Promise<string[]> {
  const made: string[] = [];
  const dir = async (p: string) => {
    await mkdir(p, { recursive: true });
    made.push(p);
  };
  for (const e of layout) {
    const at = path.join(stage, e.path);
    await dir(path.dirname(at));
    if (e.kind === "symlink") await symlink(e.target, at);
    else await dir(at);
  }
  for (const d of ["dev/shm", "proc", "tmp"]) await dir(path.join(stage, d));
  const devices = DEVICE_NODES.filter((n) => existsSync(`/dev/${n}`));
  for (const n of devices) await writeFile(path.join(stage, "dev", n), "");
  await symlink("/proc/self/fd", path.join(stage, "dev/fd"));
  for (const [i, name] of ["stdin", "stdout", "stderr"].entries()) {
    await symlink(`/proc/self/fd/${i}`, path.join(stage, "dev", name));
  }
  if (runAs !== undefined) {
    for (const p of new Set(made)) await lchown(p, runAs.uid, runAs.gid);
  }
  return devices;
}

/**
 * `env` running `argv` with exactly `vars`, in `folder`: `env -i -C`, or through a shell's `cd`
 * where the program's name holds `=` (which `env` would read as one more variable).
 */
export function inFolder(
  vars: Readonly<Record<string, string>>,
  folder: string,
  argv: readonly string[],
): string[] {
  const assignments = Object.entries(vars).map(([k, v]) => `${k}=${v}`);
  if (!(argv[0] ?? "").includes("="))
    return ["/usr/bin/env", "-i", "-C", folder, "--", ...assignments, ...argv];
  return [
    "/usr/bin/env",
    "-i",
    ...assignments,
    "/bin/sh",
    "-c",
    'cd "$0" && exec "$@"',
    folder,
    ...argv,
  ];
}

/** What every command line of one unshare sandbox shares. */
interface UnshareSandboxParts {
  readonly unshare: string;
  readonly options: BackendOptions;
  readonly runAs: RunAs | undefined;
}

/** The seccomp loader and its program, as copied into an environment's directory. */
interface EnvironmentFilter {
  readonly loader: string;
  readonly program: string;
}

/** What every command of one environment shares. */
interface UnshareEnvironmentParts {
  readonly dir: EnvironmentDir;
  readonly binds: HostBinds;
  readonly resources: ResourceLimits;
  /** The root's fixed mounts (rootFstab's text). */
  readonly rootFstab: string;
  /** Undefined where no filter is loaded (the weaker sandbox). */
  readonly filter: EnvironmentFilter | undefined;
  readonly defaultNproc: number;
  readonly groups: EnvironmentCgroups;
  /** What the workspace's writable layer held before any command: its growth is limited. */
  readonly initialUse: number;
}

/**
 * The loader and its program, in the environment's own directory (which the commands' uid can
 * reach, unlike the package's folder perhaps); both run before the chroot.
 */
async function copyFilter(
  dir: EnvironmentDir,
  loaderPath: string,
  arch: FilterArch,
  opts: EnvironmentOptions,
): Promise<EnvironmentFilter> {
  const filter = {
    loader: path.join(dir.base, "warrant-seccomp"),
    program: path.join(dir.base, "seccomp.bpf"),
  };
  await copyFile(loaderPath, filter.loader);
  await chmod(filter.loader, 0o755);
  await writeFile(
    filter.program,
    seccompProgram(arch, {
      allowUnixSockets: opts.unixSockets === true || opts.network !== undefined,
    }),
    { mode: 0o644 },
  );
  return filter;
}

/**
 * The host-side line of one command (setpriv in front where the host runs commands as another
 * uid): unshare's namespaces around SETUP_SCRIPT and its arguments, then the command in its
 * folder with exactly `env`. RLIMIT_DATA is `-` where a memory cgroup holds the command.
 */
function unshareLine(
  sandbox: UnshareSandboxParts,
  environment: UnshareEnvironmentParts,
  command: {
    readonly argv: readonly string[];
    readonly env: Readonly<Record<string, string>>;
    readonly nproc: string;
    /** The command's fstab (commandFstab), in the environment's directory. */
    readonly fstab: string;
    readonly inCgroup: boolean;
    /** Whether the reporter's shell sets the limits (shellSetsLimits). */
    readonly builtins: boolean;
    /** The chain is started as the commands' uid already: no setpriv in front. */
    readonly spawnedAs: boolean;
    /** The memory cgroup file the setup moves itself in through, if it does. */
    readonly join: string | undefined;
  },
): string[] {
  const { runAs } = sandbox;
  const { dir, resources, filter } = environment;
  const [nproc, data, fsize, builtins] = limitArgs(
    command.nproc,
    command.inCgroup ? undefined : resources.memoryBytes,
    resources.diskBytes,
    command.builtins,
  );
  const line = setprivPrefix(
    sandbox.options.setprivPath ?? "setpriv",
    command.spawnedAs ? undefined : runAs,
  );
  line.push(
    sandbox.unshare,
    "--user",
    "--map-root-user",
    "--mount",
    "--net",
    "--pid",
    "--ipc",
    "--uts",
    "--fork",
    "--kill-child=SIGKILL",
    "--",
    "/bin/sh",
    "-c",
    SETUP_SCRIPT,
    "warrant-sandbox",
    filter?.loader ?? "-",
    filter?.program ?? "-",
    dir.workspace,
    dir.stage,
    nproc as string,
    command.fstab,
    data as string,
    fsize as string,
    UNSHARE_REPORTER,
    builtins as string,
    command.join ?? "-",
    ...inFolder(command.env, dir.workspace, command.argv),
  );
  return line;
}

/**
 * What moves a chain started as the commands' uid into its memory cgroup: a shell that waits for
 * the host's line on stdin (the host writes it once the shell is in), then becomes `argv`.
 */
export const GATE_SCRIPT = 'read -r _ || exit 125; exec "$@"';

/**
 * How one environment runs a command: unshare's line in a memory cgroup where the host has one,
 * the disk watched. The host-side chain and the setup get only PATH; the command gets exactly
 * its scrubbed variables.
 */
function unshareRunner(
  sandbox: UnshareSandboxParts,
  environment: UnshareEnvironmentParts,
): ExecLine {
  const { dir, binds, resources, initialUse } = environment;
  const fstabFile = fstabFiles(dir.base, "command");
  return async (
    argv: readonly string[],
    exec: ExecOptions,
    mount?: string,
    _egress?: string,
    layers: readonly OverlayMount[] = [],
  ): Promise<ExecResult> => {
    const more = moreMounts(binds, mount === undefined ? undefined : layers);
    const env = scrubbedEnv(dir.workspace, exec.env);
    const nproc = String(exec.maxProcesses ?? environment.defaultNproc);
    const cgroup = await environment.groups.take().catch(() => undefined);
    // Without root binds the chain starts as the commands' uid (no setpriv) and joins the cgroup
    // itself: in the setup (a v1 `tasks` file handed to that uid), else in a shell in front, else
    // (v2, another uid) behind GATE_SCRIPT while the host moves it. With root binds the chain
    // starts as root, which joins the cgroup first.
    const plain = binds.rootBinds.length === 0;
    const spawnedAs = plain && sandbox.runAs !== undefined;
    const inSetup = plain && cgroup?.selfJoin === true && cgroup.version === 1;
    const gated = plain && cgroup !== undefined && !cgroup.selfJoin;
    const line = unshareLine(sandbox, environment, {
      argv,
      env,
      nproc,
      fstab: await fstabFile(commandFstab(environment.rootFstab, dir, mount, more)),
      inCgroup: cgroup !== undefined,
      builtins: await shellSetsLimits(),
      spawnedAs,
      join: inSetup ? cgroup?.join : undefined,
    });
    const full = !plain
      ? inCgroup(cgroup, withRootBinds(binds, sandbox.unshare, line))
      : gated
        ? ["/bin/sh", "-c", GATE_SCRIPT, "warrant-gate", ...line]
        : inCgroup(inSetup ? undefined : cgroup, line);
    // The host-side chain and the setup get only PATH; the command gets exactly `env`.
    return runLimited(
      full,
      { PATH: SANDBOX_PATH },
      {
        ...exec,
        enforce: {
          resources,
          cgroup,
          watch: (breach) =>
            watchDisk(writableRoot(dir, binds), initialUse, resources.diskBytes, () =>
              breach({ resource: "disk", bytes: resources.diskBytes, via: "watchdog" }),
            ),
        },
        gate: gated,
        ...(spawnedAs && sandbox.runAs !== undefined ? { spawnAs: sandbox.runAs } : {}),
      },
    );
  };
}

/**
 * Refuses an environment without the seccomp filter (`sandbox/no-seccomp`), unless the weaker
 * sandbox is allowed.
 */
function refuseUnfiltered(status: LoaderStatus, options: BackendOptions): void {
  if ("why" in status && options.allowWeakerSandbox !== true) {
    throw new WarrantError(
      "sandbox/no-seccomp",
      `the unshare backend cannot load its seccomp filter: ${status.why}; without it ${openWithoutFilter()}. Install bubblewrap, build the package where a C compiler is present, or allow the weaker sandbox (--allow-weaker-sandbox)`,
    );
  }
}

export function createUnshareSandbox(options: BackendOptions = {}): Sandbox {
  const unshare = options.unsharePath ?? "unshare";
  const runAs = hostRunAs(options);
  const layout = readOnlyLayout(options.readOnlyPaths);
  const roDirs = layout.filter((e) => e.kind === "ro-dir").map((e) => e.path);
  const host = environmentHost("unshare", options);
  const cgroups = memoryCgroups(options.cgroups !== false, runAs);
  const sandbox: UnshareSandboxParts = { unshare, options, runAs };
  let loader: Promise<LoaderStatus> | undefined;
  const loaderStatus = () => {
    loader ??= checkSeccompLoader(options.seccompLoader);
    return loader;
  };
  return {
    backend: "unshare",
    discardEnvironment: host.discardEnvironment,
    discardEnvironmentAt: host.discardEnvironmentAt,
    environmentMode: host.environmentMode,
    openBaseline: host.openBaseline,
    async seccomp() {
      const status = await loaderStatus();
      return "why" in status ? `${status.why}; without it ${openWithoutFilter()}` : undefined;
    },
    async createEnvironment(baseline: string | Baseline, opts: EnvironmentOptions = {}) {
      const defaultNproc = opts.maxProcesses ?? DEFAULT_MAX_PROCESSES;
      const resources = resourcesOf(opts.resources);
      // The environment's memory cgroups, reused command after command, removed with it.
      const groups = cgroups.forEnvironment(resources.memoryBytes);
      const status = await loaderStatus();
      refuseUnfiltered(status, options);
      const arch = filterArch();
      const filtered = "path" in status && arch !== undefined;
      const env = await host.createEnvironment(
        baseline,
        opts,
        async (dir: EnvironmentDir, binds) => {
          const devices = await buildSkeleton(dir.stage, layout, runAs);
          const initialUse = await diskUse(writableRoot(dir, binds));
          const filter = filtered ? await copyFilter(dir, status.path, arch, opts) : undefined;
          return unshareRunner(sandbox, {
            dir,
            binds,
            resources,
            rootFstab: rootFstab(dir.stage, roDirs, devices, resources.tmpBytes),
            filter,
            defaultNproc,
            groups,
            initialUse,
          });
        },
      );
      return {
        ...env,
        seccomp: filtered,
        async destroy() {
          try {
            return await env.destroy();
          } finally {
            await groups.close();
          }
        },
      };
    },
  };
}
