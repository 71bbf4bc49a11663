// A folder that is read and written only through itself: every path under it is reached component
// by component from an open directory descriptor, never through a symbolic link, so a write can land
// nowhere but inside it. What `warrant apply` writes with.
//
// Node has no openat(2). On Linux, `/proc/self/fd/N/NAME` is resolved by the kernel from the
// directory open as descriptor N (a magic link: not a path looked up again), so each step below is
// openat/mkdirat/renameat/unlinkat in effect: a folder open here stays the folder written into even
// if a path to it is swapped meanwhile. Every folder is opened with O_DIRECTORY|O_NOFOLLOW, a folder
// made here is opened the same way right after mkdir (a link swapped in between is refused), a file
// is read with O_NOFOLLOW|O_NONBLOCK (never through a link, never blocking on a FIFO), written as a
// new file (O_CREAT|O_EXCL|O_NOFOLLOW) renamed over its name (rename replaces a link, never follows
// it), and removed with unlink (which does not follow a link either).
//
// What remains: the folder named as the root is looked up by its path once (its own last component
// is not followed; the folders above it are the caller's to trust). A process that may already
// write inside the tree can still move a folder out of it between our open and our write, or change
// a file between the check and the rename; it gains nothing it could not do by writing there itself.
// Without /proc (not Linux) the same steps go through full paths, each folder's identity (device,
// inode) checked after it is opened; a swap between that check and a write is then not excluded.

import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, mkdir, open, rename, rmdir, unlink } from "node:fs/promises";
import path from "node:path";
import { WarrantError } from "../../core/result.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** A folder held open. `via` names it for a call taking a path (`/proc/self/fd/N` on Linux). */
interface Dir {
  readonly fh: FileHandle;
  readonly via: string;
}

/** A file of the tree as it is now. */
export type Current =
  | { readonly kind: "absent" }
  | { readonly kind: "file"; readonly bytes: Uint8Array; readonly mode: number }
  /** A folder, a FIFO, a device: not a regular file. */
  | { readonly kind: "other" };

/**
 * The file-system calls the tree makes, all through this object so that a test can make one of
 * them fail or race once (`vi.spyOn`): a full disk, a folder made or removed by another process
 * between two calls, a system without `/proc`. Nothing else replaces them.
 */
export const containedFs = { lstat, mkdir, open, rename, rmdir, unlink };

const errno = (e: unknown) => (e as { code?: unknown }).code;

/** `apply/outside`: `rel` (the root itself when empty) is a symbolic link. */
function outside(root: string, rel: string): WarrantError {
  return new WarrantError(
    "apply/outside",
    rel === ""
      ? `the target ${root} is a symbolic link: name the folder itself (nothing is written through a link)`
      : `${rel} in ${root} is a symbolic link: nothing is written through a link (it could lead outside ${root})`,
  );
}

export class ContainedTree {
  readonly root: string;
  readonly #proc: boolean;
  readonly #dirs = new Map<string, Dir>();
  /** Folders this tree made, in the order made. */
  readonly #made: string[] = [];

  private constructor(root: string, proc: boolean, top: Dir) {
    this.root = root;
    this.#proc = proc;
    this.#dirs.set("", top);
  }

  /**
   * Opens `root` (a folder; not followed when it is itself a link: `apply/outside`; absent or not a
   * folder: `apply/target-missing`).
   */
  static async open(root: string): Promise<ContainedTree> {
    let fh: FileHandle;
    try {
      fh = await containedFs.open(root, DIR_FLAGS);
    } catch (e) {
      const st = await containedFs.lstat(root).catch(() => undefined);
      if (st?.isSymbolicLink() === true) throw outside(root, "");
      throw new WarrantError(
        "apply/target-missing",
        `${root} is not a folder (${String(errno(e))})`,
      );
    }
    // /proc/self/fd/N is used only when it is there and is this folder.
    const viaProc = `/proc/self/fd/${fh.fd}`;
    let proc = false;
    try {
      proc = sameFile(await containedFs.lstat(`${viaProc}/.`), await fh.stat());
    } catch {
      // No /proc: full paths.
    }
    return new ContainedTree(root, proc, { fh, via: proc ? viaProc : root });
  }

  /** Closes every folder held. */
  async close(): Promise<void> {
    const dirs = [...this.#dirs.values()];
    this.#dirs.clear();
    await Promise.all(dirs.map((d) => d.fh.close().catch(() => undefined)));
  }

  /** The folder `rel` (`a/b`), opened step by step; undefined when a step is missing or a file. */
  async #folder(rel: string, create: boolean): Promise<Dir | undefined> {
    let cur = this.#dirs.get("") as Dir;
    if (rel === "") return cur;
    let at = "";
    for (const name of rel.split("/")) {
      at = at === "" ? name : `${at}/${name}`;
      const held = this.#dirs.get(at);
      if (held !== undefined) {
        cur = held;
        continue;
      }
      let next = await this.#openChild(cur, name, at);
      if (next === "missing" && create) {
        // EEXIST: another process made it since our open; it is not ours to remove.
        const made = await containedFs.mkdir(`${cur.via}/${name}`).then(
          () => true,
          (e: unknown) => {
            if (errno(e) === "EEXIST") return false;
            throw e;
          },
        );
        if (made) this.#made.push(at);
        // Opened again without following: a link put there since the mkdir is refused.
        next = await this.#openChild(cur, name, at);
      }
      if (next === "missing" || next === "not-a-folder") {
        if (!create) return undefined;
        throw Object.assign(new Error(`${at} in ${this.root} is not a folder`), {
          code: next === "missing" ? "ENOENT" : "ENOTDIR",
        });
      }
      this.#dirs.set(at, next);
      cur = next;
    }
    return cur;
  }

