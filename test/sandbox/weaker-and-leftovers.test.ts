// The unshare backend without its seccomp loader is never silent: environments are refused
// `sandbox/no-seccomp` (naming what would be open) unless the weaker sandbox is allowed, `auto`
// takes it with a reason to warn of, and its environments say they have no filter. And the folders
// a killed process left — probe folders, pinned baselines — are removed by the next start when
// their owner is gone, never while it lives.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { chooseSandbox, detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { claimPin } from "../../src/adapters/sandbox/pin-owner.js";
import { createUnshareSandbox } from "../../src/adapters/sandbox/unshare-sandbox.js";

const work = mkdtempSync(path.join(tmpdir(), "warrant-weaker-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const baseline = path.join(work, "baseline");
mkdirSync(baseline);
writeFileSync(path.join(baseline, "a.txt"), "a\n");

const unshareHere = (await detectSandbox({ only: "unshare" })).ok;
const LIMITS = { timeoutMs: 30_000, maxOutputBytes: 4096 };
// ptrace(PTRACE_TRACEME): refused by the filter, allowed without it.
const TRACE_ME = `import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
nr = {'x86_64': 101, 'aarch64': 117}[platform.machine()]
ctypes.set_errno(0); print(libc.syscall(nr, 0, 0, 0, 0), ctypes.get_errno())`;

describe.skipIf(!unshareHere)("unshare without its seccomp loader", () => {
  it("refuses environments with sandbox/no-seccomp, naming what would be open", async () => {
    for (const loader of [null, path.join(work, "no-such-loader")]) {
      const sandbox = createUnshareSandbox({ seccompLoader: loader });
      expect(await sandbox.seccomp?.()).toBeDefined();
      await expect(sandbox.createEnvironment(baseline)).rejects.toMatchObject({
        code: "sandbox/no-seccomp",
        message: expect.stringMatching(/ptrace.*AF_NETLINK.*--allow-weaker-sandbox/),
      });
    }
  });

  it("a named unshare is refused sandbox/no-seccomp, not sandbox/unavailable; allowed, it runs unfiltered", async () => {
    const named = await chooseSandbox("unshare", { seccompLoader: null });
    expect(named.ok ? "" : named.errors[0]?.code).toBe("sandbox/no-seccomp");
    const allowed = await chooseSandbox("unshare", {
      seccompLoader: null,
      allowWeakerSandbox: true,
    });
    expect(allowed.ok).toBe(true);
    if (!allowed.ok) return;
    expect(await allowed.value.seccomp?.()).toMatch(/seccomp loader/);
    const env = await allowed.value.createEnvironment(baseline);
    try {
      expect(env.seccomp).toBe(false);
      const r = await env.exec(["python3", "-c", TRACE_ME], LIMITS);
      expect(r.stdout).toBe("0 0\n");
    } finally {
      await env.destroy();
    }
  }, 60_000);

  it("auto falls back to it (bwrap absent) with the reason to warn of", async () => {
    const auto = await detectSandbox({
      bwrapPath: path.join(work, "no-bwrap"),
      prefer: "unshare",
      seccompLoader: null,
    });
    expect(auto.ok && auto.value.backend).toBe("unshare");
    if (auto.ok) expect(await auto.value.seccomp?.()).toMatch(/was not built/);
  }, 60_000);

  it("with the loader, the same call is refused by the filter", async () => {
    const sandbox = createUnshareSandbox();
    expect(await sandbox.seccomp?.()).toBeUndefined();
    const env = await sandbox.createEnvironment(baseline);
    try {
      expect(env.seccomp).toBe(true);
      expect((await env.exec(["python3", "-c", TRACE_ME], LIMITS)).stdout).toBe("-1 1\n");
    } finally {
      await env.destroy();
    }
  }, 60_000);
});

/** An owner record of a process that has exited (same boot and pid namespace as this one). */
function deadOwner(): string {
  const child = spawnSync("true");
  return JSON.stringify({
    boot: readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim(),
    pidns: readlinkSync("/proc/self/ns/pid"),
    pid: child.pid,
    start: "1",
  });
}

describe("folders a killed process left", () => {
  it("probe folders and pins of a dead owner are removed by the next probe; a live owner's are kept", async () => {
    // Reachable by the commands' uid (a temp root under a 0700 folder is refused).
    chmodSync(work, 0o711);
    const temp = path.join(work, "tmp");
    mkdirSync(temp, { mode: 0o1777 });
    chmodSync(temp, 0o1777);
    const made = (name: string) => {
      const dir = path.join(temp, name);
      mkdirSync(path.join(dir, "workspace"), { recursive: true });
      return dir;
    };
    const dead = [made("warrant-probe-dead"), made("warrant-probe-overlay-dead")];
    const deadPin = made("warrant-base-dead");
    for (const d of [...dead, deadPin]) writeFileSync(path.join(d, "owner.json"), deadOwner());
    const live = [made("warrant-probe-live"), made("warrant-base-live")];
    for (const d of live) await claimPin(d);
    const unowned = made("warrant-probe-unowned");
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = temp;
    try {
      const found = await detectSandbox();
      expect(found.ok).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    for (const d of [...dead, deadPin]) expect(existsSync(d), d).toBe(false);
    // A live process's, and one whose owner cannot be told, are never touched.
    for (const d of [...live, unowned]) expect(existsSync(d), d).toBe(true);
  }, 120_000);
});
