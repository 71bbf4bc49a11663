// What a walk and a removal meet when the file system refuses or races them (tree-walk.ts). The
// tests run as root, which no permission refuses, so `asOwner` makes the module's calls (its
// `treeFs` seam) answer as they answer a folder's owner without root: opening a folder without
// read and search permission for its owner, and unlinking or removing in a folder without write
// permission, fail with EACCES. Other refusals (EPERM, EIO) and races are made to happen once, on
// one name, before or after the real call.
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  type PathLike,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { closeQuietly, displayPath, openDirPath } from "../../src/adapters/sandbox/host-fs.js";
import {
  partsOf,
  removeAt,
  removePath,
  treeFs,
  type Visitor,
  type WalkOptions,
  walkTree,
} from "../../src/adapters/sandbox/tree-walk.js";

const real = { ...treeFs };
const work = mkdtempSync(path.join(tmpdir(), "warrant-walk-refusals-"));
/** Grant the owner rwx on every folder under `dir` (folders left locked), so that it can go. */
function unlock(dir: string): void {
  chmodSync(dir, 0o700);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) unlock(path.join(dir, e.name));
  }
}
afterAll(() => {
  unlock(work);
  rmSync(work, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});
let root: string;
let n = 0;
beforeEach(() => {
  n += 1;
  root = path.join(work, `t${n}`);
  mkdirSync(root);
});

const B = (s: string) => Buffer.from(s);
const modeOf = (p: string) => lstatSync(p).mode & 0o777;
const fdCount = () => readdirSync("/proc/self/fd").length;

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code} (made by the test)`), { code });
}

/** The last name of a path given to a call (`/proc/self/fd/N/name`). */
const baseOf = (p: unknown) => path.basename(String(p));

/**
 * Make `treeFs` answer as for the owner of every file without root; what it refused, in order
 * (`open NAME`, `unlink NAME`, `rmdir NAME`).
 */
function asOwner(): string[] {
  const refused: string[] = [];
  vi.spyOn(treeFs, "openDirAt").mockImplementation((dirFd, name) => {
    const st = real.lstatAt(dirFd, name);
    if (st?.isDirectory() === true && (Number(st.mode) & 0o500) !== 0o500) {
      refused.push(`open ${name}`);
      throw errno("EACCES");
    }
    return real.openDirAt(dirFd, name);
  });
  const inWritable = (p: unknown, what: string) => {
    if ((statSync(path.dirname(String(p))).mode & 0o200) === 0) {
      refused.push(`${what} ${baseOf(p)}`);
      throw errno("EACCES");
    }
  };
  vi.spyOn(treeFs, "unlinkSync").mockImplementation((p) => {
    inWritable(p, "unlink");
    real.unlinkSync(p);
  });
  vi.spyOn(treeFs, "rmdirSync").mockImplementation((p) => {
    inWritable(p, "rmdir");
    real.rmdirSync(p);
  });
  return refused;
}

/** Make `op` fail with `code` the first `times` times it is given `name`, then call through. */
function failOn(op: "unlinkSync" | "rmdirSync", name: string, code: string, times = 1): void {
  let left = times;
  vi.spyOn(treeFs, op).mockImplementation((p: PathLike) => {
    if (baseOf(p) === name && left > 0) {
      left -= 1;
      throw errno(code);
    }
    real[op](p);
  });
}

/** Every entry walked under `root` (sorted), walking into every folder. */
async function walked(opts: WalkOptions = {}): Promise<string[]> {
  const seen: string[] = [];
  const visitor: Visitor<number> = {
    entry(_dirFd, _name, _st, kind, node) {
      seen.push(`${displayPath(partsOf(node))} ${kind}`);
      return 0;
    },
  };
  const fd = openDirPath(root);
  try {
    await walkTree(fd, 0, visitor, opts);
  } finally {
    closeQuietly(fd);
  }
  return seen.sort();
}

async function removeInRoot(name: string): Promise<boolean> {
  const fd = openDirPath(root);
  try {
    return await removeAt(fd, B(name));
  } finally {
    closeQuietly(fd);
  }
}

/** root/a (no permission at all) holding a/f and a/sub (no permission) holding a/sub/g. */
function lockedTree(): void {
  mkdirSync(path.join(root, "a/sub"), { recursive: true });
  writeFileSync(path.join(root, "a/f"), "f");
  writeFileSync(path.join(root, "a/sub/g"), "g");
  chmodSync(path.join(root, "a/sub"), 0o000);
  chmodSync(path.join(root, "a"), 0o000);
}

describe("walkTree: a folder its owner cannot read", () => {
  it("with fixModes is opened after granting its owner rwx (kept so), and walked", async () => {
    lockedTree();
    const refused = asOwner();
    expect(await walked({ fixModes: true })).toEqual([
      "a dir",
      "a/f file",
      "a/sub dir",
      "a/sub/g file",
    ]);
    expect(refused.sort()).toEqual(["open a", "open sub"]);
    expect(modeOf(path.join(root, "a"))).toBe(0o700);
    expect(modeOf(path.join(root, "a/sub"))).toBe(0o700);
  });

  it("without fixModes the refusal ends the walk (EACCES) and the folder's mode is left alone", async () => {
    lockedTree();
    asOwner();
    await expect(walked()).rejects.toMatchObject({ code: "EACCES" });
    await expect(walked({ fixModes: false })).rejects.toMatchObject({ code: "EACCES" });
    expect(modeOf(path.join(root, "a"))).toBe(0o000);
  });

  it("with fixModes, an open that fails otherwise than EACCES is thrown as is, the mode left alone", async () => {
    mkdirSync(path.join(root, "a"));
    chmodSync(path.join(root, "a"), 0o750);
    vi.spyOn(treeFs, "openDirAt").mockImplementation((dirFd, name) => {
      if (name.toString() === "a") throw errno("EIO");
      return real.openDirAt(dirFd, name);
    });
    await expect(walked({ fixModes: true })).rejects.toMatchObject({ code: "EIO" });
    expect(modeOf(path.join(root, "a"))).toBe(0o750);
  });

  it("a folder that opens as another one with the same inode number on another device: sandbox/tree-changed", async () => {
    mkdirSync(path.join(root, "a"));
    writeFileSync(path.join(root, "a/f"), "f");
    const ino = statSync(path.join(root, "a"), { bigint: true }).ino;
    let inside = false;
    vi.spyOn(treeFs, "fstatBig").mockImplementation((fd) => {
      const st = real.fstatBig(fd);
      if (st.ino !== ino) return st;
      inside = true;
      return Object.assign(Object.create(Object.getPrototypeOf(st)), st, { dev: st.dev + 1n });
    });
    await expect(walked()).rejects.toMatchObject({ code: "sandbox/tree-changed" });
    expect(inside).toBe(true);
  });
});

describe("removeAt: folders its owner may not change", () => {
  it("opens and empties folders without permission at any depth, granting it; the tree is gone", async () => {
    lockedTree();
    chmodSync(path.join(root, "a"), 0o700);
    mkdirSync(path.join(root, "a/ro"));
    writeFileSync(path.join(root, "a/ro/h"), "h");
    chmodSync(path.join(root, "a/ro"), 0o500);
    chmodSync(path.join(root, "a"), 0o000);
    mkdirSync(path.join(root, "keep"));
    const refused = asOwner();
    expect(await removeInRoot("a")).toBe(true);
    expect(existsSync(path.join(root, "a"))).toBe(false);
    expect(readdirSync(root)).toEqual(["keep"]);
    // A folder that cannot be opened is opened once granted rwx (so what it holds goes without
    // another refusal); a folder that can be read but not written is made writable at the first
    // refused unlink.
    expect(refused.sort()).toEqual(["open a", "open sub", "unlink h"]);
  });

  it("a read-only folder holding only folders is made writable before they are removed: no rmdir refused", async () => {
    mkdirSync(path.join(root, "a/d1"), { recursive: true });
    mkdirSync(path.join(root, "a/d2/d3"), { recursive: true });
    chmodSync(path.join(root, "a/d2"), 0o500);
    chmodSync(path.join(root, "a"), 0o500);
    const refused = asOwner();
    expect(await removeInRoot("a")).toBe(true);
    expect(existsSync(path.join(root, "a"))).toBe(false);
    expect(refused).toEqual([]);
  });

  it("a folder that needs no change keeps its mode when its removal fails later (EIO thrown as is)", async () => {
    mkdirSync(path.join(root, "a"));
    writeFileSync(path.join(root, "a/f"), "f");
    chmodSync(path.join(root, "a"), 0o755);
    chmodSync(root, 0o755);
    failOn("rmdirSync", "a", "EIO");
    await expect(removeInRoot("a")).rejects.toMatchObject({ code: "EIO" });
    expect(existsSync(path.join(root, "a/f"))).toBe(false);
    expect(modeOf(path.join(root, "a"))).toBe(0o755);
    expect(modeOf(root)).toBe(0o755);
  });

  it("the folder holding the tree is made writable when removing the tree's top needs it", async () => {
    mkdirSync(path.join(root, "a"));
    writeFileSync(path.join(root, "a/f"), "f");
    chmodSync(root, 0o500);
    const refused = asOwner();
    expect(await removeInRoot("a")).toBe(true);
    expect(refused).toEqual(["rmdir a"]);
    expect(existsSync(path.join(root, "a"))).toBe(false);
    expect(modeOf(root)).toBe(0o700);
  });

  it("an rmdir refused with EPERM is tried again after granting write permission", async () => {
    mkdirSync(path.join(root, "a"));
    failOn("rmdirSync", "a", "EPERM");
    expect(await removeInRoot("a")).toBe(true);
    expect(existsSync(path.join(root, "a"))).toBe(false);
  });

  it("an rmdir refused twice is thrown, not tried a third time", async () => {
    mkdirSync(path.join(root, "a"));
    failOn("rmdirSync", "a", "EACCES", 2);
    await expect(removeInRoot("a")).rejects.toMatchObject({ code: "EACCES" });
    expect(existsSync(path.join(root, "a"))).toBe(true);
  });

  it("an unlink refused with EPERM is tried again once the folder is made writable", async () => {
    mkdirSync(path.join(root, "a"));
    writeFileSync(path.join(root, "a/f"), "f");
    chmodSync(path.join(root, "a"), 0o555);
    failOn("unlinkSync", "f", "EPERM");
    expect(await removeInRoot("a")).toBe(true);
    expect(existsSync(path.join(root, "a"))).toBe(false);
  });

  it("a folder is made writable once: a second refusal in it is thrown, not tried again", async () => {
    mkdirSync(path.join(root, "a"));
    writeFileSync(path.join(root, "a/f1"), "1");
    writeFileSync(path.join(root, "a/f2"), "2");
    chmodSync(path.join(root, "a"), 0o555);
    // Each file is refused the first time it is unlinked.
    const refusedOnce = new Set<string>();
    vi.spyOn(treeFs, "unlinkSync").mockImplementation((p) => {
      if (!refusedOnce.has(baseOf(p))) {
        refusedOnce.add(baseOf(p));
        throw errno("EACCES");
      }
      real.unlinkSync(p);
    });
    await expect(removeInRoot("a")).rejects.toMatchObject({ code: "EACCES" });
    expect(modeOf(path.join(root, "a"))).toBe(0o700);
    // The first file went once the folder was writable; the second is still there.
    expect(readdirSync(path.join(root, "a"))).toHaveLength(1);
  });

  it("an unlink that fails otherwise (EIO) is thrown as is, nothing granted or tried again", async () => {
    mkdirSync(path.join(root, "a"));
    writeFileSync(path.join(root, "a/f"), "f");
    chmodSync(path.join(root, "a"), 0o755);
    failOn("unlinkSync", "f", "EIO");
    await expect(removeInRoot("a")).rejects.toMatchObject({ code: "EIO" });
    expect(existsSync(path.join(root, "a/f"))).toBe(true);
    expect(modeOf(path.join(root, "a"))).toBe(0o755);
  });

  it("an entry gone between the folder's listing and its lstat is passed over", async () => {
    mkdirSync(path.join(root, "a"));
    writeFileSync(path.join(root, "a/gone"), "g");
    writeFileSync(path.join(root, "a/f"), "f");
    vi.spyOn(treeFs, "lstatAt").mockImplementation((dirFd, name) => {
      if (name.toString() === "gone") rmSync(path.join(root, "a/gone"), { force: true });
      return real.lstatAt(dirFd, name);
    });
    expect(await removeInRoot("a")).toBe(true);
    expect(existsSync(path.join(root, "a"))).toBe(false);
  });

  it("true only once nothing is there: a file or a folder made again at once is reported", async () => {
    writeFileSync(path.join(root, "f"), "f");
    mkdirSync(path.join(root, "a"));
    vi.spyOn(treeFs, "unlinkSync").mockImplementation((p) => {
      real.unlinkSync(p);
      writeFileSync(path.join(root, "f"), "again");
    });
    vi.spyOn(treeFs, "rmdirSync").mockImplementation((p) => {
      real.rmdirSync(p);
      mkdirSync(path.join(root, "a"));
    });
    expect(await removeInRoot("f")).toBe(false);
    expect(await removeInRoot("a")).toBe(false);
  });

  it("closes every folder it opens, removed or refused", async () => {
    mkdirSync(path.join(root, "a/b/c"), { recursive: true });
    writeFileSync(path.join(root, "a/b/c/f"), "f");
    const fd = openDirPath(root);
    const before = fdCount();
    try {
      expect(await removeAt(fd, B("a"))).toBe(true);
      expect(fdCount()).toBe(before);
      mkdirSync(path.join(root, "a/b/c"), { recursive: true });
      failOn("rmdirSync", "c", "EIO");
      await expect(removeAt(fd, B("a"))).rejects.toMatchObject({ code: "EIO" });
      expect(fdCount()).toBe(before);
    } finally {
      closeQuietly(fd);
    }
  });
});

describe("removePath when the removal throws", () => {
  it("false while something is still there; true when the tree was moved away meanwhile", async () => {
    mkdirSync(path.join(root, "a/b"), { recursive: true });
    writeFileSync(path.join(root, "a/b/f"), "f");
    failOn("unlinkSync", "f", "EIO");
    expect(await removePath(path.join(root, "a"))).toBe(false);
    expect(existsSync(path.join(root, "a/b/f"))).toBe(true);

    vi.restoreAllMocks();
    vi.spyOn(treeFs, "unlinkSync").mockImplementation((p) => {
      real.unlinkSync(p);
      if (baseOf(p) === "f") renameSync(path.join(root, "a"), path.join(work, `away${n}`));
    });
    // Going back up from a/ finds another parent: the removal throws, yet nothing is at a/.
    expect(await removePath(path.join(root, "a"))).toBe(true);
    expect(existsSync(path.join(work, `away${n}/b`))).toBe(false);
  });

  it("closes the folder it opened, removed or not", async () => {
    mkdirSync(path.join(root, "a/b"), { recursive: true });
    writeFileSync(path.join(root, "a/b/f"), "f");
    const before = fdCount();
    failOn("unlinkSync", "f", "EIO");
    expect(await removePath(path.join(root, "a"))).toBe(false);
    expect(fdCount()).toBe(before);
    expect(await removePath(path.join(root, "a"))).toBe(true);
    expect(await removePath(path.join(root, "missing"))).toBe(true);
    expect(fdCount()).toBe(before);
  });
});
