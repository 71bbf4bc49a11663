// What stands outside a bwrap sandbox in overlay mode (outer-shell.ts): `warrant-outer`
// (native/outer-exec.c) run for real, each of its refusals, its report on fd 3 and its wait for the
// host; then bwrap environments with the program and with the shell's steps instead; and the
// host's side of the protocol (runLimited's gate and the cgroup joined by pid).
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { runLimited, SANDBOX_PATH } from "../../src/adapters/sandbox/contained-exec.js";
import { probeSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import {
  defaultOuterHelper,
  fstabText,
  helperLine,
  helperRuns,
  limitArgs,
  shellLine,
  shellSetsLimits,
} from "../../src/adapters/sandbox/outer-shell.js";
import { GATE_SCRIPT } from "../../src/adapters/sandbox/unshare-sandbox.js";
import { DEFAULT_RESOURCES, type ExecOptions } from "../../src/core/ports/sandbox.js";

const LIMITS: ExecOptions = { timeoutMs: 60_000, maxOutputBytes: 1 << 16 };
const work = mkdtempSync(path.join(tmpdir(), "warrant-outer-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const helper = defaultOuterHelper();
const required = process.env.CI === "true";

interface HelperRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly fd3: string;
  /** Whether it was still running once it had said its status, before the host let it go. */
  readonly waitedForHost: boolean;
}

/**
 * `warrant-outer ARGS` as the host runs it: with `gate` "line" a line written to stdin first, with
 * "closed" stdin ended at once; once `rc N` arrives on fd 3, a moment's look at whether it still
 * runs, then stdin ended.
 */
function runHelper(
  args: readonly string[],
  gate: "none" | "line" | "closed" = "none",
): Promise<HelperRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(helper as string, args, {
      env: { PATH: SANDBOX_PATH },
      stdio: ["pipe", "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let fd3 = "";
    let waitedForHost = false;
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c;
    });
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c;
    });
    child.stdin?.on("error", () => undefined);
    if (gate === "line") child.stdin?.write("\n");
    if (gate === "closed") child.stdin?.end();
    child.stdio[3]?.on("data", (c: Buffer) => {
      fd3 += c;
      if (!fd3.endsWith("\n")) return;
      setTimeout(() => {
        waitedForHost = child.exitCode === null && child.signalCode === null;
        child.stdin?.end();
      }, 50);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr, fd3, waitedForHost }));
  });
}

/** Arguments for no gate, no cgroup, these limits, no mounts, then `argv`. */
const plain = (argv: readonly string[], limits = ["64", "-", "1048576"]) => [
  "0",
  "-",
  ...limits,
  "0",
  ...argv,
];

describe("the outer steps' command lines", () => {
  it("an fstab line per mount, fields escaped, flags before the file system's options", () => {
    expect(
      fstabText([
        { source: "overlay", target: "/w s", type: "overlay", flags: "", data: "lowerdir=/l" },
        { source: "tmpfs", target: "/t", type: "tmpfs", flags: "nosuid,nodev", data: "size=9" },
        { source: "none", target: "/n", type: "tmpfs", flags: "", data: "" },
      ]),
    ).toBe(
      "overlay /w\\040s overlay lowerdir=/l 0 0\ntmpfs /t tmpfs nosuid,nodev,size=9 0 0\nnone /n tmpfs defaults 0 0\n",
    );
  });

  it("the shell sets the limits itself only where it can and the sizes divide its units", () => {
    expect(limitArgs("9", undefined, 1024, true)).toEqual(["9", "-", "1024", "1"]);
    expect(limitArgs("9", 2048, 1024, true)).toEqual(["9", "2048", "1024", "1"]);
    // ulimit -f counts 512-byte blocks, -d KiB: anything else goes to prlimit.
    expect(limitArgs("9", undefined, 1000, true)).toEqual(["9", "-", "1000", "0"]);
    expect(limitArgs("9", 1500, 1024, true)).toEqual(["9", "1500", "1024", "0"]);
    expect(limitArgs("9", undefined, 1024, false)).toEqual(["9", "-", "1024", "0"]);
  });

  it("the program's arguments and the shell's, in the same order", () => {
    const command = {
      gate: true,
      join: "/cg/tasks",
      nproc: "9",
      dataBytes: undefined,
      resources: { ...DEFAULT_RESOURCES, diskBytes: 4096 },
    };
    const mounts = [{ source: "tmpfs", target: "/t", type: "tmpfs", flags: "", data: "" }];
    expect(helperLine("/h", command, mounts, ["bwrap", "x"])).toEqual(
      ["/h", "1", "/cg/tasks", "9", "-", "4096", "1"].concat(
        ["tmpfs", "tmpfs", "/t", "-", "-"],
        ["bwrap", "x"],
      ),
    );
    const line = shellLine("unshare", command, "/f.fstab", true, ["bwrap", "x"]);
    expect(line.slice(0, 7)).toEqual(
      ["unshare", "--user", "--map-root-user", "--mount", "--"].concat(["/bin/sh", "-c"]),
    );
    expect(line.slice(8)).toEqual([
      "warrant-outer",
      "1",
      "/cg/tasks",
      "/f.fstab",
      "9",
      "-",
      "4096",
      "1",
      "bwrap",
      "x",
    ]);
  });

  it("this host's /bin/sh sets the limits with ulimit where it is dash", async () => {
    const dash = realpathSync("/bin/sh").endsWith("dash");
    expect(await shellSetsLimits()).toBe(dash);
  });
});

