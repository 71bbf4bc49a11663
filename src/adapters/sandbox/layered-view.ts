// The host's view of an environment's workspace without mounting anything: the writable layer (an
// overlay's upper directory, or the whole copy in copy mode) over the pinned baseline, merged as
// overlayfs merges them — an upper entry hides the lower one, a whiteout (character device 0/0)
// hides it without replacing it, an opaque upper directory hides the lower directory's entries.
// Reads, writes and removals resolve a workspace path through that merged tree, following
// symlinks only while they stay inside, and act on the upper layer with overlay semantics: a
// lower directory is copied up before anything is made in it, a removed lower file leaves a
// whiteout. Every access is relative to an open directory, O_NOFOLLOW|O_NONBLOCK, and checked.
import type { BigIntStats } from "node:fs";
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  mkdirSync,
  openSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { fail, ok, type Problem, type Result } from "../../core/result.js";
import { normaliseRelativePath } from "../../core/taskpack/relative-path.js";
import type { BaselineNode, PinnedBaseline, RunAs } from "./baseline-pin.js";
import { hostCommand } from "./host-command.js";
import {
  at,
  closeQuietly,
  type EntryKind,
  errnoOf,
  fstatBig,
  kindOf,
  lstatAt,
  nameKey,
  openDirAt,
  openDirPath,
  openRegularAt,
  readCapped,
  readlinkAt,
} from "./host-fs.js";
import { OpaqueMemo } from "./opaque-dirs.js";
import { partsOf } from "./tree-walk.js";

/** Test seams: counting, and acting between a check and the open that follows it. */
export interface LayerHooks {
  readonly beforeOpen?: (relPath: string) => void | Promise<void>;
}

export interface Layers {
  /** The workspace's path as commands see it (absolute symlink targets are read against it). */
  readonly workspace: string;
  /** The writable layer on the host. */
  readonly upper: string;
  readonly baseline: PinnedBaseline;
  /** Overlay mode: the baseline shows through the upper layer; copy mode: upper is everything. */
  readonly overlay: boolean;
  readonly runAs: RunAs | undefined;
  readonly hooks?: LayerHooks | undefined;
  /** The environment's opaque answers, shared with its change detection (else the view's own). */
  readonly opaque?: OpaqueMemo | undefined;
}

const MAX_SYMLINK_HOPS = 40;
/** Reads without a cap of their own stop here (`sandbox/too-large`): never a whole-file string. */
export const DEFAULT_READ_LIMIT = 64 << 20;

function problem(code: string, relPath: string, message: string, reason?: string): Problem {
  return {
    code,
    path: "",
    message: `${relPath}: ${message}`,
    ...(reason === undefined ? {} : { detail: { reason } }),
  };
}

function outside(relPath: string, message: string, reason: string): Problem {
  return problem("workbench/patch-outside-policy", relPath, message, reason);
}

function special(relPath: string, kind: EntryKind | "gone"): Problem {
  return {
    code: "environment/special-file",
    path: "",
    message: `${relPath}: a ${kind}, not a regular file: never opened`,
    detail: { kind },
  };
}

/** One directory level of the merged tree: the upper directory (open) and the visible lower one. */
interface Level {
  upperFd: number | undefined;
  lower: BaselineNode | undefined;
}

interface Entry {
  readonly kind: EntryKind;
  readonly layer: "upper" | "lower";
  readonly upperSt: BigIntStats | undefined;
  /** The lower entry at this path, when the lower directory shows through here. */
  readonly lower: BaselineNode | undefined;
}

export type Resolved =
  | {
      readonly exists: true;
      readonly entry: Entry;
      readonly parts: readonly Buffer[];
      /** The level holding the entry (its fds are the caller's to close with closeLevel). */
      readonly level: Level;
    }
  | { readonly exists: false; readonly parts: readonly Buffer[] };

function closeLevel(level: Level): void {
  closeQuietly(level.upperFd);
  level.upperFd = undefined;
}

