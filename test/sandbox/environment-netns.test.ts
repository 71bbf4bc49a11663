// An environment's own network namespace (environment-netns.ts): `warrant-outer --make-netns`
// run for real, the host's checks of what it opened, `--keep` and `--netns` on a command and
// their refusals, and bwrap environments in overlay mode whose commands all join the
// environment's namespace: loopback only, none of the host's, none of another environment's,
// gone with the environment.
import { spawn } from "node:child_process";
import {
  chmodSync,
  closeSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { SANDBOX_PATH } from "../../src/adapters/sandbox/contained-exec.js";
import { probeSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { makeEnvironmentNetns } from "../../src/adapters/sandbox/environment-netns.js";
import {
  defaultOuterHelper,
  helperLine,
  helperRuns,
} from "../../src/adapters/sandbox/outer-shell.js";
import { DEFAULT_RESOURCES, type ExecOptions } from "../../src/core/ports/sandbox.js";

const LIMITS: ExecOptions = { timeoutMs: 60_000, maxOutputBytes: 1 << 16 };
const work = mkdtempSync(path.join(tmpdir(), "warrant-netns-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const helper = defaultOuterHelper();
const hostNet = readlinkSync("/proc/self/ns/net");

/** The links of this process's open descriptors (what each is open on). */
function openLinks(): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });
}

/** `program ARGS` with `extra` descriptors from fd 4, stdin ended once fd 3 says a status. */
function run(
  program: string,
  args: readonly string[],
  extra: readonly number[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string; fd3: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      env: { PATH: SANDBOX_PATH },
      stdio: ["pipe", "pipe", "pipe", "pipe", ...extra],
    });
    let stdout = "";
    let stderr = "";
    let fd3 = "";
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c;
    });
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c;
    });
    child.stdin?.on("error", () => undefined);
    child.stdio[3]?.on("data", (c: Buffer) => {
      fd3 += c;
      if (fd3.endsWith("\n")) child.stdin?.end();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr, fd3 }));
  });
}

/** Arguments for no gate, no cgroup, default limits, no mounts, then `argv`. */
const plain = (argv: readonly string[]) => ["0", "-", "64", "-", "1048576", "0", ...argv];

describe("helperLine's options", () => {
  it("--keep and --netns go before the arguments, only when given", () => {
    const command = {
      gate: false,
      join: undefined,
      nproc: "9",
      dataBytes: undefined,
      resources: { ...DEFAULT_RESOURCES, diskBytes: 4096 },
    };
    const rest = ["0", "-", "9", "-", "4096", "0", "bwrap"];
    expect(helperLine("/h", command, [], ["bwrap"])).toEqual(["/h", ...rest]);
    expect(helperLine("/h", command, [], ["bwrap"], { keep: 5 })).toEqual([
      "/h",
      "--keep",
      "5",
      ...rest,
    ]);
    expect(helperLine("/h", command, [], ["bwrap"], { keep: 7, netns: [6, 7] })).toEqual([
      "/h",
      ...["--keep", "7", "--netns", "6,7"],
      ...rest,
    ]);
  });
});

