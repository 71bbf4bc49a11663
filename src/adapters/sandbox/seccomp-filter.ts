// The seccomp filter contained commands run under (bwrap `--seccomp FD`): a classic-BPF program,
// built here byte for byte, that answers EPERM to the system calls a build or test never needs and
// an attacker wants — io_uring, ptrace, reading or writing another process's memory, perf events,
// eBPF, userfaultfd, the kernel keyring — and to new sockets of the AF_UNIX, AF_NETLINK and
// AF_VSOCK families. It checks the architecture first: a system call made through another ABI
// (i386 on x86_64, x32) is refused whole, so no number can be smuggled past the table.

/** The architectures the filter is written for (Node's `process.arch` names). */
export type FilterArch = "x64" | "arm64";

const AUDIT_ARCH: Record<FilterArch, number> = { x64: 0xc000003e, arm64: 0xc00000b7 };

/** System call numbers of each architecture (x86_64 table; aarch64 uses the generic table). */
const SYSCALLS: Record<FilterArch, Readonly<Record<string, number>>> = {
  x64: {
    ptrace: 101,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    perf_event_open: 298,
    process_vm_readv: 310,
    process_vm_writev: 311,
    bpf: 321,
    userfaultfd: 323,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    socket: 41,
  },
  arm64: {
    ptrace: 117,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
    perf_event_open: 241,
    process_vm_readv: 270,
    process_vm_writev: 271,
    bpf: 280,
    userfaultfd: 282,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    socket: 198,
  },
};

/** Denied outright, whatever their arguments. */
export const DENIED_SYSCALLS = [
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  "perf_event_open",
  "bpf",
  "userfaultfd",
  "keyctl",
  "add_key",
  "request_key",
] as const;

/** Socket families `socket()` is refused for (socketpair stays allowed: pipes between children). */
export const DENIED_SOCKET_FAMILIES = { AF_UNIX: 1, AF_NETLINK: 16, AF_VSOCK: 40 } as const;

export interface FilterOptions {
  /** Allow `socket(AF_UNIX, …)` (a run that reaches a host service through a bound socket). */
  readonly allowUnixSockets?: boolean;
}

// Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const X32_SYSCALL_BIT = 0x40000000;
// Offsets in struct seccomp_data: nr, arch, then the instruction pointer and six 64-bit arguments
// (the low half of args[0] is at 16 on these little-endian machines).
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0_LOW = 16;

/** One instruction; a jump names its targets by label, resolved when the program is laid out. */
interface Insn {
  readonly code: number;
  readonly k: number;
  readonly jt?: string;
  readonly jf?: string;
  readonly label?: string;
}

const stmt = (code: number, k: number, label?: string): Insn =>
  label === undefined ? { code, k } : { code, k, label };
/** Compare with `k`; a target left out means the next instruction. */
const jump = (code: number, k: number, jt?: string, jf?: string): Insn => ({
  code,
  k,
  ...(jt === undefined ? {} : { jt }),
  ...(jf === undefined ? {} : { jf }),
});

/** The architecture this process runs on, when the filter is written for it. */
export function filterArch(arch: string = process.arch): FilterArch | undefined {
  return arch === "x64" || arch === "arm64" ? arch : undefined;
}

/**
 * The filter program for `arch` as bwrap reads it: `struct sock_filter` entries (u16 code, u8 jt,
 * u8 jf, u32 k), little-endian, back to back.
 */
export function seccompProgram(arch: FilterArch, options: FilterOptions = {}): Buffer {
  const table = SYSCALLS[arch];
  const denied = DENIED_SYSCALLS.map((name) => table[name] as number);
  const families = Object.entries(DENIED_SOCKET_FAMILIES)
    .filter(([name]) => !(name === "AF_UNIX" && options.allowUnixSockets === true))
    .map(([, n]) => n);
  const prog: Insn[] = [];
  prog.push(stmt(LD_W_ABS, OFF_ARCH));
  prog.push(jump(JEQ_K, AUDIT_ARCH[arch], undefined, "deny"));
  prog.push(stmt(LD_W_ABS, OFF_NR));
  // The x32 ABI shares x86_64's architecture value: its numbers carry this bit.
  if (arch === "x64") prog.push(jump(JGE_K, X32_SYSCALL_BIT, "deny"));
  for (const nr of denied) prog.push(jump(JEQ_K, nr, "deny"));
  if (families.length > 0) {
    prog.push(jump(JEQ_K, table.socket as number, undefined, "allow"));
    prog.push(stmt(LD_W_ABS, OFF_ARG0_LOW));
    for (const family of families) prog.push(jump(JEQ_K, family, "deny"));
  }
  prog.push(stmt(RET_K, RET_ALLOW, "allow"));
  prog.push(stmt(RET_K, RET_ERRNO | EPERM, "deny"));
  const where = new Map(
    prog.flatMap((insn, i) => (insn.label === undefined ? [] : [[insn.label, i]])),
  );
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined) return 0;
    const to = where.get(label) as number;
    // Classic BPF only jumps forward, at most 255 instructions.
    if (to <= from || to - from - 1 > 255)
      throw new Error(`seccomp: no jump from ${from} to ${label}`);
    return to - from - 1;
  };
  const out = Buffer.alloc(prog.length * 8);
  for (const [i, insn] of prog.entries()) {
    out.writeUInt16LE(insn.code, i * 8);
    out.writeUInt8(offset(i, insn.jt), i * 8 + 2);
    out.writeUInt8(offset(i, insn.jf), i * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  }
  return out;
}
