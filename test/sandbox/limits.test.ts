// Resource limits, the seccomp filter and the read-only control files, on every backend this
// machine has (docs/spec/containment.md). Most tests lower the limits so that a breach costs a few
// megabytes; one runs at the defaults. A backend that fails its probe is skipped with the reason,
// unless WARRANT_REQUIRE_BACKENDS names it.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { memoryCgroups } from "../../src/adapters/sandbox/resource-limits.js";
import {
  DEFAULT_RESOURCES,
  type Environment,
  type EnvironmentOptions,
  type ExecOptions,
  type Sandbox,
} from "../../src/core/ports/sandbox.js";

const required = new Set((process.env.WARRANT_REQUIRE_BACKENDS ?? "").split(",").filter(Boolean));
const LIMITS: ExecOptions = { timeoutMs: 60_000, maxOutputBytes: 1 << 16 };
const MiB = 1 << 20;
const small = { memoryBytes: 64 * MiB, tmpBytes: 8 * MiB, diskBytes: 16 * MiB };
// This host can hold memory with a cgroup (the limit is then seen and recorded) or only with
// RLIMIT_DATA (the allocation fails inside the command; nothing to record).
const cgroupParent = await memoryCgroups(true).parent();
const cgroupHere = cgroupParent !== undefined;
/** This process's memory cgroups under the parent. */
const ownCgroups = () =>
  readdirSync((cgroupParent as { dir: string }).dir).filter((n) =>
    n.startsWith(`warrant-${process.pid}-`),
  );

// bwrap twice: with its overlay commands' outer steps in warrant-outer (the default where it was
// built) and in the shell (`outerHelper: null`, as where no C compiler was at build time).
const VARIANTS = [
  { backend: "bwrap", label: "bwrap", options: {} },
  { backend: "bwrap", label: "bwrap, outer steps in the shell", options: { outerHelper: null } },
  { backend: "unshare", label: "unshare", options: {} },
] as const;