describe.skipIf(helper === undefined)(
  `warrant-outer's namespaces and descriptors${helper === undefined ? " (skipped: not built here)" : ""}`,
  () => {
    it("--make-netns: an empty network namespace with loopback up, held until the host lets go", async () => {
      const made = await makeEnvironmentNetns(helper as string, undefined);
      expect(made).toBeDefined();
      if (made === undefined) return;
      const net = readlinkSync(`/proc/self/fd/${made.net}`);
      try {
        expect(net).toMatch(/^net:\[\d+\]$/);
        expect(net).not.toBe(hostNet);
        expect(readlinkSync(`/proc/self/fd/${made.user}`)).toMatch(/^user:\[\d+\]$/);
        // A command joins it: only loopback, up (IFF_UP is flag 0x1 in /sys's view of its own).
        const r = await run(
          helper as string,
          [
            ...["--keep", "5", "--netns", "4,5"],
            ...plain([
              "sh",
              "-c",
              'readlink /proc/self/ns/net; cat /proc/self/uid_map; tail -n +3 /proc/net/dev | cut -d: -f1; ls /proc/self/fd | sort -n | tr "\\n" " "',
            ]),
          ],
          [made.user, made.net],
        );
        expect(r.code, r.stderr).toBe(0);
        const [joined, map, ifaces, fds] = r.stdout.split("\n");
        expect(joined).toBe(net);
        expect(map?.trim().split(/\s+/)).toEqual(["0", String(process.getuid?.() ?? 0), "1"]);
        expect(ifaces?.trim()).toBe("lo");
        // The namespaces' descriptors were closed before the command (ls's own listing is 3).
        expect(fds?.trim()).toBe("0 1 2 3");
      } finally {
        made.close();
      }
      expect(openLinks()).not.toContain(net);
    });

    it("the proof that commands can join: yes for the environment's, no for the host's own", async () => {
      const made = await makeEnvironmentNetns(helper as string, undefined);
      if (made === undefined) throw new Error("no namespace made");
      const own = {
        user: openSync("/proc/self/ns/user", "r"),
        net: openSync("/proc/self/ns/net", "r"),
      };
      try {
        expect(await helperRuns(helper as string, undefined, made)).toBe(true);
        expect(await helperRuns(helper as string, undefined, own)).toBe(false);
      } finally {
        made.close();
        closeSync(own.user);
        closeSync(own.net);
      }
    });

    it("a command may use the environment's loopback: listen and connect there", async () => {
      const made = await makeEnvironmentNetns(helper as string, undefined);
      if (made === undefined) throw new Error("no namespace made");
      try {
        const script = `const net = require("net"); const s = net.createServer((c) => c.end("pong")).listen(0, "127.0.0.1", () => { net.connect(s.address().port, "127.0.0.1").on("data", (d) => { console.log(String(d)); process.exit(0); }); });`;
        const r = await run(
          helper as string,
          ["--keep", "5", "--netns", "4,5", ...plain([process.execPath, "-e", script])],
          [made.user, made.net],
        );
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toBe("pong\n");
      } finally {
        made.close();
      }
    });

    it("--keep K: every descriptor above K is closed before anything runs", async () => {
      const files = [0, 1, 2].map((i) => {
        const f = path.join(work, `keep-${i}`);
        writeFileSync(f, "");
        return openSync(f, "r");
      });
      try {
        const list = plain(["sh", "-c", 'ls /proc/self/fd | sort -n | tr "\\n" " "']);
        const kept = await run(helper as string, ["--keep", "5", ...list], files);
        expect(kept.code, kept.stderr).toBe(0);
        // 4 and 5 kept (the command's fd 3 is closed; ls's listing takes it).
        expect(kept.stdout.trim()).toBe("0 1 2 3 4 5");
        const none = await run(helper as string, ["--keep", "3", ...list], files);
        expect(none.stdout.trim()).toBe("0 1 2 3");
        // Without --keep, what it is handed reaches the command (the host covers the rest).
        const all = await run(helper as string, list, files);
        expect(all.stdout.trim()).toMatch(/^0 1 2 3 4 5 6\b/);
      } finally {
        for (const fd of files) closeSync(fd);
      }
    });

    it("refuses bad options, namespaces above --keep and the host's own network namespace (125, nothing run)", async () => {
      const marker = path.join(work, "netns-marker");
      const touch = plain(["touch", marker]);
      const ownUser = openSync("/proc/self/ns/user", "r");
      const ownNet = openSync("/proc/self/ns/net", "r");
      try {
        const cases: [readonly string[], string][] = [
          [["--keep", "2", ...touch], "not a descriptor for --keep"],
          [["--keep", "x", ...touch], "not a descriptor for --keep"],
          [["--netns", "4", ...touch], "not two descriptors for --netns"],
          [["--netns", "3,4", ...touch], "not two descriptors for --netns"],
          [["--netns", "4,4", ...touch], "not two descriptors for --netns"],
          [["--keep", "4", "--netns", "4,5", ...touch], "must not be above --keep"],
          [["--later", "1", ...touch], "unknown option --later"],
          [["--keep", "5", "--netns", "4,5", ...touch], "this process's own"],
        ];
        for (const [args, says] of cases) {
          const r = await run(helper as string, args, [ownUser, ownNet]);
          expect(r.code, args.join(" ")).toBe(125);
          expect(r.stderr, args.join(" ")).toContain(says);
          expect(r.fd3).toBe("");
        }
        // Descriptors that are not namespaces: refused when joining.
        const plainFile = openSync(path.join(work, "keep-0"), "r");
        try {
          const r = await run(
            helper as string,
            ["--keep", "5", "--netns", "4,5", ...touch],
            [plainFile, plainFile],
          );
          expect(r.code).toBe(125);
          expect(r.stderr).toContain("cannot join the environment's user namespace");
        } finally {
          closeSync(plainFile);
        }
      } finally {
        closeSync(ownUser);
        closeSync(ownNet);
      }
      expect(readdirSync(work)).not.toContain("netns-marker");
    });
  },
);

