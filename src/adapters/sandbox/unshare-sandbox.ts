// The util-linux `unshare` backend, for hosts without bubblewrap. Each command runs in fresh user
// (mapped to root), mount, pid, net, ipc and uts namespaces. Read-only strategy: rather than
// remounting the host's tree, a new root is assembled on a tmpfs in the environment's stage
// directory — the system directories bind-mounted and remounted read-only, a private /tmp, a
// minimal /dev, a new /proc, the workspace bound read-write at its host path — the tmpfs itself is
// remounted read-only, and the command is chrooted into it with every capability dropped
// (bounding set included, no_new_privs), so it cannot undo the read-only mounts.
import type {
  Environment,
  EnvironmentOptions,
  ExecOptions,
  ExecResult,
  Sandbox,
} from "../../core/sandbox/sandbox-port.js";
import { DEFAULT_MAX_PROCESSES } from "./bwrap-sandbox.js";
import { runLimited, scrubbedEnv } from "./contained-exec.js";
import { type BackendOptions, hostRunAs, managedEnvironment } from "./managed-environment.js";
import { DEVICE_NODES, readOnlyLayout } from "./root-layout.js";

// Arguments: workspace, stage, nproc, count of layout triples, the triples (kind path target),
// then the command's argv. Runs as root of the new user namespace, pid 1 of the new pid namespace.
const SETUP_SCRIPT = `set -eu
W=$1; S=$2; N=$3; K=$4; shift 4
mount --make-rprivate /
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$S"
i=0
while [ "$i" -lt "$K" ]; do
  kind=$1; p=$2; t=$3; shift 3; i=$((i+1))
  if [ "$kind" = l ]; then
    mkdir -p "$S$(dirname "$p")"; ln -s "$t" "$S$p"
  else
    mkdir -p "$S$p"; mount --bind "$p" "$S$p"; mount -o remount,bind,ro "$S$p"
  fi
done
mkdir -p "$S/dev/shm" "$S/proc" "$S/tmp"
for n in ${DEVICE_NODES.join(" ")}; do
  if [ -e "/dev/$n" ]; then touch "$S/dev/$n"; mount --bind "/dev/$n" "$S/dev/$n" || rm -f "$S/dev/$n"; fi
done
ln -s /proc/self/fd "$S/dev/fd"; ln -s /proc/self/fd/0 "$S/dev/stdin"
ln -s /proc/self/fd/1 "$S/dev/stdout"; ln -s /proc/self/fd/2 "$S/dev/stderr"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$S/dev/shm"
mount -t proc -o nosuid,nodev,noexec proc "$S/proc"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$S/tmp"
mkdir -p "$S$W"
mount --bind "$W" "$S$W"
mount -o remount,ro,nosuid,nodev tmpfs "$S"
exec chroot "$S" setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- prlimit --nproc="$N:$N" -- /bin/sh -c 'cd "$0" && exec "$@"' "$W" "$@"
`;

export function createUnshareSandbox(options: BackendOptions = {}): Sandbox {
  const unshare = options.unsharePath ?? "unshare";
  const runAs = hostRunAs(options);
  const layout = readOnlyLayout(options.readOnlyPaths);
  const triples = layout.flatMap((e) =>
    e.kind === "symlink" ? ["l", e.path, e.target] : ["d", e.path, "-"],
  );
  return {
    backend: "unshare",
    async createEnvironment(
      baselineDir: string,
      opts: EnvironmentOptions = {},
    ): Promise<Environment> {
      const defaultNproc = opts.maxProcesses ?? DEFAULT_MAX_PROCESSES;
      return managedEnvironment("unshare", baselineDir, runAs, options, (dir) => {
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
          const nproc = String(exec.maxProcesses ?? defaultNproc);
          line.push(
            unshare,
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
            dir.workspace,
            dir.stage,
            nproc,
            String(layout.length),
            ...triples,
            ...argv,
          );
          // The setup needs the sbin directories on PATH; the command inherits exactly `env`.
          return runLimited(line, env, exec);
        };
      });
    },
  };
}