for (const { backend, label, options } of VARIANTS) {
  const found = await detectSandbox({ only: backend, ...options });
  const reason = found.ok ? "" : (found.errors[0]?.message ?? "probe failed");
  if (!found.ok && required.has(backend)) {
    it(`${label} is required here and works`, () => expect(reason).toBe(""));
  }
  const sandbox = found.ok ? found.value : undefined;
  describe.skipIf(sandbox === undefined)(
    `resource limits and defense in depth: ${label}${sandbox === undefined ? ` (skipped: ${reason})` : ""}`,
    () => {
      let work: string;
      let baseline: string;
      const envs: Environment[] = [];
      const fresh = async (opts: EnvironmentOptions = {}) => {
        const env = await (sandbox as Sandbox).createEnvironment(baseline, opts);
        envs.push(env);
        return env;
      };
      beforeAll(() => {
        work = mkdtempSync(path.join(tmpdir(), "warrant-limits-"));
        baseline = path.join(work, "baseline");
        mkdirSync(path.join(baseline, ".git/hooks"), { recursive: true });
        writeFileSync(path.join(baseline, ".git/config"), "[core]\n");
        writeFileSync(path.join(baseline, ".git/HEAD"), "ref: refs/heads/main\n");
        writeFileSync(path.join(baseline, ".git/hooks/pre-commit.sample"), "#!/bin/sh\n");
        writeFileSync(path.join(baseline, "a.txt"), "a\n");
      });
      afterEach(async () => {
        for (const env of envs.splice(0)) await env.destroy();
      });
      afterAll(() => rmSync(work, { recursive: true, force: true }));

      it("a command within its limits runs and reports no limit", async () => {
        const env = await fresh({ resources: small });
        const r = await env.exec(
          [
            "sh",
            "-c",
            "head -c 1048576 /dev/zero > /tmp/x && head -c 1048576 /dev/zero > w && echo ok",
          ],
          LIMITS,
        );
        expect(r.stdout).toBe("ok\n");
        expect(r.exitCode).toBe(0);
        expect(r.limit).toBeUndefined();
      });

      it("/tmp is a tmpfs of tmpBytes: writing past it fails and is reported as the tmp limit", async () => {
        const env = await fresh({ resources: small });
        const r = await env.exec(
          ["sh", "-c", "head -c 33554432 /dev/zero > /tmp/big; echo rc=$?; stat -f -c %b /tmp"],
          LIMITS,
        );
        expect(r.stdout).toMatch(/^rc=1\n/);
        expect(r.limit).toEqual({ resource: "tmp", bytes: small.tmpBytes, via: "tmpfs" });
      });

      it("a file past diskBytes is stopped (RLIMIT_FSIZE) and reported as the disk limit", async () => {
        const env = await fresh({ resources: small });
        const r = await env.exec(["sh", "-c", "head -c 33554432 /dev/zero > big"], LIMITS);
        expect(r.exitCode).not.toBe(0);
        expect(r.limit).toMatchObject({ resource: "disk", bytes: small.diskBytes });
        const size = await env.exec(["stat", "-c", "%s", "big"], LIMITS);
        expect(Number(size.stdout)).toBeLessThanOrEqual(small.diskBytes);
      });

      it("many files past diskBytes together: the watchdog kills the command", async () => {
        const env = await fresh({ resources: small });
        // Each file stays under the per-file limit; together they pass it. The loop would run
        // for its whole time limit if nothing stopped it.
        const r = await env.exec(
          [
            "sh",
            "-c",
            "i=0; while :; do head -c 4194304 /dev/urandom > f$i || exit 9; i=$((i+1)); sleep 0.05; done",
          ],
          LIMITS,
        );
        expect(r.timedOut).toBe(false);
        expect(r.limit).toEqual({ resource: "disk", bytes: small.diskBytes, via: "watchdog" });
      });

      it.skipIf(!cgroupHere)(
        `memory past memoryBytes: the command is killed and the memory limit reported${cgroupHere ? "" : " (skipped: no writable memory cgroup here; see the RLIMIT_DATA test)"}`,
        async () => {
          const env = await fresh({ resources: small });
          const r = await env.exec(
            [
              "python3",
              "-c",
              "b = bytearray(200 * 1024 * 1024)\nb[::4096] = b'x' * len(b[::4096])\nprint('kept')",
            ],
            LIMITS,
          );
          expect(r.stdout).not.toContain("kept");
          expect(r.limit).toEqual({ resource: "memory", bytes: small.memoryBytes, via: "cgroup" });
        },
      );

      it.skipIf(!cgroupHere)(
        `one memory cgroup per environment: reused command after command, an OOM kill counted for its own command only, removed with the environment${cgroupHere ? "" : " (skipped: no writable memory cgroup here)"}`,
        async () => {
          const before = ownCgroups();
          const env = await (sandbox as Sandbox).createEnvironment(baseline, { resources: small });
          try {
            const hog = await env.exec(
              [
                "python3",
                "-c",
                "b = bytearray(200 * 1024 * 1024)\nb[::4096] = b'x' * len(b[::4096])",
              ],
              LIMITS,
            );
            expect(hog.limit?.via).toBe("cgroup");
            const made = ownCgroups().filter((n) => !before.includes(n));
            expect(made).toHaveLength(1);
            const next = await env.exec(["true"], LIMITS);
            expect(next.exitCode).toBe(0);
            expect(next.limit).toBeUndefined();
            expect(ownCgroups().filter((n) => !before.includes(n))).toEqual(made);
          } finally {
            await env.destroy();
          }
          expect(ownCgroups().filter((n) => !before.includes(n))).toEqual([]);
        },
      );

      it("without a cgroup RLIMIT_DATA refuses the allocation inside the command", async () => {
        const sb = await detectSandbox({ only: backend, ...options, cgroups: false });
        if (!sb.ok) throw new Error("the backend probed fine a moment ago");
        const env = await sb.value.createEnvironment(baseline, { resources: small });
        envs.push(env);
        const r = await env.exec(
          ["python3", "-c", "b = bytearray(200 * 1024 * 1024)\nprint('kept')"],
          LIMITS,
        );
        expect(r.stdout).not.toContain("kept");
        expect(r.stderr).toContain("MemoryError");
        expect(r.exitCode).not.toBe(0);
      });

      it("at the default limits: 3 GB of memory and 2 GiB of /tmp or workspace are stopped", async () => {
        // One environment per breach: a workspace left over its disk limit stops every later
        // command there (a run stops at the first breach anyway).
        const env = await fresh();
        const tmp = await env.exec(["sh", "-c", "head -c 2147483648 /dev/zero > /tmp/big"], LIMITS);
        expect(tmp.limit).toEqual({
          resource: "tmp",
          bytes: DEFAULT_RESOURCES.tmpBytes,
          via: "tmpfs",
        });
        const disk = await env.exec(["sh", "-c", "head -c 2147483648 /dev/zero > big"], LIMITS);
        expect(disk.limit).toMatchObject({ resource: "disk", bytes: DEFAULT_RESOURCES.diskBytes });
        const mem = await (await fresh()).exec(
          ["python3", "-c", "b = b'x' * (3 * 1024 ** 3)\nprint('kept')"],
          LIMITS,
        );
        expect(mem.stdout).not.toContain("kept");
        expect(mem.exitCode).not.toBe(0);
        if (cgroupHere) {
          expect(mem.limit).toEqual({
            resource: "memory",
            bytes: DEFAULT_RESOURCES.memoryBytes,
            via: "cgroup",
          });
        } else expect(mem.stderr).toContain("MemoryError");
      });

      it(".git/hooks and .git/config are read-only inside; the rest of the workspace is writable", async () => {
        const env = await fresh();
        const r = await env.exec(
          [
            "sh",
            "-c",
            "echo x > .git/hooks/x && echo hook-written; echo y >> .git/config && echo config-written; " +
              "echo z > .git/HEAD && echo head-written; echo w > a.txt && echo a-written; cat .git/config",
          ],
          LIMITS,
        );
        expect(r.stdout).toBe("head-written\na-written\n[core]\n");
        expect(r.stderr).toMatch(/Read-only file system/);
        const hooks = await env.exec(["ls", ".git/hooks"], LIMITS);
        expect(hooks.stdout).toBe("pre-commit.sample\n");
        expect(readFileSync(path.join(baseline, ".git/config"), "utf8")).toBe("[core]\n");
      });

      const denied = [
        ["io_uring_setup", "libc.syscall(nr('io_uring_setup'), 1, 0)"],
        ["ptrace", "libc.syscall(nr('ptrace'), 16, 1, 0, 0)"],
        ["process_vm_readv", "libc.syscall(nr('process_vm_readv'), 1, 0, 0, 0, 0, 0)"],
        ["process_vm_writev", "libc.syscall(nr('process_vm_writev'), 1, 0, 0, 0, 0, 0)"],
        ["perf_event_open", "libc.syscall(nr('perf_event_open'), 0, 0, -1, -1, 0)"],
        ["bpf", "libc.syscall(nr('bpf'), 0, 0, 0)"],
        ["userfaultfd", "libc.syscall(nr('userfaultfd'), 0)"],
        ["keyctl", "libc.syscall(nr('keyctl'), 0, 0)"],
        ["socket(AF_UNIX)", "libc.socket(1, 1, 0)"],
        ["socket(AF_NETLINK)", "libc.socket(16, 2, 0)"],
        ["socket(AF_VSOCK)", "libc.socket(40, 1, 0)"],
      ] as const;
      // A probe answers `<name> <result> <errno>` for each call.
      const probe = `import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
T = {'x86_64': dict(io_uring_setup=425, ptrace=101, process_vm_readv=310, process_vm_writev=311, perf_event_open=298, bpf=321, userfaultfd=323, keyctl=250),
     'aarch64': dict(io_uring_setup=425, ptrace=117, process_vm_readv=270, process_vm_writev=271, perf_event_open=241, bpf=280, userfaultfd=282, keyctl=219)}[platform.machine()]
nr = lambda n: T[n]
def run(name, f):
    ctypes.set_errno(0); r = f(); print(name, r, ctypes.get_errno())
${denied.map(([name, call]) => `run(${JSON.stringify(name)}, lambda: ${call})`).join("\n")}
run("socket(AF_INET)", lambda: libc.socket(2, 1, 0))
run("socketpair(AF_UNIX)", lambda: libc.socketpair(1, 1, 0, (ctypes.c_int * 2)()))
`;
      it("each denied system call fails with EPERM inside (unshare: through the package's loader)", async () => {
        const env = await fresh();
        expect(env.seccomp).toBe(true);
        const r = await env.exec(["python3", "-c", probe], LIMITS);
        expect(r.stderr).toBe("");
        const lines = new Map(
          r.stdout
            .trim()
            .split("\n")
            .map((l) => {
              const parts = l.split(" ");
              const errno = parts.pop();
              const result = parts.pop();
              return [parts.join(" "), { result: Number(result), errno: Number(errno) }] as const;
            }),
        );
        for (const [name] of denied) {
          expect(lines.get(name), name).toEqual({ result: -1, errno: 1 });
        }
        // What a build needs stays: IP sockets (in the empty network namespace) and socketpair.
        expect(lines.get("socket(AF_INET)")?.result).toBeGreaterThanOrEqual(0);
        expect(lines.get("socketpair(AF_UNIX)")?.result).toBe(0);
      });

      it("unixSockets: true lets a command open an AF_UNIX socket", async () => {
        const env = await fresh({ unixSockets: true });
        const r = await env.exec(
          ["python3", "-c", "import socket; socket.socket(socket.AF_UNIX); print('unix ok')"],
          LIMITS,
        );
        expect(r.stdout).toBe("unix ok\n");
      });

      it("the limits reporter is out of its command's reach: tracing it is refused, stopping it does nothing", async () => {
        const env = await fresh({ resources: small });
        // The reporter is the command's parent and the namespace's pid 1.
        const trace = `import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
nr = {'x86_64': 101, 'aarch64': 117}[platform.machine()]
ctypes.set_errno(0); r = libc.syscall(nr, 16, os.getppid(), 0, 0)
print(os.getppid(), r, ctypes.get_errno())`;
        const traced = await env.exec(["python3", "-c", trace], { ...LIMITS, timeoutMs: 20_000 });
        expect([traced.stdout, traced.timedOut]).toEqual(["1 -1 1\n", false]);
        // SIGSTOP and SIGKILL sent to the reporter are ignored: the step ends with the command.
        const stopped = await env.exec(
          ["sh", "-c", "kill -STOP $PPID; kill -KILL $PPID; echo still reporting; exit 3"],
          { ...LIMITS, timeoutMs: 20_000 },
        );
        expect([stopped.stdout, stopped.exitCode, stopped.timedOut]).toEqual([
          "still reporting\n",
          3,
          false,
        ]);
        // The reporter still reports: a file past RLIMIT_FSIZE is the disk limit.
        const fsize = await env.exec(
          ["sh", "-c", "kill -STOP $PPID; head -c 20000000 /dev/zero > big"],
          { ...LIMITS, timeoutMs: 20_000 },
        );
        expect(fsize.limit).toEqual({
          resource: "disk",
          bytes: small.diskBytes,
          via: "rlimit-fsize",
        });
      });

      it("no controlling terminal, its own pid namespace with a fresh /proc", async () => {
        const env = await fresh();
        const script = `import os
try:
    os.open('/dev/tty', os.O_RDWR); print('tty')
except OSError:
    print('no tty')
print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit())[0])`;
        const r = await env.exec(["python3", "-c", script], LIMITS);
        expect(r.stdout).toBe("no tty\n1\n");
      });
    },
  );
}