if (helper === undefined && required) {
  it("warrant-outer is built (npm run build, with the system C compiler)", () => {
    expect(helper).toBeDefined();
  });
}

describe.skipIf(helper === undefined)(
  `warrant-outer${helper === undefined ? " (skipped: not built here, no C compiler)" : ""}`,
  () => {
    it("says the command's status on fd 3, waits for the host, then exits with it", async () => {
      const r = await runHelper(plain(["sh", "-c", "echo out; echo err >&2; exit 7"]));
      expect(r.fd3).toBe("rc 7\n");
      expect(r.waitedForHost).toBe(true);
      expect(r.code).toBe(7);
      expect(r.stdout).toBe("out\n");
      expect(r.stderr).toBe("err\n");
    });

    it("a command killed by a signal: 128 plus the signal", async () => {
      const r = await runHelper(plain(["sh", "-c", "kill -TERM $$"]));
      expect(r.fd3).toBe("rc 143\n");
      expect(r.code).toBe(143);
    });

    it("the command: stdin from /dev/null, fd 3 closed, its limits soft and hard", async () => {
      const r = await runHelper(
        plain(
          [
            "sh",
            "-c",
            'readlink /proc/self/fd/0; (echo x >&3) 2>/dev/null && echo open || echo closed; grep -E "^Max (processes|file size|data size)" /proc/self/limits',
          ],
          ["77", "536870912", "1048576"],
        ),
      );
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trim().split("\n");
      expect(lines.slice(0, 2)).toEqual(["/dev/null", "closed"]);
      const limit = (name: string) =>
        lines
          .find((l) => l.startsWith(`Max ${name}`))
          ?.split(/\s{2,}/)
          .slice(1, 3);
      expect(limit("processes")).toEqual(["77", "77"]);
      expect(limit("file size")).toEqual(["1048576", "1048576"]);
      expect(limit("data size")).toEqual(["536870912", "536870912"]);
    });

    it("root of its own user namespace, as the caller; mounts made there, not on the host", async () => {
      const target = mkdtempSync(path.join(work, "mnt-"));
      const r = await runHelper([
        "0",
        "-",
        "64",
        "-",
        "1048576",
        "1",
        ...["tmpfs", "tmpfs", target, "nosuid,nodev", "mode=1777,size=1048576"],
        "sh",
        "-c",
        'cat /proc/self/uid_map; stat -f -c "%b %S" "$0"; grep -c " $0 .*nosuid,nodev" /proc/self/mountinfo',
        target,
      ]);
      expect(r.code, r.stderr).toBe(0);
      const [map, size, count] = r.stdout.trim().split("\n");
      expect(map?.trim().split(/\s+/)).toEqual(["0", String(process.getuid?.() ?? 0), "1"]);
      const [blocks, blockSize] = (size as string).split(" ").map(Number);
      expect((blocks as number) * (blockSize as number)).toBe(1048576);
      expect(count).toBe("1");
      expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(` ${target} `);
    });

    it("with the gate it waits for the host's line; a closed gate runs nothing", async () => {
      const marker = path.join(work, "gate-marker");
      const closed = await runHelper(["1", ...plain(["touch", marker]).slice(1)], "closed");
      expect(closed.code).toBe(125);
      expect(closed.stderr).toContain("the host closed the gate");
      expect(closed.fd3).toBe("");
      expect(existsSync(marker)).toBe(false);
      const open = await runHelper(["1", ...plain(["touch", marker]).slice(1)], "line");
      expect(open.code, open.stderr).toBe(0);
      expect(existsSync(marker)).toBe(true);
    });

    it("joins the cgroup by writing 0 to the file it is given; one it cannot write runs nothing", async () => {
      const join = path.join(work, "tasks");
      writeFileSync(join, "");
      const r = await runHelper(["0", join, ...plain(["true"]).slice(2)]);
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(join, "utf8")).toBe("0");
      const marker = path.join(work, "join-marker");
      const refused = await runHelper([
        "0",
        path.join(work, "no-such-dir/tasks"),
        ...plain(["touch", marker]).slice(2),
      ]);
      expect(refused.code).toBe(125);
      expect(refused.stderr).toContain("cannot join the memory cgroup");
      expect(existsSync(marker)).toBe(false);
    });

    it("refuses what it cannot carry out before running anything (exit 125)", async () => {
      const marker = path.join(work, "refused-marker");
      const touch = ["touch", marker];
      const cases: [readonly string[], string][] = [
        [["0", "-", "64"], "usage: warrant-outer"],
        [["0", "-", "64", "-", "1", "x", ...touch], "not a mount count"],
        [["0", "-", "64", "-", "1", "2", "tmpfs", "tmpfs", work, "-", "-", ...touch], "no command"],
        [
          ["0", "-", "64", "-", "1", "1", "tmpfs", "tmpfs", work, "suid", "-", ...touch],
          "unknown mount flags",
        ],
        [
          [
            "0",
            "-",
            "64",
            "-",
            "1",
            "1",
            "tmpfs",
            "tmpfs",
            path.join(work, "absent"),
            "-",
            "-",
          ].concat(touch),
          "cannot mount",
        ],
        [["0", "-", "lots", "-", "1", "0", ...touch], "not a number for nproc"],
        [["0", "-", "64", "-", "1k", "0", ...touch], "not a number for fsize"],
        [["0", "-", "64", "-1", "1", "0", ...touch], "not a number for data"],
      ];
      for (const [args, says] of cases) {
        const r = await runHelper(args);
        expect(r.code, args.join(" ")).toBe(125);
        expect(r.stderr).toContain(says);
        expect(r.fd3).toBe("");
      }
      expect(existsSync(marker)).toBe(false);
    });

    it("a command that cannot be executed: 127, said on fd 3 like any status", async () => {
      const r = await runHelper(plain(["/no/such/program"]));
      expect(r.code).toBe(127);
      expect(r.fd3).toBe("rc 127\n");
      expect(r.stderr).toContain("cannot execute /no/such/program");
    });

    it("the host reads the status: a full /tmp is the tmp limit, 153 the file-size limit", async () => {
      const tmp = mkdtempSync(path.join(work, "status-"));
      const resources = { ...DEFAULT_RESOURCES, tmpBytes: 65536 };
      const run = (script: string) =>
        runLimited(
          [
            helper as string,
            ...["0", "-", "64", "-", "1048576", "1"],
            ...["tmpfs", "tmpfs", tmp, "-", "size=65536"],
            ...["sh", "-c", script, "sh", tmp],
          ],
          { PATH: SANDBOX_PATH },
          { ...LIMITS, enforce: { resources }, statusTmp: tmp },
        );
      const full = await run('head -c 1048576 /dev/zero > "$1/fill"; exit 0');
      expect(full.exitCode).toBe(0);
      expect(full.limit).toEqual({ resource: "tmp", bytes: 65536, via: "tmpfs" });
      const room = await run('head -c 1024 /dev/zero > "$1/fill"');
      expect(room.exitCode, room.stderr).toBe(0);
      expect(room.limit).toBeUndefined();
      const xfsz = await run("kill -XFSZ $$");
      expect(xfsz.exitCode).toBe(153);
      expect(xfsz.limit).toEqual({
        resource: "disk",
        bytes: DEFAULT_RESOURCES.diskBytes,
        via: "rlimit-fsize",
      });
      const other = await run("exit 152");
      expect(other.exitCode).toBe(152);
      expect(other.limit).toBeUndefined();
    });

    it("a program that does not run here is found out (the shell's steps are used then)", async () => {
      expect(await helperRuns(helper as string, undefined)).toBe(true);
      expect(await helperRuns("/bin/false", undefined)).toBe(false);
      expect(await helperRuns(path.join(work, "absent"), undefined)).toBe(false);
    });
  },
);

