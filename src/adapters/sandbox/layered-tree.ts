// The merged tree of a layered view (layered-view.ts), read side: the layers, one directory level
// of the merge (the upper directory open, the lower baseline node showing through it), looking a
// name up as overlayfs would (an upper entry hides the lower one, a whiteout hides it without
// replacing it, an opaque upper directory hides the lower directory's entries), and resolving a
// workspace path through that tree, following symlinks only while they stay inside. The problems
// every operation of the view answers are made here too.
import type { BigIntStats } from "node:fs";
import { fail, ok, type Problem, type Result } from "../../core/result.js";
import { normaliseRelativePath } from "../../core/taskpack/relative-path.js";
import type { BaselineNode, PinnedBaseline, RunAs } from "./baseline-pin.js";
import {
  closeQuietly,
  type EntryKind,
  kindOf,
  lstatAt,
  nameKey,
  openDirAt,
  openDirPath,
  readlinkAt,
} from "./host-fs.js";
import { OpaqueMemo } from "./opaque-dirs.js";

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

/** What every operation of one view works with: its layers and the opaque answers. */
export interface ViewContext {
  readonly layers: Layers;
  /** The workspace's path as bytes (absolute symlink targets are read against it). */
  readonly workspaceBytes: Buffer;
  /**
   * Which upper directories are opaque (setting the attribute changes a directory's ctime: the
   * answer is kept against it).
   */
  readonly memo: OpaqueMemo;
}

export function viewContext(layers: Layers): ViewContext {
  return {
    layers,
    workspaceBytes: Buffer.from(layers.workspace),
    memo: layers.opaque ?? new OpaqueMemo(),
  };
}

export function problem(code: string, relPath: string, message: string, reason?: string): Problem {
  return {
    code,
    path: "",
    message: `${relPath}: ${message}`,
    ...(reason === undefined ? {} : { detail: { reason } }),
  };
}

export function outside(relPath: string, message: string, reason: string): Problem {
  return problem("workbench/patch-outside-policy", relPath, message, reason);
}

export function special(relPath: string, kind: EntryKind | "gone"): Problem {
  return {
    code: "environment/special-file",
    path: "",
    message: `${relPath}: a ${kind}, not a regular file: never opened`,
    detail: { kind },
  };
}

/** One directory level of the merged tree: the upper directory (open) and the visible lower one. */
export interface Level {
  upperFd: number | undefined;
  lower: BaselineNode | undefined;
}

export interface Entry {
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

export function closeLevel(level: Level): void {
  closeQuietly(level.upperFd);
  level.upperFd = undefined;
}

/** In copy mode nothing is a whiteout: a 0/0 device a command made is just a device. */
export function copyKind(st: BigIntStats): EntryKind {
  const kind = kindOf(st);
  return kind === "whiteout" ? "char-device" : kind;
}

/** The kind of an upper entry as the view sees it (a whiteout only in overlay mode). */
export function upperKind(ctx: ViewContext, st: BigIntStats): EntryKind {
  return ctx.layers.overlay ? kindOf(st) : copyKind(st);
}

/** The root of the merged tree: the upper directory open, the baseline's root in overlay mode. */
export function rootLevel(ctx: ViewContext): Level {
  return {
    upperFd: openDirPath(ctx.layers.upper),
    lower: ctx.layers.overlay ? ctx.layers.baseline.root : undefined,
  };
}

export async function isOpaque(ctx: ViewContext, upperDirFd: number): Promise<boolean> {
  const [opaque] = await ctx.memo.opaque([upperDirFd]);
  return opaque === true;
}

function lookup(ctx: ViewContext, level: Level, name: Buffer): Entry | undefined {
  const lowerChild = level.lower?.children?.get(nameKey(name));
  const st = level.upperFd === undefined ? undefined : lstatAt(level.upperFd, name);
  if (st !== undefined) {
    const kind = upperKind(ctx, st);
    if (kind === "whiteout") return undefined;
    return { kind, layer: "upper", upperSt: st, lower: lowerChild };
  }
  if (lowerChild === undefined) return undefined;
  return { kind: lowerChild.kind, layer: "lower", upperSt: undefined, lower: lowerChild };
}

/** Move `level` into the directory `name` (an entry of kind dir). */
async function descend(ctx: ViewContext, level: Level, name: Buffer, entry: Entry): Promise<void> {
  const lowerDir = entry.lower?.kind === "dir" ? entry.lower : undefined;
  if (entry.layer === "lower") {
    closeLevel(level);
    level.lower = lowerDir;
    return;
  }
  const fd = openDirAt(level.upperFd as number, name);
  closeLevel(level);
  level.upperFd = fd;
  level.lower = lowerDir !== undefined && !(await isOpaque(ctx, fd)) ? lowerDir : undefined;
}

function readTarget(level: Level, name: Buffer, entry: Entry): Buffer {
  return entry.layer === "upper"
    ? readlinkAt(level.upperFd as number, name)
    : (entry.lower?.target as Buffer);
}

/** Where a symlink at `parent/…` pointing to `target` leads, or undefined when it leaves. */
function follow(
  workspaceBytes: Buffer,
  parent: readonly Buffer[],
  target: Buffer,
): Buffer[] | undefined {
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
export async function resolve(
  ctx: ViewContext,
  relPath: string,
  followFinal: boolean,
): Promise<Result<Resolved>> {
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
  const level = rootLevel(ctx);
  try {
    while (queue.length > 0) {
      const name = queue.shift() as Buffer;
      const final = queue.length === 0;
      const inTarget = targetLeft > 0;
      if (inTarget) targetLeft -= 1;
      const entry = lookup(ctx, level, name);
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
          hops > MAX_SYMLINK_HOPS
            ? undefined
            : follow(ctx.workspaceBytes, done, readTarget(level, name, entry));
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
        const fresh = rootLevel(ctx);
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
      await descend(ctx, level, name, entry);
      done.push(name);
    }
    closeLevel(level);
    return fail([outside(relPath, "the path names the workspace itself", "empty")]);
  } catch (e) {
    closeLevel(level);
    throw e;
  }
}
