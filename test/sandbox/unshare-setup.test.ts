// The unshare backend's root is assembled from one fstab per environment (one `mount --all`
// instead of a process per mount) and the command starts in its folder through `env -C`: the fstab
// escapes what would split or end a field, keeps the mounts in order, and a temp folder whose path
// holds a space, a tab or a backslash still gives a working root with the same read-only folders
// and private /tmp; a program whose name holds `=` is still run as the program.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { probeSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { moreMounts, NO_BINDS } from "../../src/adapters/sandbox/host-binds.js";
import { fstabField } from "../../src/adapters/sandbox/outer-shell.js";
import {
  commandFstab,
  createUnshareSandbox,
  inFolder,
  rootFstab,
} from "../../src/adapters/sandbox/unshare-sandbox.js";
import type { ExecOptions } from "../../src/core/ports/sandbox.js";

const LIMITS: ExecOptions = { timeoutMs: 30_000, maxOutputBytes: 1 << 16 };
const work = mkdtempSync(path.join(tmpdir(), "warrant-unshare-setup-"));
chmodSync(work, 0o711);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the root's fstab", () => {
  it("escapes space, tab, newline and backslash as octal, and nothing else", () => {
    expect(fstabField("/a b\tc\nd\\e/é#")).toBe("/a\\040b\\011c\\012d\\134e/é#");
    expect(fstabField("/plain/path")).toBe("/plain/path");
  });

  it("lists the stage onto itself, the read-only folders, the devices, /dev/shm, /proc and /tmp, in that order", () => {
    expect(rootFstab("/s t", ["/usr", "/etc"], ["null", "tty"], 4096).split("\n")).toEqual([
      "/s\\040t /s\\040t/ none bind 0 0",
      "/usr /s\\040t/usr none bind,ro 0 0",
      "/etc /s\\040t/etc none bind,ro 0 0",
      "/dev/null /s\\040t/dev/null none bind 0 0",
      "/dev/tty /s\\040t/dev/tty none bind 0 0",
      "tmpfs /s\\040t/dev/shm tmpfs mode=1777,nosuid,nodev 0 0",
      "proc /s\\040t/proc proc nosuid,nodev,noexec 0 0",
      "tmpfs /s\\040t/tmp tmpfs mode=1777,nosuid,nodev,size=4096 0 0",
      "",
    ]);
  });

  it("the further mounts: dependencies (read-only binds in copy mode, overlays in overlay mode), then toolchains read-only", () => {
    const binds = {
      ...NO_BINDS,
      dependencies: [{ target: "/w/node_modules", source: "/b/dep-0", upper: "/u", base: "/d" }],
      toolchains: [{ target: "/opt/node", source: "/opt/node" }],
    };
    const ro = (source: string, target: string) => ({
      source,
      target,
      type: "none",
      flags: "",
      data: "bind,ro,X-mount.mkdir",
    });
    expect(moreMounts(binds, undefined)).toEqual([
      ro("/b/dep-0", "/w/node_modules"),
      ro("/opt/node", "/opt/node"),
    ]);
    expect(
      moreMounts(binds, [{ options: "lowerdir=/b/dep-0", target: "/w/node_modules" }]),
    ).toEqual([
      {
        source: "overlay",
        target: "/w/node_modules",
        type: "overlay",
        flags: "",
        data: "lowerdir=/b/dep-0",
      },
      ro("/opt/node", "/opt/node"),
    ]);
  });

  it("a command's fstab: the root's, then the workspace (bound, or its overlay), then the dependencies and toolchains", () => {
    const dir = { workspace: "/e/w s", stage: "/e/stage" };
    const more = [
      {
        source: "/dep",
        target: "/e/w s/node_modules",
        type: "none",
        flags: "",
        data: "bind,ro,X-mount.mkdir",
      },
      {
        source: "overlay",
        target: "/e/w s/v",
        type: "overlay",
        flags: "",
        data: "lowerdir=/l,upperdir=/u",
      },
    ];
    expect(commandFstab("ROOT\n", dir, undefined, more).split("\n")).toEqual([
      "ROOT",
      "/e/w\\040s /e/stage/e/w\\040s none bind,X-mount.mkdir 0 0",
      "/dep /e/stage/e/w\\040s/node_modules none bind,ro,X-mount.mkdir 0 0",
      "overlay /e/stage/e/w\\040s/v overlay lowerdir=/l,upperdir=/u 0 0",
      "",
    ]);
    expect(commandFstab("", dir, "userxattr,lowerdir=/b", []).split("\n")).toEqual([
      "overlay /e/stage/e/w\\040s overlay userxattr,lowerdir=/b,X-mount.mkdir 0 0",
      "",
    ]);
  });
});

