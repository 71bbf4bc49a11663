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

/** The handle of `rel` under the directory `root` when it is there with the right kind. */
function handleUnder(root: string, rel: string, dir: boolean): number | undefined {
  let rootFd: number | undefined;
  let gitFd: number | undefined;
  try {
    rootFd = openDirPath(root);
    const [first, last] = rel.split("/") as [string, string];
    const git = lstatAt(rootFd, Buffer.from(first));
    if (git === undefined || !git.isDirectory()) return undefined;
    gitFd = openSync(
      `/proc/self/fd/${rootFd}/${first}`,
      O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY,
    );
    const fd = openSync(`/proc/self/fd/${gitFd}/${last}`, O_PATH | constants.O_NOFOLLOW);
    const st = fstatBig(fd);
    if (dir ? st.isDirectory() : st.isFile()) return fd;
    closeQuietly(fd);
    return undefined;
  } catch {
    return undefined;
  } finally {
    closeQuietly(gitFd);
    closeQuietly(rootFd);
  }
}

/**
 * Handles of the control files present in the workspace: looked up in `upper` (the copy, or an
 * overlay's upper layer), then in `lower` (an overlay's pinned baseline) where the upper layer
 * has nothing at that path.
 */
export function controlHandles(upper: string, lower: string | undefined): ControlHandle[] {
  const out: ControlHandle[] = [];
  for (const c of CONTROL_FILES) {
    let fd = handleUnder(upper, c.path, c.dir);
    if (fd === undefined && lower !== undefined && !presentIn(upper, c.path)) {
      fd = handleUnder(lower, c.path, c.dir);
    }
    if (fd !== undefined) out.push({ fd, path: c.path });
  }
  return out;
}

/** Whether anything (a whiteout included) is at `rel` under `root`. */
function presentIn(root: string, rel: string): boolean {
  let rootFd: number | undefined;
  try {
    rootFd = openDirPath(root);
    const [first, last] = rel.split("/") as [string, string];
    const git = lstatAt(rootFd, Buffer.from(first));
    if (git === undefined) return false;
    if (!git.isDirectory()) return true;
    const gitFd = openSync(
      `/proc/self/fd/${rootFd}/${first}`,
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY,
    );
    try {
      return lstatAt(gitFd, Buffer.from(last)) !== undefined;
    } finally {
      closeQuietly(gitFd);
    }
  } catch {
    return true;
  } finally {
    closeQuietly(rootFd);
  }
}
