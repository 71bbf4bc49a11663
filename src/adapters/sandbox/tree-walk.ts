// Walking and removing directory trees a sandboxed command may have shaped: iterative (no
// recursion, so no stack limit), holding one directory open at a time (going back up through `..`,
// checked to be the directory we came from), so neither depth nor PATH_MAX bounds what it can
// reach; directories without permission are opened by their owner after a chmod through an
// O_PATH handle.
import { type BigIntStats, closeSync, fchmodSync, rmdirSync, unlinkSync } from "node:fs";
import path from "node:path";
import { WarrantError } from "../../core/result.js";
import {
  at,
  chmodDirAt,
  closeQuietly,
  type EntryKind,
  errnoOf,
  fstatBig,
  kindOf,
  listDir,
  lstatAt,
  openDirAt,
  openDirPath,
  yielder,
} from "./host-fs.js";

/**
 * The file-system calls whose refusals and races the walk and the removal handle, called through
 * this object only so that a test can make one of them fail or race once (`vi.spyOn`): the tests
 * run as root, which no permission refuses. Nothing else replaces them.
 */
export const treeFs = {
  chmodDirAt,
  fchmodSync,
  fstatBig,
  lstatAt,
  openDirAt,
  openDirPath,
  rmdirSync,
  unlinkSync,
};

/** A relative path as a chain of byte names (shared prefixes, built without copying). */
export interface PathNode {
  readonly up: PathNode | undefined;
  readonly name: Buffer;
  readonly depth: number;
}

export function child(up: PathNode | undefined, name: Buffer): PathNode {
  return { up, name, depth: (up?.depth ?? 0) + 1 };
}

export function partsOf(node: PathNode | undefined): Buffer[] {
  const out: Buffer[] = [];
  for (let n = node; n !== undefined; n = n.up) out.push(n.name);
  return out.reverse();
}

interface Ident {
  readonly dev: bigint;
  readonly ino: bigint;
}

function same(st: BigIntStats, id: Ident): boolean {
  return st.dev === id.dev && st.ino === id.ino;
}

/** Open `name` in `dirFd` as a directory; a directory without permission is opened after chmod. */
function openChildDir(dirFd: number, name: Buffer, fixMode: boolean): number {
  try {
    return treeFs.openDirAt(dirFd, name);
  } catch (e) {
    if (!fixMode || errnoOf(e) !== "EACCES") throw e;
    treeFs.chmodDirAt(dirFd, name, 0o700);
    return treeFs.openDirAt(dirFd, name);
  }
}

/** Go from `fd` to its parent, which must be `expected`; `fd` is closed. */
function ascend(fd: number, expected: Ident): number {
  const up = treeFs.openDirAt(fd, Buffer.from(".."));
  closeSync(fd);
  if (!same(treeFs.fstatBig(up), expected)) {
    closeSync(up);
    throw new WarrantError("sandbox/tree-changed", "a directory moved while it was walked");
  }
  return up;
}

export interface Visitor<S> {
  /**
   * Called for each entry under the root, directories before what they hold. Returning a state
   * for a directory walks into it (the state is handed to its entries); undefined skips it.
   */
  entry(
    dirFd: number,
    name: Buffer,
    st: BigIntStats,
    kind: EntryKind,
    node: PathNode,
    state: S,
  ): S | undefined | Promise<S | undefined>;
  /** Called after everything under a directory walked into, with the directory's own state. */
  leave?(node: PathNode, state: S): void | Promise<void>;
  /** Called instead of walking into a directory deeper than `maxDepth`. */
  tooDeep?(node: PathNode, state: S): void;
}

export interface WalkOptions {
  /** Directories below this many levels are not walked into (`tooDeep` is told). */
  readonly maxDepth?: number;
  /** Open a directory its owner cannot read by granting the owner rwx first (kept so). */
  readonly fixModes?: boolean;
  /** Asked before each entry: true ends the walk there (`leave` is not called any more). */
  readonly stop?: () => boolean;
}

interface Frame<S> {
  readonly ident: Ident;
  readonly names: Buffer[];
  index: number;
  readonly node: PathNode | undefined;
  readonly state: S;
}