describe("the command's start", () => {
  it("is env -i -C FOLDER -- VARS ARGV, so no argument is read as an option", () => {
    expect(inFolder({ A: "1" }, "/w", ["-x", "y"])).toEqual([
      "/usr/bin/env",
      "-i",
      "-C",
      "/w",
      "--",
      "A=1",
      "-x",
      "y",
    ]);
  });

  it("goes through a shell's cd when the program's name holds = (env would take it as a variable)", () => {
    expect(inFolder({ A: "1" }, "/w", ["./a=b", "c"])).toEqual([
      "/usr/bin/env",
      "-i",
      "A=1",
      "/bin/sh",
      "-c",
      'cd "$0" && exec "$@"',
      "/w",
      "./a=b",
      "c",
    ]);
  });
});

const root = path.join(work, "temp with space\tand\\slash");
mkdirSync(root);
chmodSync(root, 0o711);
const why = await probeSandbox(createUnshareSandbox({ tempRoot: root }));

describe.skipIf(why !== undefined)(
  `unshare under an awkward temp folder${why === undefined ? "" : ` (skipped: ${why})`}`,
  () => {
    // Copy mode only: overlay's mount options cannot carry such a path (sandbox/overlay-unavailable).
    for (const layers of ["copy"] as const) {
      it(`${layers}: mounts the same root, starts in the workspace, runs a program named with =`, async () => {
        const sandbox = createUnshareSandbox({ tempRoot: root, layers });
        const ws = mkdtempSync(path.join(work, `ws-${layers}-`));
        chmodSync(ws, 0o755);
        writeFileSync(path.join(ws, "a=b"), '#!/bin/sh\necho "ran $1"\n', { mode: 0o755 });
        const env = await sandbox.createEnvironment(ws, { resources: { tmpBytes: 1 << 20 } });
        try {
          const r = await env.exec(
            [
              "sh",
              "-c",
              [
                'pwd; [ "$(pwd)" = "$WS" ] && echo in-workspace',
                "touch /usr/x 2>/dev/null || echo usr-read-only",
                "touch /etc/x 2>/dev/null || echo etc-read-only",
                "echo hi > /tmp/t && cat /tmp/t",
                "head -c 2000000 /dev/zero > /tmp/big 2>/dev/null || echo tmp-full",
                "echo x > /dev/null && echo dev-null",
                "[ -r /proc/self/status ] && echo proc",
                "[ -d /dev/shm ] && echo shm",
              ].join("\n"),
            ],
            { ...LIMITS, env: { WS: env.root } },
          );
          expect(r.exitCode, r.stderr).toBe(0);
          expect(r.stdout.split("\n").slice(1)).toEqual([
            "in-workspace",
            "usr-read-only",
            "etc-read-only",
            "hi",
            "tmp-full",
            "dev-null",
            "proc",
            "shm",
            "",
          ]);
          const named = await env.exec(["./a=b", "arg"], LIMITS);
          expect(named.stdout, named.stderr).toBe("ran arg\n");
        } finally {
          await env.destroy();
        }
      });
    }
  },
);
