// File access on the host side of an environment, for trees a sandboxed command may have shaped to
// hurt us: every lookup is relative to an open directory (the kernel's /proc/self/fd/N link stands
// in for openat, which Node lacks), so depth beyond PATH_MAX works and no symlink is ever followed;
// every open is O_NOFOLLOW|O_NONBLOCK and checked with fstat, so a FIFO, socket or device is
// reported, never waited on; names stay bytes; contents are read in bounded chunks.
import { createHash } from "node:crypto";
import {
  type BigIntStats,
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
} from "node:fs";
import { base64url } from "../../core/records/canonical.js";

/** Linux's O_PATH (an fd that names an inode without opening it); Node does not export it. */
export const O_PATH = 0o10000000;
const DIR_FLAGS =
  constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const FILE_READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Hashing and capped reads go through a buffer of this size: memory stays bounded. */
export const CHUNK_BYTES = 1 << 20;

export type EntryKind =
  | "file"
  | "dir"
  | "symlink"
  | "whiteout"
  | "fifo"
  | "socket"
  | "char-device"
  | "block-device";

/** What a stat says an entry is; a character device 0/0 is an overlay whiteout. */
export function kindOf(st: BigIntStats): EntryKind {
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "dir";
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFIFO()) return "fifo";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return st.rdev === 0n ? "whiteout" : "char-device";
  return "block-device";
}

/** Anything but a regular file, a directory or a symlink: never opened, only reported. */
export function isSpecial(kind: EntryKind): boolean {
  return kind !== "file" && kind !== "dir" && kind !== "symlink" && kind !== "whiteout";
}

const PREFIX = "/proc/self/fd/";

/** The path of `name` inside the directory open as `dirFd` (the directory itself without one). */
export function at(dirFd: number, name?: Buffer): Buffer {
  const head = Buffer.from(`${PREFIX}${dirFd}`);
  return name === undefined ? head : Buffer.concat([head, Buffer.from("/"), name]);
}

