// The bubblewrap backend: each command runs in fresh user, mount, pid, net, ipc, uts and cgroup
// namespaces over a root assembled by bwrap (see root-layout.ts), as an unprivileged uid. In
// overlay mode bwrap (0.8 has no --overlay) is started inside a user and mount namespace of its
// own where the environment's overlay is mounted at the workspace path, which bwrap then binds;
// with `warrant-outer`, in its environment's network namespace instead of a new one
// (environment-netns.ts).
// Every command also gets its resource limits (resource-limits.ts), a /tmp of `tmpBytes`, the
// seccomp filter (seccomp-filter.ts) and the control files bound read-only (control-files.ts).
import { openSync, writeFileSync } from "node:fs";
import { chmod, copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import type {
  Baseline,
  EnvironmentOptions,
  ExecOptions,
  ExecResult,
  LimitHit,
  ResourceLimits,
  Sandbox,
} from "../../core/ports/sandbox.js";
import { runLimited, SANDBOX_PATH, scrubbedEnv } from "./contained-exec.js";
import { controlHandles } from "./control-files.js";
import { EGRESS_SANDBOX_DIR, EGRESS_SOCKET_NAME } from "./egress-relay.js";
import type { EnvironmentDir, RunAs } from "./environment-dir.js";
import { type EnvironmentNetns, makeEnvironmentNetns } from "./environment-netns.js";
import { type HostBinds, type OverlayMount, withRootBinds, writableRoot } from "./host-binds.js";
import {
  type BackendOptions,
  commandIds,
  type ExecLine,
  environmentHost,
  hostRunAs,
} from "./managed-environment.js";
import {
  defaultOuterHelper,
  fstabFiles,
  fstabText,
  helperLine,
  helperRuns,
  type OuterMount,
  shellLine,
  shellSetsLimits,
} from "./outer-shell.js";
import { mountThen, setprivPrefix } from "./overlay-mount.js";
import {
  diskUse,
  type EnvironmentCgroups,
  inCgroup,
  memoryCgroups,
  reporterLine,
  resourcesOf,
  watchDisk,
} from "./resource-limits.js";
import { type LayoutEntry, readOnlyLayout } from "./root-layout.js";
import { type FilterArch, filterArch, seccompProgram } from "./seccomp-filter.js";

export const DEFAULT_MAX_PROCESSES = 256;

/**
 * What an environment with network (`EnvironmentOptions.network`) needs inside the sandbox, on
 * both backends, for a system-call filter to allow: the egress relay (`node`, egress-relay.ts)
 * opens an `AF_INET` `SOCK_STREAM` listener on 127.0.0.1 (and the command connects to it), and
 * for each such connection one `AF_UNIX` `SOCK_STREAM` socket `connect`ed to the proxy's socket
 * at `/run/warrant/egress.sock` (bound read-only from the host). No other `AF_UNIX` socket, and
 * no `AF_UNIX` socket at all without network.
 */
export const EGRESS_RELAY_NEEDS = {
  sandboxDir: EGRESS_SANDBOX_DIR,
  socket: `${EGRESS_SANDBOX_DIR}/${EGRESS_SOCKET_NAME}`,
  unixSockets: ["AF_UNIX/SOCK_STREAM connect"],
  inetSockets: ["AF_INET/SOCK_STREAM 127.0.0.1 listen+connect"],
} as const;

/** bwrap's `--unshare-all` (0.8) without `--unshare-net`. */
const ALL_BUT_NET = [
  "--unshare-user",
  "--unshare-ipc",
  "--unshare-pid",
  "--unshare-uts",
  "--unshare-cgroup-try",
];

/** What every command line of one bwrap sandbox shares. */
interface BwrapSandboxParts {
  readonly bwrap: string;
  readonly options: BackendOptions;
  readonly runAs: RunAs | undefined;
  /** The ids a command keeps under the overlay's namespace (commandIds). */
  readonly ids: RunAs;
  readonly layout: readonly LayoutEntry[];
}

/** What every command of one environment shares. */
interface BwrapEnvironmentParts {
  readonly dir: EnvironmentDir;
  readonly binds: HostBinds;
  readonly resources: ResourceLimits;
  /** The seccomp filter's file; undefined where no filter is written for this architecture. */
  readonly filter: string | undefined;
  readonly defaultNproc: number;
  readonly groups: EnvironmentCgroups;
  /** What the workspace's writable layer held before any command: its growth is limited. */
  readonly initialUse: number;
  /**
   * In overlay mode without root binds, the outer steps (outer-shell.ts): the empty folder each
   * command's /tmp is mounted over in its own mount namespace, and `warrant-outer` copied into the
   * environment's directory (undefined: the shell's steps instead).
   */
  readonly outer:
    | {
        readonly tmp: string;
        readonly helper: () => Promise<string | undefined>;
        /**
         * The environment's network namespace, which `warrant-outer` joins (environment-netns.ts):
         * made by `helper` for the first command; undefined where it could not be.
         */
        readonly netns: (helper: string) => Promise<EnvironmentNetns | undefined>;
      }
    | undefined;
}

/**
 * The environment's seccomp filter, written in its directory where this architecture has one
 * (then its path, else undefined).
 */
function writeFilter(
  dir: EnvironmentDir,
  arch: FilterArch | undefined,
  opts: EnvironmentOptions,
): string | undefined {
  const filter = path.join(dir.base, "seccomp.bpf");
  if (arch === undefined) return undefined;
  writeFileSync(
    filter,
    // The egress relay connects to the proxy's unix socket (EGRESS_RELAY_NEEDS): a pack
    // granted network gets AF_UNIX sockets; one without keeps them denied.
    seccompProgram(arch, {
      allowUnixSockets: opts.unixSockets === true || opts.network !== undefined,
    }),
    {
      mode: 0o600,
    },
  );
  return filter;
}

/**
 * bwrap's command line up to the command (setpriv in front where the host runs commands as
 * another uid, outside overlay mode): the namespaces, the command's variables, the read-only
 * root, /dev, /proc, the sized /tmp, the workspace and its binds, the seccomp filter at fd 4 and
 * the control files' handles after it (their descriptors pushed onto `command.fds`, which the
 * caller hands over from fd 4).
 */
function bwrapLine(
  sandbox: BwrapSandboxParts,
  environment: BwrapEnvironmentParts,
  command: {
    readonly env: Readonly<Record<string, string>>;
    readonly mount: string | undefined;
    readonly egress: string | undefined;
    readonly fds: number[];
    /** Where the outer shell mounted the command's /tmp (outer-shell.ts), if it did. */
    readonly outerTmp?: string;
    /** bwrap runs in the environment's network namespace (environment-netns.ts): none of its own. */
    readonly sharedNet?: boolean;
  },
): string[] {
  const { runAs, ids } = sandbox;
  const { dir, binds, resources, filter } = environment;
  const { mount, egress, fds, outerTmp } = command;
  const line = setprivPrefix(
    sandbox.options.setprivPath ?? "setpriv",
    mount === undefined ? runAs : undefined,
  );
  // In the environment's network namespace: --unshare-all less the network.
  line.push(sandbox.bwrap, ...(command.sharedNet === true ? ALL_BUT_NET : ["--unshare-all"]));
  // Behind the outer shell, bwrap's init is the namespace's pid 1 and the command its child.
  // Otherwise the limits reporter is pid 1 (no reaper of bwrap's in front of it): a command
  // cannot stop, kill or (with the filter) trace the process that reports on it.
  if (outerTmp === undefined) line.push("--as-pid-1");
  line.push("--die-with-parent", "--new-session", "--clearenv");
  // Under the overlay's namespace the caller is its root: the command keeps its own ids.
  if (mount !== undefined) line.push("--uid", String(ids.uid), "--gid", String(ids.gid));
  for (const [k, v] of Object.entries(command.env)) line.push("--setenv", k, v);
  for (const e of sandbox.layout) {
    if (e.kind === "symlink") line.push("--symlink", e.target, e.path);
    else line.push("--ro-bind", e.path, e.path);
  }
  // With network: the egress proxy's socket and the relay, read-only (see EGRESS_RELAY_NEEDS).
  if (egress !== undefined) line.push("--ro-bind", egress, EGRESS_SANDBOX_DIR);
  line.push("--dev", "/dev", "--proc", "/proc");
  if (outerTmp === undefined) line.push("--size", String(resources.tmpBytes), "--tmpfs", "/tmp");
  else line.push("--bind", outerTmp, "/tmp");
  line.push("--bind", dir.workspace, dir.workspace);
  // Dependencies (copy mode: read-only; overlay mode: mounted with the workspace, below)
  // and toolchains, from the host or their stand-ins (host-binds.ts).
  if (mount === undefined)
    for (const d of binds.dependencies) line.push("--ro-bind", d.source, d.target);
  for (const t of binds.toolchains) line.push("--ro-bind", t.source, t.target);
  // fd 3 is the limits reporter's; the filter is fd 4, the control files' handles follow.
  if (filter !== undefined) {
    fds.push(openSync(filter, "r"));
    line.push("--seccomp", "4");
  }
  for (const c of controlHandles(dir.upper, dir.lower)) {
    line.push("--ro-bind-fd", String(4 + fds.length), path.join(dir.workspace, c.path));
    fds.push(c.fd);
  }
  line.push("--remount-ro", "/");
  line.push("--chdir", dir.workspace, "--hostname", "warrant");
  return line;
}

/**
 * The mounts of one overlay-mode command's outer steps: the workspace's overlay, the dependency
 * overlays over folders inside it (in order), and the command's /tmp of `tmpBytes`.
 */
export function outerMounts(
  dir: EnvironmentDir,
  mount: string,
  layers: readonly OverlayMount[],
  tmp: string,
  tmpBytes: number,
): OuterMount[] {
  const overlay = (target: string, data: string) => ({
    source: "overlay",
    target,
    type: "overlay",
    flags: "",
    data,
  });
  return [
    overlay(dir.workspace, mount),
    ...layers.map((l) => overlay(l.target, l.options)),
    {
      source: "tmpfs",
      target: tmp,
      type: "tmpfs",
      flags: "nosuid,nodev",
      data: `mode=1777,size=${tmpBytes}`,
    },
  ];
}

/**
 * How one environment runs a command. In overlay mode without root binds: the outer steps
 * (outer-shell.ts) in a user and mount namespace of the command's own, started as the commands'
 * uid, the host moving them into the memory cgroup. Otherwise bwrap's line (in overlay mode
 * started where the overlay is mounted at the workspace path) with the limits reporter in front
 * of the command, in a memory cgroup where the host has one. The disk is watched either way.
 */
function bwrapRunner(sandbox: BwrapSandboxParts, environment: BwrapEnvironmentParts): ExecLine {
  const { options, runAs } = sandbox;
  const { dir, binds, resources, initialUse } = environment;
  const fstabFile = fstabFiles(dir.base, "outer");
  return async (
    argv: readonly string[],
    exec: ExecOptions,
    mount?: string,
    egress?: string,
    layers: readonly OverlayMount[] = [],
  ): Promise<ExecResult> => {
    const env = scrubbedEnv(dir.workspace, exec.env);
    const fds: number[] = [];
    // Set in overlay mode only, where `mount` is given.
    const outer = environment.outer;
    const nproc = String(exec.maxProcesses ?? environment.defaultNproc);
    const cgroup = await environment.groups.take().catch(() => undefined);
    const enforce = {
      resources,
      cgroup,
      watch: (breach: (hit: LimitHit) => void) =>
        watchDisk(writableRoot(dir, binds), initialUse, resources.diskBytes, () =>
          breach({ resource: "disk", bytes: resources.diskBytes, via: "watchdog" }),
        ),
    };
    if (mount !== undefined && outer !== undefined) {
      const helper = await outer.helper();
      const netns = helper === undefined ? undefined : await outer.netns(helper);
      const line = bwrapLine(sandbox, environment, {
        env,
        mount,
        egress,
        fds,
        outerTmp: outer.tmp,
        sharedNet: netns !== undefined,
      });
      line.push("--", ...argv);
      const mounts = outerMounts(dir, mount, layers, outer.tmp, resources.tmpBytes);
      const command = {
        gate: cgroup !== undefined && !cgroup.selfJoin,
        join: cgroup?.selfJoin === true ? cgroup.join : undefined,
        nproc,
        dataBytes: cgroup === undefined ? resources.memoryBytes : undefined,
        resources,
      };
      // The program is handed fd 3, `fds` from 4, then the namespaces (`lent`), and closes the rest.
      const lent = netns === undefined ? [] : [netns.user, netns.net];
      const last = 3 + fds.length + lent.length;
      const full =
        helper !== undefined
          ? helperLine(helper, command, mounts, line, {
              keep: last,
              ...(netns === undefined ? {} : { netns: [last - 1, last] as const }),
            })
          : shellLine(
              options.unsharePath ?? "unshare",
              command,
              await fstabFile(fstabText(mounts)),
              await shellSetsLimits(),
              line,
            );
      return runLimited(
        full,
        { PATH: SANDBOX_PATH },
        {
          ...exec,
          fds,
          lent,
          closesInherited: helper !== undefined,
          enforce,
          gate: command.gate,
          statusTmp: outer.tmp,
          ...(runAs === undefined ? {} : { spawnAs: runAs }),
        },
      );
    }
    const line = bwrapLine(sandbox, environment, { env, mount, egress, fds });
    line.push("--", ...reporterLine(nproc, resources, cgroup !== undefined, argv));
    // In overlay mode bwrap starts where the overlay is mounted at the workspace path.
    const full =
      mount === undefined
        ? line
        : mountThen(
            {
              unsharePath: options.unsharePath ?? "unshare",
              setprivPath: options.setprivPath ?? "setpriv",
              runAs,
            },
            mount,
            dir.workspace,
            line,
            layers,
          );
    // bwrap itself gets no host variables either.
    return runLimited(
      inCgroup(cgroup, withRootBinds(binds, options.unsharePath ?? "unshare", full)),
      { PATH: SANDBOX_PATH },
      { ...exec, fds, enforce },
    );
  };
}

export function createBwrapSandbox(options: BackendOptions = {}): Sandbox {
  const bwrap = options.bwrapPath ?? "bwrap";
  const runAs = hostRunAs(options);
  const layout = readOnlyLayout(options.readOnlyPaths);
  const host = environmentHost("bwrap", options);
  const ids = commandIds(runAs);
  const cgroups = memoryCgroups(options.cgroups !== false, runAs);
  const arch = filterArch();
  const sandbox: BwrapSandboxParts = { bwrap, options, runAs, ids, layout };
  const helper = options.outerHelper === undefined ? defaultOuterHelper() : options.outerHelper;
  /** Whether the helper runs here, proven once, from the first environment's copy to run it. */
  let helperWorks: Promise<boolean> | undefined;
  /** Whether its commands can join an environment's namespaces here, proven once likewise. */
  let joinWorks: Promise<boolean> | undefined;
  /**
   * An environment's network namespace (environment-netns.ts), where commands can join it: where
   * they cannot (a policy that lets a process make namespaces but not join them), none, and each
   * command makes its own as before.
   */
  const environmentNetns = async (helper: string) => {
    if (joinWorks !== undefined && !(await joinWorks)) return undefined;
    const made = await makeEnvironmentNetns(helper, runAs);
    if (made === undefined) return undefined;
    joinWorks ??= helperRuns(helper, runAs, made);
    if (await joinWorks) return made;
    made.close();
    return undefined;
  };
  /**
   * `warrant-outer` copied into the environment's directory (which the commands' uid can reach),
   * while the environment is made; what its commands use: the copy once proven to run here.
   */
  const outerHelperIn = async (dir: EnvironmentDir): Promise<() => Promise<string | undefined>> => {
    const none = async () => undefined;
    if (helper === undefined || helper === null) return none;
    const copy = path.join(dir.base, "warrant-outer");
    try {
      await copyFile(helper, copy);
      await chmod(copy, 0o755);
    } catch {
      return none;
    }
    return async () => {
      helperWorks ??= helperRuns(copy, runAs);
      return (await helperWorks) ? copy : undefined;
    };
  };
  return {
    backend: "bwrap",
    discardEnvironment: host.discardEnvironment,
    discardEnvironmentAt: host.discardEnvironmentAt,
    environmentMode: host.environmentMode,
    openBaseline: host.openBaseline,
    seccomp: async () =>
      arch === undefined ? `no filter is written for ${process.arch}` : undefined,
    async createEnvironment(baseline: string | Baseline, opts: EnvironmentOptions = {}) {
      const defaultNproc = opts.maxProcesses ?? DEFAULT_MAX_PROCESSES;
      const resources = resourcesOf(opts.resources);
      // The environment's memory cgroups, reused command after command, removed with it.
      const groups = cgroups.forEnvironment(resources.memoryBytes);
      /** The environment's network namespace, once its first command asked for it. */
      let netns: Promise<EnvironmentNetns | undefined> | undefined;
      const env = await host.createEnvironment(baseline, opts, async (dir, binds) => {
        // What the workspace's writable layer holds before any command: its growth is limited.
        const initialUse = await diskUse(writableRoot(dir, binds));
        const filter = writeFilter(dir, arch, opts);
        let outer: BwrapEnvironmentParts["outer"];
        if (dir.mode === "overlay" && binds.rootBinds.length === 0) {
          const tmp = path.join(dir.base, "outer-tmp");
          await mkdir(tmp, { mode: 0o755 });
          outer = {
            tmp,
            helper: await outerHelperIn(dir),
            netns: (helper) => {
              netns ??= environmentNetns(helper);
              return netns;
            },
          };
        }
        return bwrapRunner(sandbox, {
          outer,
          dir,
          binds,
          resources,
          filter,
          defaultNproc,
          groups,
          initialUse,
        });
      });
      return {
        ...env,
        seccomp: arch !== undefined,
        async destroy() {
          try {
            return await env.destroy();
          } finally {
            await groups.close();
            (await netns)?.close();
          }
        },
      };
    },
  };
}