describe("what the host accepts as an environment's network namespace", () => {
  /** A stand-in for `warrant-outer --make-netns`: a script saying `said`, then waiting. */
  const fake = (name: string, said: string) => {
    const file = path.join(work, name);
    writeFileSync(file, `#!/bin/sh\n${said}\nread -r _\n`);
    chmodSync(file, 0o755);
    return file;
  };
  /** The same in a user and network namespace of its own (`unshare -Urn`, same pid). */
  const apart = (name: string, said: string) =>
    fake(name, `exec unshare -Urn sh -c '${said}; read -r _'`);
  const INODE = "$(stat -L -c %i /proc/self/ns/net)";

  it("a program that fails, says something else or exits: none (commands make their own)", async () => {
    expect(await makeEnvironmentNetns("/bin/false", undefined)).toBeUndefined();
    expect(await makeEnvironmentNetns(path.join(work, "absent"), undefined)).toBeUndefined();
    expect(await makeEnvironmentNetns(fake("says-other", "echo hello"), undefined)).toBeUndefined();
    expect(await makeEnvironmentNetns(fake("exits", "exit 0"), undefined)).toBeUndefined();
  });

  it("one that says nothing in time: none, and it is stopped", async () => {
    const silent = fake("silent", "sleep 30");
    const before = openLinks().length;
    expect(await makeEnvironmentNetns(silent, undefined, 300)).toBeUndefined();
    expect(openLinks().length).toBe(before);
  });

  it("a namespace that is not the one said, or is the host's own: refused, nothing kept open", async () => {
    const before = openLinks().length;
    const host = fake("host-ns", `echo "ready ${INODE}"`);
    expect(await makeEnvironmentNetns(host, undefined)).toBeUndefined();
    expect(await makeEnvironmentNetns(apart("wrong-inode", "echo ready 1"), undefined)).toBe(
      undefined,
    );
    expect(openLinks().length).toBe(before);
  });

  it("exactly `ready INODE` and a line end, in however many pieces", async () => {
    const pieces = apart("pieces", `printf "ready "; sleep 0.2; echo ${INODE}`);
    const made = await makeEnvironmentNetns(pieces, undefined);
    expect(made).toBeDefined();
    made?.close();
    for (const [name, said] of [
      ["before", `echo "so ready ${INODE}"`],
      ["after", `printf "ready %s\\nmore\\n" ${INODE}`],
    ] as const) {
      expect(await makeEnvironmentNetns(apart(name, said), undefined), name).toBeUndefined();
    }
  });

  it("closing twice closes nothing of anyone else's", async () => {
    const made = await makeEnvironmentNetns(apart("twice", `echo ready ${INODE}`), undefined);
    if (made === undefined) throw new Error("no namespace made");
    made.close();
    // The lowest free numbers again: what closing twice would close.
    const others = [openSync("/dev/null", "r"), openSync("/dev/null", "r")];
    try {
      made.close();
      for (const fd of others) expect(readlinkSync(`/proc/self/fd/${fd}`)).toBe("/dev/null");
    } finally {
      for (const fd of others) closeSync(fd);
    }
  });

  it.skipIf(helper === undefined || process.getuid?.() !== 0)(
    "made as the commands' uid, so a command started as that uid can join it",
    async () => {
      // Where that uid can reach it, as an environment's copy is.
      const bin = mkdtempSync(path.join(tmpdir(), "warrant-netns-bin-"));
      chmodSync(bin, 0o755);
      const copy = path.join(bin, "warrant-outer");
      copyFileSync(helper as string, copy);
      chmodSync(copy, 0o755);
      const made = await makeEnvironmentNetns(copy, { uid: 65534, gid: 65534 });
      if (made === undefined) throw new Error("no namespace made");
      try {
        const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
          let out = "";
          const child = spawn(
            copy,
            ["--keep", "5", "--netns", "4,5", ...plain(["cat", "/proc/self/uid_map"])],
            {
              stdio: ["pipe", "pipe", "inherit", "pipe", made.user, made.net],
              cwd: "/",
              uid: 65534,
              gid: 65534,
            },
          );
          child.stdout?.on("data", (c: Buffer) => {
            out += c;
          });
          child.stdio[3]?.on("data", () => child.stdin?.end());
          child.on("close", (code) => resolve({ code, out }));
        });
        expect(r.code).toBe(0);
        expect(r.out.trim().split(/\s+/)).toEqual(["0", "65534", "1"]);
      } finally {
        made.close();
        rmSync(bin, { recursive: true, force: true });
      }
    },
  );
});

