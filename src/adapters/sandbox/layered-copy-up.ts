// The write side of a layered view (layered-view.ts): the upper layer made as overlayfs would make
// it before anything is written or removed in it — a lower directory copied up (same mode), a
// directory over a whiteout hiding the lower one it replaces, whiteouts (character devices 0/0)
// made for what is removed from below — every directory owned by the commands' uid.
import { fchmodSync, fchownSync, mkdirSync, unlinkSync } from "node:fs";
import type { BaselineNode } from "./baseline-pin.js";
import { hostCommand } from "./host-command.js";
import { at, lstatAt, nameKey, openDirAt } from "./host-fs.js";
import {
  closeLevel,
  isOpaque,
  type Level,
  rootLevel,
  upperKind,
  type ViewContext,
} from "./layered-tree.js";

/** Give `fd` to the commands' uid/gid (when they run as another user). */
export function own(ctx: ViewContext, fd: number): void {
  const runAs = ctx.layers.runAs;
  if (runAs !== undefined) fchownSync(fd, runAs.uid, runAs.gid);
}

/** Make a directory `name` in `parentFd` with exactly `mode`, owned by the command's uid. */
function makeDir(ctx: ViewContext, parentFd: number, name: Buffer, mode: number): number {
  mkdirSync(at(parentFd, name), 0o700);
  const fd = openDirAt(parentFd, name);
  own(ctx, fd);
  fchmodSync(fd, mode);
  return fd;
}

/** Create overlay whiteouts for `names` in the upper directory open as `dirFd`. */
export async function whiteout(dirFd: number, names: readonly Buffer[]): Promise<void> {
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

/** One step of upperDirFor: the upper directory `name` in `level`, made when it is not there yet. */
async function upperChild(
  ctx: ViewContext,
  level: Level,
  name: Buffer,
): Promise<{ next: number; lower: BaselineNode | undefined }> {
  const fd = level.upperFd as number;
  const st = lstatAt(fd, name);
  const kind = st === undefined ? undefined : upperKind(ctx, st);
  const lowerChild = level.lower?.children?.get(nameKey(name));
  if (kind === "dir") {
    const next = openDirAt(fd, name);
    const lower =
      lowerChild?.kind === "dir" && !(await isOpaque(ctx, next)) ? lowerChild : undefined;
    return { next, lower };
  }
  if (kind === "whiteout") {
    unlinkSync(at(fd, name));
    const next = makeDir(ctx, fd, name, 0o755);
    const hidden = lowerChild?.kind === "dir" ? lowerChild.children : undefined;
    await whiteout(
      next,
      [...(hidden?.keys() ?? [])].map((k) => Buffer.from(k, "latin1")),
    );
    return { next, lower: undefined };
  }
  if (kind !== undefined || (lowerChild !== undefined && lowerChild.kind !== "dir")) {
    throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
  }
  if (lowerChild?.kind === "dir") {
    return { next: makeDir(ctx, fd, name, lowerChild.mode), lower: lowerChild };
  }
  return { next: makeDir(ctx, fd, name, 0o755), lower: undefined };
}

/**
 * The upper directory for `dirParts`, made as overlayfs would: a lower directory is copied up
 * (same mode), a directory over a whiteout hides the lower one it replaces (a whiteout for each
 * of its entries), anything else is new. Fails with ENOTDIR when a non-directory is in the way.
 */
export async function upperDirFor(ctx: ViewContext, dirParts: readonly Buffer[]): Promise<Level> {
  const level = rootLevel(ctx);
  try {
    for (const name of dirParts) {
      const { next, lower } = await upperChild(ctx, level, name);
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
