// The pieces of containment that are data: the seccomp program's bytes and the choice of backend by
// name (where a memory cgroup would be made, and the reporter's words: resource-limits.test.ts).
import { existsSync, mkdirSync, rmdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  chooseSandbox,
  isSandboxChoice,
  onPath,
} from "../../src/adapters/sandbox/detect-sandbox.js";
import { memoryCgroups } from "../../src/adapters/sandbox/resource-limits.js";
import {
  DENIED_SOCKET_FAMILIES,
  filterArch,
  seccompProgram,
} from "../../src/adapters/sandbox/seccomp-filter.js";

interface Insn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

function decode(buf: Buffer): Insn[] {
  const out: Insn[] = [];
  for (let i = 0; i < buf.length; i += 8) {
    out.push({
      code: buf.readUInt16LE(i),
      jt: buf.readUInt8(i + 2),
      jf: buf.readUInt8(i + 3),
      k: buf.readUInt32LE(i + 4),
    });
  }
  return out;
}

/** Runs the classic-BPF program over one seccomp_data (nr, arch, args[0]) as the kernel would. */
function evaluate(prog: Insn[], nr: number, arch: number, arg0 = 0): number {
  let acc = 0;
  for (let pc = 0; pc < prog.length; ) {
    const insn = prog[pc] as Insn;
    switch (insn.code) {
      case 0x20:
        acc = insn.k === 0 ? nr : insn.k === 4 ? arch : insn.k === 16 ? arg0 : Number.NaN;
        pc += 1;
        break;
      case 0x15:
        pc += 1 + (acc === insn.k ? insn.jt : insn.jf);
        break;
      case 0x35:
        pc += 1 + (acc >= insn.k ? insn.jt : insn.jf);
        break;
      case 0x06:
        return insn.k;
      default:
        throw new Error(`unknown opcode ${insn.code}`);
    }
  }
  throw new Error("fell off the end");
}

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;

describe("the seccomp program", () => {
  const cases = {
    x64: { arch: 0xc000003e, other: 0x40000003, ptrace: 101, bpf: 321, socket: 41, read: 0 },
    arm64: { arch: 0xc00000b7, other: 0x40000028, ptrace: 117, bpf: 280, socket: 198, read: 63 },
  } as const;
  for (const [name, c] of Object.entries(cases)) {
    const arch = name as "x64" | "arm64";
    it(`${arch}: checks the architecture first, then denies the listed calls with EPERM`, () => {
      const prog = decode(seccompProgram(arch));
      expect(prog[0]).toEqual({ code: 0x20, jt: 0, jf: 0, k: 4 });
      expect(evaluate(prog, c.read, c.arch)).toBe(ALLOW);
      expect(evaluate(prog, c.read, c.other)).toBe(EPERM);
      for (const nr of [c.ptrace, c.bpf, 425, 426, 427])
        expect(evaluate(prog, nr, c.arch)).toBe(EPERM);
      for (const family of Object.values(DENIED_SOCKET_FAMILIES)) {
        expect(evaluate(prog, c.socket, c.arch, family)).toBe(EPERM);
      }
      expect(evaluate(prog, c.socket, c.arch, 2)).toBe(ALLOW);
      expect(evaluate(prog, c.socket, c.arch, 10)).toBe(ALLOW);
      const open = decode(seccompProgram(arch, { allowUnixSockets: true }));
      expect(evaluate(open, c.socket, c.arch, 1)).toBe(ALLOW);
      expect(evaluate(open, c.socket, c.arch, 16)).toBe(EPERM);
    });
  }

  it("x64 refuses the x32 ABI's numbers", () => {
    const prog = decode(seccompProgram("x64"));
    expect(evaluate(prog, 0x40000000 + 0, 0xc000003e)).toBe(EPERM);
  });

  it("is written only for x86_64 and aarch64", () => {
    expect(filterArch("x64")).toBe("x64");
    expect(filterArch("arm64")).toBe("arm64");
    expect(filterArch("riscv64")).toBeUndefined();
  });
});

const parent = await memoryCgroups(true).parent();
describe.skipIf(parent === undefined)(
  `a memory cgroup left by a dead host${parent === undefined ? " (skipped: no writable memory cgroup here)" : ""}`,
  () => {
    it("is removed when the next sandbox proves its cgroups; a live host's is kept", async () => {
      const dir = (parent as { dir: string }).dir;
      // pid 2^22 + 1 is past the kernel's pid_max: no process has it.
      const dead = path.join(dir, `warrant-${2 ** 22 + 1}-0123abcd`);
      const live = path.join(dir, `warrant-${process.pid}-0123abcd`);
      mkdirSync(dead);
      mkdirSync(live);
      try {
        expect(await memoryCgroups(true).parent()).toEqual(parent);
        expect(existsSync(dead)).toBe(false);
        expect(existsSync(live)).toBe(true);
      } finally {
        for (const d of [dead, live]) if (existsSync(d)) rmdirSync(d);
      }
    });
  },
);

describe("choosing a backend by name", () => {
  it("knows auto, bwrap and unshare and nothing else", () => {
    expect(["auto", "bwrap", "unshare"].every(isSandboxChoice)).toBe(true);
    expect(["none", "docker", "", "BWRAP"].some(isSandboxChoice)).toBe(false);
  });
  it("finds a program on PATH only in absolute directories where it is executable", () => {
    expect(onPath("sh", "/nonexistent:/bin")).toBe("/bin/sh");
    expect(onPath("sh", "bin:/nonexistent")).toBeUndefined();
    expect(onPath("sh", undefined)).toBeUndefined();
  });
  it("a named backend whose program is missing is sandbox/unavailable, naming it and why", async () => {
    const r = await chooseSandbox("bwrap", { bwrapPath: "/nonexistent/bwrap" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]).toMatchObject({
      code: "sandbox/unavailable",
      detail: { backend: "bwrap" },
    });
    expect(r.errors[0]?.message).toMatch(/^the bwrap sandbox backend is unavailable here: /);
    const u = await chooseSandbox("unshare", { unsharePath: "/nonexistent/unshare" });
    expect(u.ok ? "" : u.errors[0]?.code).toBe("sandbox/unavailable");
  });
});
