// The bubblewrap backend: each command runs in fresh user, mount, pid, net, ipc, uts and cgroup
// namespaces over a root assembled by bwrap (see root-layout.ts), as an unprivileged uid. In
// overlay mode bwrap (0.8 has no --overlay) is started inside a user and mount namespace of its
// own where the environment's overlay is mounted at the workspace path, which bwrap then binds.
import type {
  Baseline,
  EnvironmentOptions,
  ExecOptions,
  ExecResult,
  Sandbox,
} from "../../core/sandbox/sandbox-port.js";
import { runLimited, SANDBOX_PATH, scrubbedEnv } from "./contained-exec.js";
import { EGRESS_SANDBOX_DIR, EGRESS_SOCKET_NAME } from "./egress-relay.js";
import {
  type BackendOptions,
  commandIds,
  environmentHost,
  hostRunAs,
} from "./managed-environment.js";
import { mountThen } from "./overlay-mount.js";
import { readOnlyLayout } from "./root-layout.js";

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

export function createBwrapSandbox(options: BackendOptions = {}): Sandbox {
  const bwrap = options.bwrapPath ?? "bwrap";
  const runAs = hostRunAs(options);
  const layout = readOnlyLayout(options.readOnlyPaths);
  const host = environmentHost("bwrap", options);
  const ids = commandIds(runAs);
  return {
    backend: "bwrap",
    discardEnvironment: host.discardEnvironment,
    environmentMode: host.environmentMode,
    openBaseline: host.openBaseline,
    async createEnvironment(baseline: string | Baseline, opts: EnvironmentOptions = {}) {
      const defaultNproc = opts.maxProcesses ?? DEFAULT_MAX_PROCESSES;
      return host.createEnvironment(baseline, opts, (dir) => {
        return (
          argv: readonly string[],
          exec: ExecOptions,
          mount?: string,
          egress?: string,
        ): Promise<ExecResult> => {
          const env = scrubbedEnv(dir.workspace, exec.env);
          const line: string[] = [];
          if (runAs !== undefined && mount === undefined) {
            line.push(
              options.setprivPath ?? "setpriv",
              "--reuid",
              String(runAs.uid),
              "--regid",
              String(runAs.gid),
              "--clear-groups",
              "--",
            );
          }
          line.push(bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv");
          // Under the overlay's namespace the caller is its root: the command keeps its own ids.
          if (mount !== undefined) line.push("--uid", String(ids.uid), "--gid", String(ids.gid));
          for (const [k, v] of Object.entries(env)) line.push("--setenv", k, v);
          for (const e of layout) {
            if (e.kind === "symlink") line.push("--symlink", e.target, e.path);
            else line.push("--ro-bind", e.path, e.path);
          }
          // With network: the egress proxy's socket and the relay, read-only (see EGRESS_RELAY_NEEDS).
          if (egress !== undefined) line.push("--ro-bind", egress, EGRESS_SANDBOX_DIR);
          line.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
          line.push("--bind", dir.workspace, dir.workspace, "--remount-ro", "/");
          line.push("--chdir", dir.workspace, "--hostname", "warrant");
          const nproc = String(exec.maxProcesses ?? defaultNproc);
          line.push("--", "prlimit", `--nproc=${nproc}:${nproc}`, "--", ...argv);
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
                );
          // bwrap itself gets no host variables either.
          return runLimited(full, { PATH: SANDBOX_PATH }, exec);
        };
      });
    },
  };
}
