// The bubblewrap backend: each command runs in fresh user, mount, pid, net, ipc, uts and cgroup
// namespaces over a root assembled by bwrap (see root-layout.ts), as an unprivileged uid.
import type {
  EnvironmentOptions,
  ExecOptions,
  ExecResult,
  Sandbox,
} from "../../core/sandbox/sandbox-port.js";
import { runLimited, SANDBOX_PATH, scrubbedEnv } from "./contained-exec.js";
import {
  type BackendOptions,
  discardEnvironment,
  hostRunAs,
  managedEnvironment,
} from "./managed-environment.js";
import { readOnlyLayout } from "./root-layout.js";

export const DEFAULT_MAX_PROCESSES = 256;

export function createBwrapSandbox(options: BackendOptions = {}): Sandbox {
  const bwrap = options.bwrapPath ?? "bwrap";
  const runAs = hostRunAs(options);
  const layout = readOnlyLayout(options.readOnlyPaths);
  return {
    backend: "bwrap",
    discardEnvironment: (name: string) => discardEnvironment(options, name),
    async createEnvironment(baselineDir: string, opts: EnvironmentOptions = {}) {
      const defaultNproc = opts.maxProcesses ?? DEFAULT_MAX_PROCESSES;
      return managedEnvironment("bwrap", baselineDir, runAs, options, opts.name, (dir) => {
        return (argv: readonly string[], exec: ExecOptions): Promise<ExecResult> => {
          const env = scrubbedEnv(dir.workspace, exec.env);
          const line: string[] = [];
          if (runAs !== undefined) {
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
          for (const [k, v] of Object.entries(env)) line.push("--setenv", k, v);
          for (const e of layout) {
            if (e.kind === "symlink") line.push("--symlink", e.target, e.path);
            else line.push("--ro-bind", e.path, e.path);
          }
          line.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
          line.push("--bind", dir.workspace, dir.workspace, "--remount-ro", "/");
          line.push("--chdir", dir.workspace, "--hostname", "warrant");
          const nproc = String(exec.maxProcesses ?? defaultNproc);
          line.push("--", "prlimit", `--nproc=${nproc}:${nproc}`, "--", ...argv);
          // bwrap itself gets no host variables either.
          return runLimited(line, { PATH: SANDBOX_PATH }, exec);
        };
      });
    },
  };
}