const baseline = path.join(work, "baseline");
mkdirSync(baseline, { recursive: true });
writeFileSync(path.join(baseline, "a.txt"), "a\n");
const commandsUid = process.getuid?.() === 0 ? 65534 : (process.getuid?.() ?? 0);

for (const [label, outerHelper] of [
  ["warrant-outer", undefined],
  ["the shell's steps", null],
  ["a program that does not run here, so the shell's steps", "/bin/false"],
] as const) {
  const sandbox = createBwrapSandbox({
    layers: "overlay",
    ...(outerHelper === undefined ? {} : { outerHelper }),
  });
  const why = await probeSandbox(sandbox).catch((e: Error) => e.message);
  if (why !== undefined && process.env.WARRANT_REQUIRE_OVERLAY === "1") {
    it(`bwrap in overlay mode is required here and works (${label})`, () => expect(why).toBe(""));
  }
  describe.skipIf(why !== undefined)(
    `a bwrap command in overlay mode, outer steps by ${label}${why === undefined ? "" : ` (skipped: ${why})`}`,
    () => {
      it("is bwrap init's child (not pid 1), as the commands' uid with no other groups", async () => {
        const env = await sandbox.createEnvironment(baseline);
        try {
          const r = await env.exec(
            [
              "sh",
              "-c",
              'echo $$; cat /proc/1/comm; id -u; grep "^Groups:" /proc/self/status; cat a.txt',
            ],
            LIMITS,
          );
          expect(r.exitCode, r.stderr).toBe(0);
          const [pid, init, uid, groups, a] = r.stdout.trim().split("\n");
          expect(pid).not.toBe("1");
          expect(init).toBe("bwrap");
          expect(uid).toBe(String(commandsUid));
          expect(groups?.replace(/\s+/g, " ").trim()).toMatch(/^Groups:( 65534)?$/);
          expect(a).toBe("a");
          // What it writes is the commands' uid's on the host, in the overlay's upper layer.
          const wrote = await env.exec(["sh", "-c", "echo b > b.txt"], LIMITS);
          expect(wrote.exitCode, wrote.stderr).toBe(0);
          const upper = path.join(path.dirname(env.root), "upper", "b.txt");
          expect(statSync(upper).uid).toBe(commandsUid);
          // Its stdin is at its end at once (the program's own stdin is the host's gate).
          const cat = await env.exec(["cat"], { ...LIMITS, timeoutMs: 20_000 });
          expect(cat.timedOut).toBe(false);
          expect(cat.exitCode).toBe(0);
          // The shell's steps write their fstab beside the workspace; the program takes argv.
          const fstab = path.join(path.dirname(env.root), "outer-0.fstab");
          expect(existsSync(fstab)).toBe(outerHelper !== undefined || helper === undefined);
        } finally {
          await env.destroy();
        }
      });

      it("the command's limits: nproc from maxProcesses, RLIMIT_FSIZE from diskBytes, soft and hard", async () => {
        const env = await sandbox.createEnvironment(baseline, {
          resources: { diskBytes: 3 * 2 ** 20 },
        });
        try {
          const r = await env.exec(["cat", "/proc/self/limits"], { ...LIMITS, maxProcesses: 33 });
          expect(r.exitCode, r.stderr).toBe(0);
          const limit = (name: string) =>
            r.stdout
              .split("\n")
              .find((l) => l.startsWith(`Max ${name}`))
              ?.split(/\s{2,}/)
              .slice(1, 3);
          expect(limit("processes")).toEqual(["33", "33"]);
          expect(limit("file size")).toEqual([String(3 * 2 ** 20), String(3 * 2 ** 20)]);
        } finally {
          await env.destroy();
        }
      });

      it("the exit status and a signal's status come back as the command's", async () => {
        const env = await sandbox.createEnvironment(baseline);
        try {
          expect((await env.exec(["sh", "-c", "exit 9"], LIMITS)).exitCode).toBe(9);
          expect((await env.exec(["sh", "-c", "kill -KILL $$"], LIMITS)).exitCode).toBe(137);
          const slow = await env.exec(["sleep", "30"], { ...LIMITS, timeoutMs: 300 });
          expect(slow.timedOut).toBe(true);
        } finally {
          await env.destroy();
        }
      });
    },
  );
}