const baseline = path.join(work, "baseline");
mkdirSync(baseline, { recursive: true });
writeFileSync(path.join(baseline, "a.txt"), "a\n");

/**
 * `warrant-outer` behind a script that refuses `--netns` as a policy might (exit 125), in a folder
 * the commands' uid can reach: environments then make no namespace of their own.
 */
function refusingJoins(): string {
  const bin = mkdtempSync(path.join(tmpdir(), "warrant-netns-refuse-"));
  chmodSync(bin, 0o755);
  const real = path.join(bin, "real-outer");
  copyFileSync(helper as string, real);
  chmodSync(real, 0o755);
  const script = path.join(bin, "warrant-outer");
  writeFileSync(
    script,
    `#!/bin/sh\nfor a in "$@"; do [ "$a" = --netns ] && { echo "refused" >&2; exit 125; }; done\nexec ${real} "$@"\n`,
  );
  chmodSync(script, 0o755);
  afterAll(() => rmSync(bin, { recursive: true, force: true }));
  return script;
}

for (const [label, outerHelper, shared] of [
  ["warrant-outer", undefined, true],
  ["the shell's steps", null, false],
  [
    "a warrant-outer that cannot join namespaces here",
    helper === undefined ? undefined : refusingJoins(),
    false,
  ],
] as const) {
  const sandbox = createBwrapSandbox({
    layers: "overlay",
    ...(outerHelper === undefined ? {} : { outerHelper }),
  });
  const why =
    helper === undefined
      ? "warrant-outer not built"
      : await probeSandbox(sandbox).catch((e: Error) => e.message);
  if (why !== undefined && process.env.WARRANT_REQUIRE_OVERLAY === "1") {
    it(`bwrap in overlay mode is required here and works (${label})`, () => expect(why).toBe(""));
  }
  describe.skipIf(why !== undefined)(
    `a bwrap environment in overlay mode, outer steps by ${label}${why === undefined ? "" : ` (skipped: ${why})`}`,
    () => {
      it(
        shared
          ? "its commands share the environment's network namespace: not the host's, not another environment's, closed with it"
          : "each command makes its own network namespace",
        async () => {
          const a = await sandbox.createEnvironment(baseline);
          const b = await sandbox.createEnvironment(baseline);
          let aNet: string | undefined;
          try {
            const ns = async (env: typeof a) => {
              const r = await env.exec(["readlink", "/proc/self/ns/net"], LIMITS);
              expect(r.exitCode, r.stderr).toBe(0);
              return r.stdout.trim();
            };
            const [a1, a2, b1] = [await ns(a), await ns(a), await ns(b)];
            aNet = a1;
            expect(a1).toMatch(/^net:\[\d+\]$/);
            expect(a1).not.toBe(hostNet);
            expect(b1).not.toBe(a1);
            expect(a2 === a1).toBe(shared);
            expect(openLinks().includes(a1)).toBe(shared);
          } finally {
            await a.destroy();
            await b.destroy();
          }
          expect(openLinks()).not.toContain(aNet);
        },
      );
    },
  );
}
