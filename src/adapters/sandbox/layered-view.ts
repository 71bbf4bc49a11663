// The host's view of an environment's workspace without mounting anything: the writable layer (an
// overlay's upper directory, or the whole copy in copy mode) over the pinned baseline, merged as
// overlayfs merges them — an upper entry hides the lower one, a whiteout (character device 0/0)
// hides it without replacing it, an opaque upper directory hides the lower directory's entries.
// Reads, writes and removals resolve a workspace path through that merged tree, following
// symlinks only while they stay inside, and act on the upper layer with overlay semantics: a
// lower directory is copied up before anything is made in it, a removed lower file leaves a
// whiteout. Every access is relative to an open directory, O_NOFOLLOW|O_NONBLOCK, and checked.
//
// The pieces: layered-tree.ts (the merged tree and the resolution of a path through it) and
// layered-copy-up.ts (the upper layer made as overlayfs would); here, reading, writing, removing.
import { closeSync, constants, futimesSync, openSync, unlinkSync, writeSync } from "node:fs";
import { fail, ok, type Result } from "../../core/result.js";
import { normaliseRelativePath } from "../../core/taskpack/relative-path.js";
import type { BaselineNode } from "./baseline-pin.js";
import {
  at,
  closeQuietly,
  errnoOf,
  fstatBig,
  kindOf,
  lstatAt,
  nameKey,
  openDirAt,
  openDirPath,
  openRegularAt,
  readCapped,
} from "./host-fs.js";
import { own, upperDirFor, whiteout } from "./layered-copy-up.js";
import {
  closeLevel,
  type Entry,
  type Layers,
  type Level,
  outside,
  problem,
  resolve,
  special,
  upperKind,
  type ViewContext,
  viewContext,
} from "./layered-tree.js";
import { partsOf } from "./tree-walk.js";

export type { LayerHooks, Layers, Resolved } from "./layered-tree.js";

/** Reads without a cap of their own stop here (`sandbox/too-large`): never a whole-file string. */
export const DEFAULT_READ_LIMIT = 64 << 20;

export function createLayeredView(layers: Layers) {
  const ctx = viewContext(layers);
  return {
    resolve: (relPath: string, followFinal: boolean) => resolve(ctx, relPath, followFinal),
    read: (relPath: string, maxBytes: number) => readFile(ctx, relPath, maxBytes),
    write: (relPath: string, bytes: Uint8Array) => writeFile(ctx, relPath, bytes),
    remove: (relPath: string) => removeFile(ctx, relPath),
  };
}

export type LayeredView = ReturnType<typeof createLayeredView>;

const display = (parts: readonly Buffer[]) => parts.map((p) => p.toString("utf8")).join("/");

/** Read at most `maxBytes` of a workspace file, as the merged tree has it. */
async function readFile(
  ctx: ViewContext,
  relPath: string,
  maxBytes: number,
): Promise<Result<{ readonly bytes: Uint8Array; readonly truncated: boolean }>> {
  const r = await guarded(relPath, "sandbox/read-failed", () => resolve(ctx, relPath, true));
  if (!r.ok) return r;
  if (!r.value.exists) return fail([problem("sandbox/not-found", relPath, "no such file")]);
  const { entry, parts, level } = r.value;
  try {
    if (entry.kind === "dir") return fail([problem("sandbox/read-failed", relPath, "a directory")]);
    if (entry.kind !== "file") return fail([special(relPath, entry.kind)]);
    await ctx.layers.hooks?.beforeOpen?.(display(parts));
    const name = parts[parts.length - 1] as Buffer;
    const opened =
      entry.layer === "upper"
        ? openRegularAt(level.upperFd as number, name)
        : openLowerFile(ctx, entry.lower as BaselineNode);
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

/** Open the baseline file of a lower entry, one directory at a time from the pinned tree. */
function openLowerFile(ctx: ViewContext, entry: BaselineNode) {
  const parts = partsOf(entry.node);
  let dirFd = openDirPath(ctx.layers.baseline.tree);
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

const SECOND_NS = 1_000_000_000n;

/** The mtime (ns) of the file an entry shows, upper or lower; undefined when it is no file. */
function mtimeOf(ctx: ViewContext, entry: Entry): bigint | undefined {
  if (entry.kind !== "file") return undefined;
  if (entry.layer === "upper") return entry.upperSt?.mtimeNs;
  const opened = openLowerFile(ctx, entry.lower as BaselineNode);
  if (!opened.ok) return undefined;
  try {
    return fstatBig(opened.fd).mtimeNs;
  } finally {
    closeQuietly(opened.fd);
  }
}

/**
 * A file rewritten within the whole second of its previous mtime is moved to the next second:
 * caches that trust a whole-second mtime and the size (Python's bytecode, make) would otherwise
 * take a same-size edit for the file they already compiled, and a check would run stale code.
 */
function laterSecond(fd: number, beforeNs: bigint | undefined): void {
  if (beforeNs === undefined) return;
  const st = fstatBig(fd);
  if (st.mtimeNs / SECOND_NS > beforeNs / SECOND_NS) return;
  futimesSync(fd, Number(st.atimeNs / 1_000_000n) / 1000, Number(beforeNs / SECOND_NS + 1n));
}

/** Write a workspace file in the upper layer, its directories copied up first. */
async function writeFile(
  ctx: ViewContext,
  relPath: string,
  bytes: Uint8Array,
): Promise<Result<{ readonly path: string }>> {
  const r = await guarded(relPath, "sandbox/write-failed", () => resolve(ctx, relPath, true));
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
    const beforeNs = r.value.exists ? mtimeOf(ctx, r.value.entry) : undefined;
    level = await upperDirFor(ctx, parts.slice(0, -1));
    const dirFd = level.upperFd as number;
    const name = parts[parts.length - 1] as Buffer;
    const st = lstatAt(dirFd, name);
    const kind = st === undefined ? undefined : upperKind(ctx, st);
    if (kind === "whiteout") unlinkSync(at(dirFd, name));
    else if (kind === "symlink")
      return fail([outside(relPath, "replaced by a symlink while it was written", "symlink-race")]);
    else if (kind === "dir") return fail([problem("sandbox/write-failed", relPath, "a directory")]);
    else if (kind !== undefined && kind !== "file") return fail([special(relPath, kind)]);
    const lowerChild = level.lower?.children?.get(nameKey(name));
    const mode = lowerChild?.kind === "file" ? lowerChild.mode : 0o644;
    await ctx.layers.hooks?.beforeOpen?.(display(parts));
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
      laterSecond(fd, beforeNs);
      own(ctx, fd);
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

/** Remove a workspace file: from the upper layer, and hidden by a whiteout when below too. */
async function removeFile(
  ctx: ViewContext,
  relPath: string,
): Promise<Result<{ readonly path: string }>> {
  const r = await guarded(relPath, "sandbox/remove-failed", () => resolve(ctx, relPath, true));
  if (!r.ok) return r;
  if (!r.value.exists) return fail([problem("sandbox/not-found", relPath, "no such file")]);
  const { entry, parts } = r.value;
  closeLevel(r.value.level);
  if (entry.kind === "dir") return fail([problem("sandbox/remove-failed", relPath, "a directory")]);
  let level: Level | undefined;
  try {
    level = await upperDirFor(ctx, parts.slice(0, -1));
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