export function errnoOf(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

/** Open a directory this host named (its own path; a symlink at the end is refused). */
export function openDirPath(p: string): number {
  return openSync(p, DIR_FLAGS);
}

/** Open the directory `name` inside `dirFd`; ELOOP/ENOTDIR when it is anything else. */
export function openDirAt(dirFd: number, name: Buffer): number {
  return openSync(at(dirFd, name), DIR_FLAGS);
}

/** An O_PATH handle on `name` (no permission on it is needed), never following a symlink. */
export function pathHandleAt(dirFd: number, name: Buffer): number {
  return openSync(at(dirFd, name), O_PATH | constants.O_NOFOLLOW);
}

/** lstat of `name` inside `dirFd`, or undefined when nothing is there. */
export function lstatAt(dirFd: number, name: Buffer): BigIntStats | undefined {
  try {
    return lstatSync(at(dirFd, name), { bigint: true });
  } catch (e) {
    if (errnoOf(e) === "ENOENT") return undefined;
    throw e;
  }
}

export function fstatBig(fd: number): BigIntStats {
  return fstatSync(fd, { bigint: true });
}

/** The names in the directory open as `dirFd`, as bytes. */
export function listDir(dirFd: number): Buffer[] {
  return readdirSync(at(dirFd), { encoding: "buffer" });
}

export function readlinkAt(dirFd: number, name: Buffer): Buffer {
  return readlinkSync(at(dirFd, name), { encoding: "buffer" });
}

/**
 * Set the mode of the directory `name` in `dirFd` through an O_PATH handle, so the inode changed
 * is the one looked up (a symlink swapped in is refused, its target never touched).
 */
export function chmodDirAt(dirFd: number, name: Buffer, mode: number): void {
  const h = openSync(at(dirFd, name), O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY);
  try {
    chmodSync(at(h), mode);
  } finally {
    closeSync(h);
  }
}

export type Opened =
  | { readonly ok: true; readonly fd: number; readonly st: BigIntStats }
  | { readonly ok: false; readonly kind: EntryKind | "gone" };

/**
 * Open `name` in `dirFd` for reading if — and only if — it is a regular file: a symlink (also one
 * swapped in after a check) fails the open, a FIFO opens without blocking and is closed again.
 */
export function openRegularAt(dirFd: number, name: Buffer): Opened {
  let fd: number;
  try {
    fd = openSync(at(dirFd, name), FILE_READ_FLAGS);
  } catch (e) {
    const code = errnoOf(e);
    if (code === "ELOOP") return { ok: false, kind: "symlink" };
    if (code === "ENOENT") return { ok: false, kind: "gone" };
    // A device node the sandbox cannot make, or one whose driver refuses the open.
    if (code === "ENXIO" || code === "ENODEV") return { ok: false, kind: "char-device" };
    throw e;
  }
  const st = fstatBig(fd);
  if (!st.isFile()) {
    closeSync(fd);
    return { ok: false, kind: kindOf(st) };
  }
  return { ok: true, fd, st };
}

/** Yield to the event loop now and then, so a long walk or hash never starves timers. */
export function yielder(every: number): () => Promise<void> {
  let n = 0;
  return async () => {
    n += 1;
    if (n % every === 0) await new Promise<void>((r) => setImmediate(r));
  };
}

/** `sha256:<b64url>` of everything readable from `fd`, read in bounded chunks. */
export async function hashFd(fd: number): Promise<string>;
export async function hashFd(fd: number, stop: () => boolean): Promise<string | undefined>;
/** With `stop`: asked after each chunk; true gives up (undefined) — a bound passed mid-file. */
export async function hashFd(fd: number, stop?: () => boolean): Promise<string | undefined> {
  const hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  const tick = yielder(8);
  let position = 0;
  for (;;) {
    const n = readSync(fd, buf, 0, buf.length, position);
    if (n === 0) break;
    hash.update(buf.subarray(0, n));
    position += n;
    if (stop?.() === true) return undefined;
    await tick();
  }
  return `sha256:${base64url(hash.digest())}`;
}

/** `sha256:<b64url>` of `bytes` (the same digest as the records' digestOfBytes, natively). */
export function hashBytes(bytes: Uint8Array): string {
  return `sha256:${base64url(createHash("sha256").update(bytes).digest())}`;
}

/** At most `maxBytes` from the start of `fd`; `truncated` when more was there. */
export function readCapped(
  fd: number,
  maxBytes: number,
): { readonly bytes: Uint8Array; readonly truncated: boolean } {
  const want = Math.max(0, Math.floor(maxBytes));
  const buf = Buffer.allocUnsafe(Math.min(want + 1, CHUNK_BYTES + 1));
  const parts: Buffer[] = [];
  let kept = 0;
  let position = 0;
  for (;;) {
    const room = Math.min(buf.length, want + 1 - kept);
    if (room <= 0) break;
    const n = readSync(fd, buf, 0, room, position);
    if (n === 0) break;
    parts.push(Buffer.from(buf.subarray(0, n)));
    kept += n;
    position += n;
  }
  const all = Buffer.concat(parts);
  const truncated = all.length > want;
  return { bytes: new Uint8Array(truncated ? all.subarray(0, want) : all), truncated };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Whether `bytes` is valid UTF-8. */
export function isUtf8(bytes: Uint8Array): boolean {
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * A name as text: UTF-8 names without a backslash as they are; otherwise backslashes doubled and
 * every byte of an invalid sequence written `\xHH` — one text per name, never two names the same.
 */
export function escapeName(bytes: Buffer): string {
  if (!bytes.includes(0x5c) && isUtf8(bytes)) return bytes.toString("utf8");
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const len = utf8SequenceLength(bytes, i);
    if (len === 0) {
      out += `\\x${(bytes[i] as number).toString(16).padStart(2, "0")}`;
      i += 1;
    } else {
      const s = bytes.subarray(i, i + len).toString("utf8");
      out += s === "\\" ? "\\\\" : s;
      i += len;
    }
  }
  return out;
}

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when none starts there. */
function utf8SequenceLength(b: Buffer, i: number): number {
  const c = b[i] as number;
  const cont = (k: number) => i + k < b.length && ((b[i + k] as number) & 0xc0) === 0x80;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const c1 = b[i + 1] ?? 0;
    if (c === 0xe0 && c1 < 0xa0) return 0;
    if (c === 0xed && c1 >= 0xa0) return 0;
    return cont(1) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const c1 = b[i + 1] ?? 0;
    if (c === 0xf0 && c1 < 0x90) return 0;
    if (c === 0xf4 && c1 >= 0x90) return 0;
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** A relative path of byte names as text (`/`-separated, each name escaped). */
export function displayPath(parts: readonly Buffer[]): string {
  return parts.map(escapeName).join("/");
}

/** A map key for a name: every byte one character, so distinct names never share a key. */
export function nameKey(name: Buffer): string {
  return name.toString("latin1");
}

export function closeQuietly(fd: number | undefined): void {
  if (fd === undefined) return;
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
}