describe("the host's side: a chain the host moves into its cgroup by pid", () => {
  const resources = DEFAULT_RESOURCES;
  const cgroup = (join: string) => ({
    join,
    selfJoin: false,
    version: 2 as const,
    oomKilled: async () => false,
    release: async () => undefined,
  });

  it("waits behind GATE_SCRIPT until the host wrote its pid, then runs", async () => {
    const join = path.join(work, "procs");
    writeFileSync(join, "");
    const r = await runLimited(
      ["/bin/sh", "-c", GATE_SCRIPT, "warrant-gate", "/bin/sh", "-c", 'cat "$0"', join],
      { PATH: SANDBOX_PATH },
      { ...LIMITS, gate: true, enforce: { resources, cgroup: cgroup(join) } },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    // The pid was written before the gate opened: the command read it.
    expect(r.stdout).toMatch(/^\d+$/);
    expect(r.stdout).toBe(readFileSync(join, "utf8"));
  });

  it("a cgroup the host cannot move it into: nothing runs, and the error says so", async () => {
    const marker = path.join(work, "unjoined-marker");
    const r = await runLimited(
      ["/bin/sh", "-c", GATE_SCRIPT, "warrant-gate", "touch", marker],
      { PATH: SANDBOX_PATH },
      {
        ...LIMITS,
        gate: true,
        enforce: { resources, cgroup: cgroup(path.join(work, "absent/procs")) },
      },
    );
    expect(r.exitCode).toBe(125);
    expect(r.stderr).toContain("could not join the memory cgroup");
    expect(existsSync(marker)).toBe(false);
  });
});