  async #openChild(
    parent: Dir,
    name: string,
    rel: string,
  ): Promise<Dir | "missing" | "not-a-folder"> {
    const where = `${parent.via}/${name}`;
    let fh: FileHandle;
    try {
      fh = await containedFs.open(where, DIR_FLAGS);
    } catch (e) {
      const code = errno(e);
      if (code === "ENOENT") return "missing";
      // A link opened with O_NOFOLLOW|O_DIRECTORY: ENOTDIR on Linux, ELOOP elsewhere.
      if (code !== "ELOOP" && code !== "ENOTDIR") throw e;
      const st = await containedFs.lstat(where).catch(() => undefined);
      if (st === undefined) return "missing";
      if (st.isSymbolicLink()) throw outside(this.root, rel);
      return "not-a-folder";
    }
    if (this.#proc) return { fh, via: `/proc/self/fd/${fh.fd}` };
    // Without /proc: the folder open must still be the one at its path.
    const [held, there] = await Promise.all([
      fh.stat(),
      containedFs.lstat(where).catch(() => undefined),
    ]);
    if (there === undefined || !sameFile(held, there)) {
      await fh.close();
      throw outside(this.root, rel);
    }
    return { fh, via: where };
  }

  /**
   * The file `rel` as it is now. A link on the way or at `rel` itself: `apply/outside`. A folder
   * on the way that is missing or is a file: the file is absent.
   */
  async read(rel: string): Promise<Current> {
    const dir = await this.#folder(path.posix.dirname(rel).replace(/^\.$/, ""), false);
    if (dir === undefined) return { kind: "absent" };
    const where = `${dir.via}/${path.posix.basename(rel)}`;
    let fh: FileHandle;
    try {
      fh = await containedFs.open(where, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      const code = errno(e);
      // ENOTDIR: without /proc, a folder held replaced by a file since it was opened.
      if (code === "ENOENT" || code === "ENOTDIR") return { kind: "absent" };
      if (code === "ELOOP") throw outside(this.root, rel);
      throw e;
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) return { kind: "other" };
      return { kind: "file", bytes: new Uint8Array(await fh.readFile()), mode: st.mode & 0o7777 };
    } finally {
      await fh.close();
    }
  }

  /**
   * Writes `bytes` as `rel`: a new file beside it, synced, renamed over the name. A modified file
   * keeps its mode; a new one gets 0644 (less the umask). Missing folders are made, each checked.
   */
  async write(rel: string, bytes: Uint8Array): Promise<void> {
    const dir = (await this.#folder(path.posix.dirname(rel).replace(/^\.$/, ""), true)) as Dir;
    const name = path.posix.basename(rel);
    const now = await this.read(rel);
    const temp = `.${name}.warrant-${randomBytes(6).toString("hex")}`;
    // Made with the mode it ends with: the new bytes are never more readable than the file was.
    const fh = await containedFs.open(
      `${dir.via}/${temp}`,
      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
      now.kind === "file" ? now.mode : 0o644,
    );
    try {
      await fh.writeFile(bytes);
      if (now.kind === "file") await fh.chmod(now.mode);
      await fh.sync();
    } catch (e) {
      await fh.close();
      await containedFs.unlink(`${dir.via}/${temp}`).catch(() => undefined);
      throw e;
    }
    await fh.close();
    try {
      await containedFs.rename(`${dir.via}/${temp}`, `${dir.via}/${name}`);
    } catch (e) {
      await containedFs.unlink(`${dir.via}/${temp}`).catch(() => undefined);
      throw e;
    }
  }

  /** Removes the file `rel` (never what a link points at). */
  async remove(rel: string): Promise<void> {
    const dir = await this.#folder(path.posix.dirname(rel).replace(/^\.$/, ""), false);
    if (dir === undefined)
      throw Object.assign(new Error(`${rel} in ${this.root} is not there`), { code: "ENOENT" });
    await containedFs.unlink(`${dir.via}/${path.posix.basename(rel)}`);
  }

  /** Removes the folders `write` made (when empty), deepest first. */
  async removeMade(): Promise<void> {
    for (const rel of [...this.#made].reverse()) {
      const parent = this.#dirs.get(path.posix.dirname(rel).replace(/^\.$/, ""));
      // Not held: the tree was closed.
      if (parent === undefined) continue;
      const held = this.#dirs.get(rel);
      this.#dirs.delete(rel);
      // Not held: made, then gone or replaced before it could be opened.
      await held?.fh.close().catch(() => undefined);
      await containedFs.rmdir(`${parent.via}/${path.posix.basename(rel)}`).catch(() => undefined);
    }
    this.#made.length = 0;
  }
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}