/** Walk everything under the directory open as `rootFd` (which stays open and is not moved). */
export async function walkTree<S>(
  rootFd: number,
  rootState: S,
  visitor: Visitor<S>,
  opts: WalkOptions = {},
): Promise<void> {
  const maxDepth = opts.maxDepth ?? Number.POSITIVE_INFINITY;
  const tick = yielder(256);
  // Stryker disable next-line StringLiteral: equivalent, `/proc/self/fd/N/` opens N as `N/.` does
  let fd = treeFs.openDirAt(rootFd, Buffer.from("."));
  const frames: Frame<S>[] = [
    { ident: treeFs.fstatBig(fd), names: listDir(fd), index: 0, node: undefined, state: rootState },
  ];
  try {
    for (;;) {
      const top = frames[frames.length - 1] as Frame<S>;
      if (top.index >= top.names.length) {
        frames.pop();
        const parent = frames[frames.length - 1];
        if (parent === undefined) break;
        fd = ascend(fd, parent.ident);
        await visitor.leave?.(top.node as PathNode, top.state);
        continue;
      }
      if (opts.stop?.() === true) break;
      const name = top.names[top.index] as Buffer;
      top.index += 1;
      await tick();
      const st = treeFs.lstatAt(fd, name);
      if (st === undefined) continue;
      const kind = kindOf(st);
      const node = child(top.node, name);
      const state = await visitor.entry(fd, name, st, kind, node, top.state);
      if (kind !== "dir" || state === undefined) continue;
      if (node.depth > maxDepth) {
        visitor.tooDeep?.(node, state);
        continue;
      }
      const next = openChildDir(fd, name, opts.fixModes === true);
      const ident = treeFs.fstatBig(next);
      if (!same(ident, st)) {
        closeSync(next);
        throw new WarrantError("sandbox/tree-changed", "a directory was replaced while walked");
      }
      closeSync(fd);
      fd = next;
      frames.push({ ident, names: listDir(fd), index: 0, node, state });
    }
  } finally {
    closeQuietly(fd);
  }
}

/**
 * Remove whatever is at `name` inside the directory open as `parentFd` — a file, a symlink (never
 * its target) or a whole tree, at any depth, granting its owner permission on directories that
 * lack it. True once nothing is at `name`.
 */
export async function removeAt(parentFd: number, name: Buffer): Promise<boolean> {
  const st = treeFs.lstatAt(parentFd, name);
  if (st === undefined) return true;
  if (!st.isDirectory()) {
    treeFs.unlinkSync(at(parentFd, name));
    return treeFs.lstatAt(parentFd, name) === undefined;
  }
  const tick = yielder(256);
  const rootIdent = treeFs.fstatBig(parentFd);
  const names: Buffer[] = [name];
  const idents: Ident[] = [];
  // Each level's subdirectories still to remove (files go at once).
  // Stryker disable next-line ArrayDeclaration: equivalent, the walk ends before its bottom is read
  const pending: Buffer[][] = [];
  let fd = openChildDir(parentFd, name, true);
  try {
    idents.push(treeFs.fstatBig(fd));
    pending.push(clearFiles(fd));
    for (;;) {
      await tick();
      const todo = pending[pending.length - 1] as Buffer[];
      const sub = todo.pop();
      if (sub !== undefined) {
        const next = openChildDir(fd, sub, true);
        closeSync(fd);
        fd = next;
        names.push(sub);
        idents.push(treeFs.fstatBig(fd));
        pending.push(clearFiles(fd));
        continue;
      }
      // Everything under `fd` is gone: remove it from its parent.
      pending.pop();
      idents.pop();
      const gone = names.pop() as Buffer;
      fd = ascend(fd, idents[idents.length - 1] ?? rootIdent);
      removeEmptyDir(fd, gone);
      if (names.length === 0) break;
    }
  } finally {
    closeQuietly(fd);
  }
  return treeFs.lstatAt(parentFd, name) === undefined;
}

/** Unlink every non-directory in `dirFd` (making it writable when needed); the directories left. */
function clearFiles(dirFd: number): Buffer[] {
  const dirs: Buffer[] = [];
  let madeWritable = false;
  for (const name of listDir(dirFd)) {
    const st = treeFs.lstatAt(dirFd, name);
    if (st === undefined) continue;
    if (st.isDirectory()) {
      dirs.push(name);
      continue;
    }
    try {
      treeFs.unlinkSync(at(dirFd, name));
    } catch (e) {
      if (madeWritable || (errnoOf(e) !== "EACCES" && errnoOf(e) !== "EPERM")) throw e;
      treeFs.fchmodSync(dirFd, 0o700);
      madeWritable = true;
      treeFs.unlinkSync(at(dirFd, name));
    }
  }
  if (!madeWritable && dirs.length > 0) {
    // Removing the subdirectories needs write permission here too.
    try {
      treeFs.fchmodSync(dirFd, 0o700);
    } catch {
      // Not ours to change: rmdir will say whether it matters.
    }
  }
  return dirs;
}

function removeEmptyDir(parentFd: number, name: Buffer): void {
  try {
    treeFs.rmdirSync(at(parentFd, name));
  } catch (e) {
    if (errnoOf(e) !== "EACCES" && errnoOf(e) !== "EPERM") throw e;
    treeFs.fchmodSync(parentFd, 0o700);
    treeFs.rmdirSync(at(parentFd, name));
  }
}

/** Remove the tree at absolute `target` (see removeAt); false when it could not all be removed. */
export async function removePath(target: string): Promise<boolean> {
  let parent: number;
  try {
    parent = treeFs.openDirPath(path.dirname(target));
  } catch (e) {
    return errnoOf(e) === "ENOENT";
  }
  try {
    return await removeAt(parent, Buffer.from(path.basename(target)));
  } catch {
    return treeFs.lstatAt(parent, Buffer.from(path.basename(target))) === undefined;
  } finally {
    closeQuietly(parent);
  }
}
