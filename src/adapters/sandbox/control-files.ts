// The workspace's control files — `.git/hooks` and `.git/config`, which make a later git on the
// host run code — are bound read-only over themselves inside the sandbox, although the workspace
// around them is writable. For bwrap the host hands each one as an O_PATH handle opened without
// following any link (`--ro-bind-fd`), from the writable layer or, in overlay mode, the pinned
// baseline below it; a link or anything of the wrong kind is never handed over.
import { constants, openSync } from "node:fs";
import { closeQuietly, fstatBig, lstatAt, O_PATH, openDirPath } from "./host-fs.js";

/** Relative to the workspace, and the kind each must be to be protected. */
export const CONTROL_FILES = [
  { path: ".git/hooks", dir: true },
  { path: ".git/config", dir: false },
] as const;

export interface ControlHandle {
  /** An O_PATH descriptor of the file or directory (the caller closes it, or hands it on). */
  readonly fd: number;
  readonly path: string;
}

/** What one layer holds at `.git`: nothing, a directory (open as an O_PATH handle), or else. */
type GitDir = { readonly kind: "absent" | "other" } | { readonly kind: "dir"; readonly fd: number };

/** `.git` under the directory `root`, looked at once for every control file. */
function gitUnder(root: string): GitDir {
  let rootFd: number | undefined;
  try {
    rootFd = openDirPath(root);
    const git = lstatAt(rootFd, GIT);
    if (git === undefined) return { kind: "absent" };
    // Anything but a directory (a link included) fails to open here: `other`, below.
    const fd = openSync(
      `/proc/self/fd/${rootFd}/.git`,
      O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY,
    );
    return { kind: "dir", fd };
  } catch {
    // Unreadable or changed under us: as if something were there, and nothing handed over.
    return { kind: "other" };
  } finally {
    closeQuietly(rootFd);
  }
}

const GIT = Buffer.from(".git");

/** The handle of `name` in the `.git` open as `gitFd`, when it is there with the right kind. */
function handleIn(gitFd: number, name: string, dir: boolean): number | undefined {
  try {
    const fd = openSync(`/proc/self/fd/${gitFd}/${name}`, O_PATH | constants.O_NOFOLLOW);
    const st = fstatBig(fd);
    if (dir ? st.isDirectory() : st.isFile()) return fd;
    closeQuietly(fd);
    return undefined;
  } catch {
    return undefined;
  }
}

/** Whether anything (a whiteout included) is at `name` in the `.git` open as `gitFd`. */
function presentIn(gitFd: number, name: string): boolean {
  try {
    return lstatAt(gitFd, Buffer.from(name)) !== undefined;
  } catch {
    return true;
  }
}

/**
 * Handles of the control files present in the workspace: looked up in `upper` (the copy, or an
 * overlay's upper layer), then in `lower` (an overlay's pinned baseline) where the upper layer
 * has nothing at that path (a whiteout, or a `.git` that is not a directory, hides the lower one).
 */
export function controlHandles(upper: string, lower: string | undefined): ControlHandle[] {
  const out: ControlHandle[] = [];
  const top = gitUnder(upper);
  let below: GitDir | undefined;
  try {
    for (const c of CONTROL_FILES) {
      const name = c.path.slice(".git/".length);
      let fd = top.kind === "dir" ? handleIn(top.fd, name, c.dir) : undefined;
      const hidden = top.kind === "other" || (top.kind === "dir" && presentIn(top.fd, name));
      if (fd === undefined && lower !== undefined && !hidden) {
        below ??= gitUnder(lower);
        if (below.kind === "dir") fd = handleIn(below.fd, name, c.dir);
      }
      if (fd !== undefined) out.push({ fd, path: c.path });
    }
  } finally {
    if (top.kind === "dir") closeQuietly(top.fd);
    if (below?.kind === "dir") closeQuietly(below.fd);
  }
  return out;
}