export function createLayeredView(layers: Layers) {
  const workspaceBytes = Buffer.from(layers.workspace);

  function rootLevel(): Level {
    return {
      upperFd: openDirPath(layers.upper),
      lower: layers.overlay ? layers.baseline.root : undefined,
    };
  }

  // Setting the opaque attribute changes a directory's ctime: the answer is kept against it.
  const memo = layers.opaque ?? new OpaqueMemo();
  async function isOpaque(upperDirFd: number): Promise<boolean> {
    const [opaque] = await memo.opaque([upperDirFd]);
    return opaque === true;
  }

  function lookup(level: Level, name: Buffer): Entry | undefined {
    const lowerChild = level.lower?.children?.get(nameKey(name));
    const st = level.upperFd === undefined ? undefined : lstatAt(level.upperFd, name);
    if (st !== undefined) {
      const kind = layers.overlay ? kindOf(st) : copyKind(st);
      if (kind === "whiteout") return undefined;
      return { kind, layer: "upper", upperSt: st, lower: lowerChild };
    }
    if (lowerChild === undefined) return undefined;
    return { kind: lowerChild.kind, layer: "lower", upperSt: undefined, lower: lowerChild };
  }

  /** Move `level` into the directory `name` (an entry of kind dir). */
  async function descend(level: Level, name: Buffer, entry: Entry): Promise<void> {
    const lowerDir = entry.lower?.kind === "dir" ? entry.lower : undefined;
    if (entry.layer === "lower") {
      closeLevel(level);
      level.lower = lowerDir;
      return;
    }
    const fd = openDirAt(level.upperFd as number, name);
    closeLevel(level);
    level.upperFd = fd;
    level.lower = lowerDir !== undefined && !(await isOpaque(fd)) ? lowerDir : undefined;
  }

  function readTarget(level: Level, name: Buffer, entry: Entry): Buffer {
    return entry.layer === "upper"
      ? readlinkAt(level.upperFd as number, name)
      : (entry.lower?.target as Buffer);
  }

  /** Where a symlink at `parent/…` pointing to `target` leads, or undefined when it leaves. */
  function follow(parent: readonly Buffer[], target: Buffer): Buffer[] | undefined {
    let base: Buffer[];
    let rest: Buffer;
    if (target[0] === 0x2f) {
      if (target.equals(workspaceBytes)) return [];
      const prefix = Buffer.concat([workspaceBytes, Buffer.from("/")]);
      if (!target.subarray(0, prefix.length).equals(prefix)) return undefined;
      base = [];
      rest = target.subarray(prefix.length);
    } else {
      base = [...parent];
      rest = target;
    }
    let start = 0;
    for (let i = 0; i <= rest.length; i += 1) {
      if (i < rest.length && rest[i] !== 0x2f) continue;
      const seg = rest.subarray(start, i);
      start = i + 1;
      if (seg.length === 0 || (seg.length === 1 && seg[0] === 0x2e)) continue;
      if (seg.length === 2 && seg[0] === 0x2e && seg[1] === 0x2e) {
        if (base.length === 0) return undefined;
        base.pop();
      } else base.push(Buffer.from(seg));
    }
    return base;
  }

  /**
   * Resolve a workspace path through the merged tree. Symlinks on the way (and the final one when
   * `followFinal`) are followed while they stay inside; one that leaves, dangles, loops or leads
   * into `.git` is refused with `workbench/patch-outside-policy`.
   */
  async function resolve(relPath: string, followFinal: boolean): Promise<Result<Resolved>> {
    const norm = normaliseRelativePath(relPath);
    if (!norm.ok) {
      const e = norm.errors[0] as Problem;
      return fail([outside(relPath, e.message, String(e.detail?.reason))]);
    }
    let queue: Buffer[] = norm.value.split("/").map((s) => Buffer.from(s));
    let done: Buffer[] = [];
    let hops = 0;
    // How many of the next components came from a symlink's target: one missing there dangles.
    let targetLeft = 0;
    const level = rootLevel();
    try {
      while (queue.length > 0) {
        const name = queue.shift() as Buffer;
        const final = queue.length === 0;
        const inTarget = targetLeft > 0;
        if (inTarget) targetLeft -= 1;
        const entry = lookup(level, name);
        if (entry === undefined) {
          if (inTarget) {
            closeLevel(level);
            return fail([outside(relPath, "a dangling symlink is on the path", "symlink")]);
          }
          closeLevel(level);
          return ok({ exists: false, parts: [...done, name, ...queue] });
        }
        if (entry.kind === "symlink" && (!final || followFinal)) {
          hops += 1;
          const next =
            hops > MAX_SYMLINK_HOPS ? undefined : follow(done, readTarget(level, name, entry));
          if (next === undefined) {
            closeLevel(level);
            return fail([
              outside(
                relPath,
                hops > MAX_SYMLINK_HOPS
                  ? "too many symlinks on the path"
                  : "a symlink on the path leaves the workspace",
                hops > MAX_SYMLINK_HOPS ? "symlink" : "symlink-escape",
              ),
            ]);
          }
          if (next.some((p) => p.toString("latin1").toLowerCase() === ".git")) {
            closeLevel(level);
            return fail([outside(relPath, "a symlink on the path leads into .git", "git")]);
          }
          targetLeft = next.length + targetLeft;
          closeLevel(level);
          const fresh = rootLevel();
          level.upperFd = fresh.upperFd;
          level.lower = fresh.lower;
          queue = [...next, ...queue];
          done = [];
          continue;
        }
        if (final) return ok({ exists: true, entry, parts: [...done, name], level });
        if (entry.kind !== "dir") {
          closeLevel(level);
          if (inTarget)
            return fail([outside(relPath, "a dangling symlink is on the path", "symlink")]);
          return ok({ exists: false, parts: [...done, name, ...queue] });
        }
        await descend(level, name, entry);
        done.push(name);
      }
      closeLevel(level);
      return fail([outside(relPath, "the path names the workspace itself", "empty")]);
    } catch (e) {
      closeLevel(level);
      throw e;
    }
  }

  const display = (parts: readonly Buffer[]) => parts.map((p) => p.toString("utf8")).join("/");

  /** Read at most `maxBytes` of a workspace file, as the merged tree has it. */
  async function read(
    relPath: string,
    maxBytes: number,
  ): Promise<Result<{ readonly bytes: Uint8Array; readonly truncated: boolean }>> {
    const r = await guarded(relPath, "sandbox/read-failed", () => resolve(relPath, true));
    if (!r.ok) return r;
    if (!r.value.exists) return fail([problem("sandbox/not-found", relPath, "no such file")]);
    const { entry, parts, level } = r.value;
    try {
      if (entry.kind === "dir")
        return fail([problem("sandbox/read-failed", relPath, "a directory")]);
      if (entry.kind !== "file") return fail([special(relPath, entry.kind)]);
      await layers.hooks?.beforeOpen?.(display(parts));
      const name = parts[parts.length - 1] as Buffer;
      const opened =
        entry.layer === "upper"
          ? openRegularAt(level.upperFd as number, name)
          : openLowerFile(entry.lower as BaselineNode);
      if (!opened.ok) {
        return fail([
          opened.kind === "symlink"
            ? outside(relPath, "replaced by a symlink while it was read", "symlink-race")
            : opened.kind === "gone"
              ? problem("sandbox/not-found", relPath, "no such file")
              : special(relPath, opened.kind),
        ]);
      }
      try {
        return ok(readCapped(opened.fd, maxBytes));
      } finally {
        closeQuietly(opened.fd);
      }
    } catch (e) {
      return fail([problem("sandbox/read-failed", relPath, (e as Error).message)]);
    } finally {
      closeLevel(level);
    }
  }

  function openLowerFile(entry: BaselineNode) {
    const parts = partsOf(entry.node);
    let dirFd = openDirPath(layers.baseline.tree);
    try {
      for (const name of parts.slice(0, -1)) {
        const next = openDirAt(dirFd, name);
        closeQuietly(dirFd);
        dirFd = next;
      }
      return openRegularAt(dirFd, parts[parts.length - 1] as Buffer);
    } finally {
      closeQuietly(dirFd);
    }
  }

  function own(fd: number): void {
    if (layers.runAs !== undefined) fchownSync(fd, layers.runAs.uid, layers.runAs.gid);
  }

  /** Make a directory `name` in `parentFd` with exactly `mode`, owned by the command's uid. */
  function makeDir(parentFd: number, name: Buffer, mode: number): number {
    mkdirSync(at(parentFd, name), 0o700);
    const fd = openDirAt(parentFd, name);
    own(fd);
    fchmodSync(fd, mode);
    return fd;
  }

  /** Create overlay whiteouts for `names` in the upper directory open as `dirFd`. */
  async function whiteout(dirFd: number, names: readonly Buffer[]): Promise<void> {
    if (names.length === 0) return;
    // Node passes argv as text: the names go to xargs as NUL-separated bytes on a pipe instead.
    await hostCommand(
      "sandbox/whiteout-failed",
      ["xargs", "-0", "sh", "-c", 'for n; do mknod -- "$n" c 0 0 || exit 255; done', "sh"],
      {
        cwd: `/proc/${process.pid}/fd/${dirFd}`,
        stdin: Buffer.concat(names.flatMap((n) => [n, Buffer.from([0])])),
      },
    );
  }

  /**
   * The upper directory for `dirParts`, made as overlayfs would: a lower directory is copied up
   * (same mode), a directory over a whiteout hides the lower one it replaces (a whiteout for each
   * of its entries), anything else is new. Fails with ENOTDIR when a non-directory is in the way.
   */
  async function upperDirFor(dirParts: readonly Buffer[]): Promise<Level> {
    const level = rootLevel();
    try {
      for (const name of dirParts) {
        const fd = level.upperFd as number;
        const st = lstatAt(fd, name);
        const kind = st === undefined ? undefined : layers.overlay ? kindOf(st) : copyKind(st);
        const lowerChild = level.lower?.children?.get(nameKey(name));
        let next: number;
        let lower: BaselineNode | undefined;
        if (kind === "dir") {
          next = openDirAt(fd, name);
          lower = lowerChild?.kind === "dir" && !(await isOpaque(next)) ? lowerChild : undefined;
        } else if (kind === "whiteout") {
          unlinkSync(at(fd, name));
          next = makeDir(fd, name, 0o755);
          const hidden = lowerChild?.kind === "dir" ? lowerChild.children : undefined;
          await whiteout(
            next,
            [...(hidden?.keys() ?? [])].map((k) => Buffer.from(k, "latin1")),
          );
          lower = undefined;
        } else if (kind !== undefined || (lowerChild !== undefined && lowerChild.kind !== "dir")) {
          throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
        } else if (lowerChild?.kind === "dir") {
          next = makeDir(fd, name, lowerChild.mode);
          lower = lowerChild;
        } else {
          next = makeDir(fd, name, 0o755);
          lower = undefined;
        }
        closeLevel(level);
        level.upperFd = next;
        level.lower = lower;
      }
      return level;
    } catch (e) {
      closeLevel(level);
      throw e;
    }
  }

  async function write(
    relPath: string,
    bytes: Uint8Array,
  ): Promise<Result<{ readonly path: string }>> {
    const r = await guarded(relPath, "sandbox/write-failed", () => resolve(relPath, true));
    if (!r.ok) return r;
    if (r.value.exists) closeLevel(r.value.level);
    const parts = r.value.parts;
    if (parts.some((p) => p.toString("latin1").toLowerCase() === ".git")) {
      return fail([outside(relPath, "the path is inside .git", "git")]);
    }
    if (r.value.exists) {
      const kind = r.value.entry.kind;
      if (kind === "dir") return fail([problem("sandbox/write-failed", relPath, "a directory")]);
      if (kind !== "file") return fail([special(relPath, kind)]);
    }
    let level: Level | undefined;
    try {
      level = await upperDirFor(parts.slice(0, -1));
      const dirFd = level.upperFd as number;
      const name = parts[parts.length - 1] as Buffer;
      const st = lstatAt(dirFd, name);
      const kind = st === undefined ? undefined : layers.overlay ? kindOf(st) : copyKind(st);
      if (kind === "whiteout") unlinkSync(at(dirFd, name));
      else if (kind === "symlink")
        return fail([
          outside(relPath, "replaced by a symlink while it was written", "symlink-race"),
        ]);
      else if (kind === "dir")
        return fail([problem("sandbox/write-failed", relPath, "a directory")]);
      else if (kind !== undefined && kind !== "file") return fail([special(relPath, kind)]);
      const lowerChild = level.lower?.children?.get(nameKey(name));
      const mode = lowerChild?.kind === "file" ? lowerChild.mode : 0o644;
      await layers.hooks?.beforeOpen?.(display(parts));
      let fd: number;
      try {
        fd = openSync(
          at(dirFd, name),
          constants.O_WRONLY |
            constants.O_CREAT |
            constants.O_TRUNC |
            constants.O_NOFOLLOW |
            constants.O_NONBLOCK,
          mode & 0o777,
        );
      } catch (e) {
        if (errnoOf(e) === "ELOOP")
          return fail([
            outside(relPath, "replaced by a symlink while it was written", "symlink-race"),
          ]);
        if (errnoOf(e) === "ENXIO") return fail([special(relPath, "fifo")]);
        throw e;
      }
      try {
        const opened = fstatBig(fd);
        if (!opened.isFile()) return fail([special(relPath, kindOf(opened))]);
        let off = 0;
        while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
        own(fd);
      } finally {
        closeSync(fd);
      }
      return ok({ path: norm(relPath) });
    } catch (e) {
      return fail([problem("sandbox/write-failed", relPath, (e as Error).message)]);
    } finally {
      if (level !== undefined) closeLevel(level);
    }
  }

  async function remove(relPath: string): Promise<Result<{ readonly path: string }>> {
    const r = await guarded(relPath, "sandbox/remove-failed", () => resolve(relPath, true));
    if (!r.ok) return r;
    if (!r.value.exists) return fail([problem("sandbox/not-found", relPath, "no such file")]);
    const { entry, parts } = r.value;
    closeLevel(r.value.level);
    if (entry.kind === "dir")
      return fail([problem("sandbox/remove-failed", relPath, "a directory")]);
    let level: Level | undefined;
    try {
      level = await upperDirFor(parts.slice(0, -1));
      const dirFd = level.upperFd as number;
      const name = parts[parts.length - 1] as Buffer;
      const st = lstatAt(dirFd, name);
      if (st !== undefined) {
        if (st.isDirectory())
          return fail([problem("sandbox/remove-failed", relPath, "replaced by a directory")]);
        unlinkSync(at(dirFd, name));
      }
      if (level.lower?.children?.has(nameKey(name)) === true) await whiteout(dirFd, [name]);
      return ok({ path: display(parts) });
    } catch (e) {
      return fail([problem("sandbox/remove-failed", relPath, (e as Error).message)]);
    } finally {
      if (level !== undefined) closeLevel(level);
    }
  }

  return { resolve, read, write, remove };
}

export type LayeredView = ReturnType<typeof createLayeredView>;

/** In copy mode nothing is a whiteout: a 0/0 device a command made is just a device. */
function copyKind(st: BigIntStats): EntryKind {
  const kind = kindOf(st);
  return kind === "whiteout" ? "char-device" : kind;
}

function norm(relPath: string): string {
  const n = normaliseRelativePath(relPath);
  return n.ok ? n.value : relPath;
}

/** Run a resolution; an I/O failure (not a refusal) becomes `code`. */
async function guarded<T>(
  relPath: string,
  code: string,
  f: () => Promise<Result<T>>,
): Promise<Result<T>> {
  try {
    return await f();
  } catch (e) {
    const errno = errnoOf(e);
    if (errno === "ENOTDIR" && code === "sandbox/read-failed")
      return fail([problem("sandbox/not-found", relPath, "no such file")]);
    return fail([problem(code, relPath, (e as Error).message)]);
  }
}
