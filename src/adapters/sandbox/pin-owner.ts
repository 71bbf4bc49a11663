// Who holds a pinned baseline (or a probe folder), so that the pin of a process that died (killed
// before it could give the pin back) is removed by the next process that pins one or probes, and a live process's pin — or one of
// a process in another pid namespace, which this one cannot see — never is. The owner is the
// process's boot, pid namespace, pid and start time: a pid reused by another process does not
// keep a dead owner's pin alive.
import { closeSync, constants, openSync, readFileSync, readlinkSync, readSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { removePath } from "./tree-walk.js";

const OWNER_FILE = "owner.json";

/** Probe folders (a backend's, `warrant-probe-*`; the overlay's, `warrant-probe-overlay-*`). */
export const PROBE_DIR_PREFIX = "warrant-probe-";

interface Owner {
  readonly boot: string;
  readonly pidns: string;
  readonly pid: number;
  readonly start: string;
}

function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // The command name may hold spaces and parentheses: fields are counted after its last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function self(): Owner | undefined {
  try {
    return {
      boot: readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim(),
      pidns: readlinkSync("/proc/self/ns/pid"),
      pid: process.pid,
      start: startOf(process.pid) ?? "",
    };
  } catch {
    return undefined;
  }
}

/** Record this process as the owner of the pin at `base` (before anything is copied into it). */
export async function claimPin(base: string): Promise<void> {
  const me = self();
  if (me !== undefined) await writeFile(path.join(base, OWNER_FILE), JSON.stringify(me));
}

/** The owner recorded in a pin, read without following a link or waiting on a FIFO. */
function ownerOf(base: string): Owner | undefined {
  let fd: number;
  try {
    fd = openSync(
      path.join(base, OWNER_FILE),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const o = JSON.parse(buf.subarray(0, n).toString("utf8")) as Partial<Owner>;
    if (
      typeof o.boot !== "string" ||
      typeof o.pidns !== "string" ||
      typeof o.pid !== "number" ||
      typeof o.start !== "string"
    )
      return undefined;
    return o as Owner;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Whether the pin's owner is certainly gone: another boot, or a pid here that is not it. */
export function ownerGone(owner: Owner, me: Owner): boolean {
  if (owner.boot !== me.boot) return true;
  if (owner.pidns !== me.pidns) return false;
  return startOf(owner.pid) !== owner.start;
}

/** Remove the pins under `tempRoot` (named with `prefix`) whose owner is certainly gone. */
export async function sweepDeadPins(tempRoot: string, prefix: string): Promise<number> {
  const me = self();
  if (me === undefined) return 0;
  let removed = 0;
  let names: string[];
  try {
    names = await readdir(tempRoot);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const base = path.join(tempRoot, name);
    const owner = ownerOf(base);
    if (owner === undefined || !ownerGone(owner, me)) continue;
    if (await removePath(base)) removed += 1;
  }
  return removed;
}
