// What a contained command inherits beyond what it is given: nothing. Node opens every file, socket
// and pipe of its own close-on-exec, so the descriptors a child would be handed unasked are those
// this process inherited, without that flag, from whatever started it (a shell's `9>file`, a
// supervisor's pipe, a CI runner's). A spawn passes them on (libuv leaves a descriptor it is not
// told about as it is) and no step of a sandbox's chain closes them, so a command could write to a
// file or pipe of the host's through one. Each is covered in the child by /dev/null instead.
import type { IOType } from "node:child_process";
import { closeSync, openSync, readdirSync, readSync } from "node:fs";

/** O_CLOEXEC on Linux, as /proc/PID/fdinfo's octal `flags` show it. */
const O_CLOEXEC = 0o2000000;

/** What a spawn puts at one descriptor of the child. */
export type StdioEntry = IOType | number;

/**
 * The descriptors of this process, from 3 on, that a child would inherit (open and not
 * close-on-exec), in ascending order; none where /proc cannot be read.
 */
export function inheritableFds(): number[] {
  let names: string[];
  try {
    names = readdirSync("/proc/self/fdinfo");
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < 3) continue;
    const flags = /^flags:\s*([0-7]+)$/m.exec(fdinfo(name))?.[1];
    if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) found.push(fd);
  }
  return found.sort((a, b) => a - b);
}

/** The start of /proc/self/fdinfo/NAME (its `pos` and `flags` lines), "" once it is closed. */
const info = Buffer.allocUnsafe(256);
function fdinfo(name: string): string {
  let fd: number;
  try {
    fd = openSync(`/proc/self/fdinfo/${name}`, "r");
  } catch {
    return ""; // closed since the listing (the listing's own descriptor, say)
  }
  try {
    return info.toString("latin1", 0, readSync(fd, info, 0, info.length, 0));
  } catch {
    return "";
  } finally {
    closeSync(fd);
  }
}

/**
 * `stdio` with `devNull` (an open descriptor of /dev/null) at each of `inherited` that `stdio`
 * does not set: past its end, or `ignore` from 3 on (which libuv leaves as it is).
 */
export function coverInherited(
  stdio: readonly StdioEntry[],
  inherited: readonly number[],
  devNull: number,
): StdioEntry[] {
  const out = [...stdio];
  for (const fd of inherited) {
    if (fd < 3) continue;
    while (out.length <= fd) out.push("ignore");
    if (out[fd] === "ignore") out[fd] = devNull;
  }
  return out;
}

/**
 * `stdio` for a spawn whose child must inherit nothing else: `close` (after the spawn) closes the
 * /dev/null it opened, if it needed one.
 */
export function withoutInherited(stdio: readonly StdioEntry[]): {
  readonly stdio: StdioEntry[];
  close(): void;
} {
  const inherited = inheritableFds();
  if (inherited.length === 0) return { stdio: [...stdio], close: () => undefined };
  const devNull = openSync("/dev/null", "r+");
  return { stdio: coverInherited(stdio, inherited, devNull), close: () => closeSync(devNull) };
}
