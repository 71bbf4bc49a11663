// What ContainedTree meets when the file system races or refuses it, reached through
// `containedFs` (the object its calls go through): a folder made, removed or replaced by another
// process between two calls, a full disk, a link refused with ELOOP (as on other systems), a
// system without /proc or whose /proc shows another folder. Each checks what is observable: the
// error, what is left on disk, nothing written outside the target, no descriptor left open.
import {
  chmodSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  type Stats,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ContainedTree, containedFs } from "../../src/adapters/fs/contained-tree.js";
import { currentCall, errno, fdCount, raceBefore, realFs, withoutProc } from "./contained-fs.js";

let base: string;
let root: string;
let elsewhere: string;
const bytes = (s: string) => new TextEncoder().encode(s);
const text = (p: string) => readFileSync(p, "utf8");

beforeEach(() => {
  base = mkdtempSync(path.join(tmpdir(), "warrant-contained-races-"));
  root = path.join(base, "tree");
  elsewhere = path.join(base, "tree-x");
  mkdirSync(path.join(root, "src"), { recursive: true });
  mkdirSync(elsewhere);
  writeFileSync(path.join(root, "src/a.txt"), "a\n");
  writeFileSync(path.join(elsewhere, "secret.txt"), "secret\n");
});

afterEach(() => {
  vi.restoreAllMocks();
  rmSync(base, { recursive: true, force: true });
});

async function withTree<T>(f: (t: ContainedTree) => Promise<T>): Promise<T> {
  const t = await ContainedTree.open(root);
  try {
    return await f(t);
  } finally {
    await t.close();
  }
}

/** The same file's stats, as if on another device (or with another inode), methods kept. */
function altered(st: Stats, change: Partial<Pick<Stats, "dev" | "ino">>): Stats {
  return Object.assign(Object.create(Object.getPrototypeOf(st)) as Stats, st, change);
}

describe("with /proc, a folder held is the folder written into, wherever it is moved", () => {
  it("the target moved away: a write lands in it, not at its old path", async () => {
    await withTree(async (t) => {
      renameSync(root, path.join(base, "moved"));
      await t.write("b.txt", bytes("b"));
    });
    expect(text(path.join(base, "moved/b.txt"))).toBe("b");
    expect(existsSync(root)).toBe(false);
  });

  it("a folder below it, held and then moved: a write lands in the moved folder", async () => {
    await withTree(async (t) => {
      expect((await t.read("src/a.txt")).kind).toBe("file");
      renameSync(path.join(root, "src"), path.join(root, "moved"));
      await t.write("src/b.txt", bytes("b"));
    });
    expect(readdirSync(path.join(root, "moved")).sort()).toEqual(["a.txt", "b.txt"]);
    expect(readdirSync(root)).toEqual(["moved"]);
  });
});

describe("without /proc, each folder goes by its path and is checked to be the one opened", () => {
  it("a folder held and then moved: it is reached by its path again (a write there fails, nothing lands in the moved one)", async () => {
    withoutProc();
    await withTree(async (t) => {
      expect((await t.read("src/a.txt")).kind).toBe("file");
      renameSync(path.join(root, "src"), path.join(root, "moved"));
      await expect(t.write("src/b.txt", bytes("b"))).rejects.toMatchObject({ code: "ENOENT" });
    });
    expect(readdirSync(path.join(root, "moved"))).toEqual(["a.txt"]);
  });

  it("a /proc whose descriptor shows another folder is not used either", async () => {
    vi.spyOn(containedFs, "lstat").mockImplementation((async (p: string) =>
      realFs.lstat(p.startsWith("/proc/") ? elsewhere : p)) as never);
    await withTree(async (t) => {
      expect((await t.read("src/a.txt")).kind).toBe("file");
      renameSync(path.join(root, "src"), path.join(root, "moved"));
      await expect(t.write("src/b.txt", bytes("b"))).rejects.toMatchObject({ code: "ENOENT" });
    });
    expect(readdirSync(path.join(root, "moved"))).toEqual(["a.txt"]);
  });

  it("a /proc whose descriptor shows the folder's inode on another device is not used", async () => {
    vi.spyOn(containedFs, "lstat").mockImplementation((async (p: string) => {
      const st = await realFs.lstat(p);
      return p.startsWith("/proc/") ? altered(st, { dev: st.dev + 1 }) : st;
    }) as never);
    await withTree(async (t) => {
      expect((await t.read("src/a.txt")).kind).toBe("file");
      renameSync(path.join(root, "src"), path.join(root, "moved"));
      await expect(t.write("src/b.txt", bytes("b"))).rejects.toMatchObject({ code: "ENOENT" });
    });
  });

  it("a folder swapped for another between its open and the check: apply/outside, nothing written, nothing left open", async () => {
    withoutProc();
    const before = fdCount();
    // Another process moves src away and puts the sibling tree-x in its place right after our open.
    const open = currentCall<FileHandle>("open");
    vi.spyOn(containedFs, "open").mockImplementation((async (...a: [string, number]) => {
      const fh = await open(...a);
      if (a[0] === path.join(root, "src")) {
        renameSync(a[0], path.join(base, "src-away"));
        renameSync(elsewhere, a[0]);
      }
      return fh;
    }) as never);
    await withTree(async (t) => {
      await expect(t.write("src/secret.txt", bytes("x"))).rejects.toMatchObject({
        code: "apply/outside",
      });
    });
    expect(text(path.join(root, "src/secret.txt"))).toBe("secret\n");
    expect(readdirSync(path.join(root, "src"))).toEqual(["secret.txt"]);
    expect(readdirSync(path.join(base, "src-away"))).toEqual(["a.txt"]);
    expect(fdCount()).toBe(before);
  });

  it("a folder removed between its open and the check: apply/outside", async () => {
    withoutProc();
    mkdirSync(path.join(root, "empty"));
    const open = currentCall<FileHandle>("open");
    vi.spyOn(containedFs, "open").mockImplementation((async (...a: [string, number]) => {
      const fh = await open(...a);
      if (a[0] === path.join(root, "empty")) rmdirSync(a[0]);
      return fh;
    }) as never);
    const before = fdCount();
    await withTree(async (t) => {
      await expect(t.read("empty/x.txt")).rejects.toMatchObject({ code: "apply/outside" });
    });
    expect(fdCount()).toBe(before);
  });

  it("a folder at its path with the same inode on another device: apply/outside", async () => {
    withoutProc();
    const lstat = currentCall<Stats>("lstat");
    vi.spyOn(containedFs, "lstat").mockImplementation((async (p: string) => {
      const st = await lstat(p);
      return p === path.join(root, "src") ? altered(st, { dev: st.dev + 1 }) : st;
    }) as never);
    await withTree(async (t) => {
      await expect(t.read("src/a.txt")).rejects.toMatchObject({ code: "apply/outside" });
    });
  });

  it("a folder at its path with another inode on the same device: apply/outside", async () => {
    withoutProc();
    const lstat = currentCall<Stats>("lstat");
    vi.spyOn(containedFs, "lstat").mockImplementation((async (p: string) => {
      const st = await lstat(p);
      return p === path.join(root, "src") ? altered(st, { ino: st.ino + 1 }) : st;
    }) as never);
    await withTree(async (t) => {
      await expect(t.read("src/a.txt")).rejects.toMatchObject({ code: "apply/outside" });
    });
  });

  it("a folder held replaced by a file since: a file in it is absent (ENOTDIR)", async () => {
    withoutProc();
    await withTree(async (t) => {
      expect((await t.read("src/a.txt")).kind).toBe("file");
      rmSync(path.join(root, "src"), { recursive: true });
      writeFileSync(path.join(root, "src"), "now a file");
      expect(await t.read("src/a.txt")).toEqual({ kind: "absent" });
    });
  });
});

describe("a folder made by a write, raced by another process", () => {
  it("made by another process just before our mkdir (EEXIST): used, and not removed as ours", async () => {
    raceBefore("mkdir", "new", () => mkdirSync(path.join(root, "new")));
    await withTree(async (t) => {
      await t.write("new/b.txt", bytes("b"));
      await t.remove("new/b.txt");
      await t.removeMade();
    });
    expect(readdirSync(root).sort()).toEqual(["new", "src"]);
  });

  it("mkdir refused (a full disk): that error, nothing made", async () => {
    raceBefore(
      "mkdir",
      "new",
      () => undefined,
      () => Promise.reject(errno("ENOSPC")),
    );
    await withTree(async (t) => {
      await expect(t.write("new/b.txt", bytes("b"))).rejects.toMatchObject({ code: "ENOSPC" });
    });
    expect(readdirSync(root)).toEqual(["src"]);
  });

  it("made, then removed by another process before it is opened: ENOENT; removeMade is quiet", async () => {
    const mkdir = currentCall("mkdir");
    vi.spyOn(containedFs, "mkdir").mockImplementation((async (p: string) => {
      await mkdir(p);
      rmdirSync(p);
    }) as never);
    const before = fdCount();
    await withTree(async (t) => {
      await expect(t.write("new/b.txt", bytes("b"))).rejects.toMatchObject({ code: "ENOENT" });
      await t.removeMade();
    });
    expect(readdirSync(root)).toEqual(["src"]);
    expect(fdCount()).toBe(before);
  });

  it("made, then replaced by a link to the sibling before it is opened: apply/outside, nothing written there", async () => {
    const mkdir = currentCall("mkdir");
    vi.spyOn(containedFs, "mkdir").mockImplementation((async (p: string) => {
      await mkdir(p);
      rmdirSync(p);
      symlinkSync(elsewhere, p);
    }) as never);
    await withTree(async (t) => {
      await expect(t.write("new/secret.txt", bytes("x"))).rejects.toMatchObject({
        code: "apply/outside",
      });
      await t.removeMade();
    });
    expect(text(path.join(elsewhere, "secret.txt"))).toBe("secret\n");
    expect(readdirSync(elsewhere)).toEqual(["secret.txt"]);
    expect(lstatSync(path.join(root, "new")).isSymbolicLink()).toBe(true);
  });

  it("removeMade removes only folders this tree made: empty folders that were there stay", async () => {
    // Any name: one is the text a mutation tool puts in an emptied list.
    for (const name of ["empty", "Stryker was here"]) mkdirSync(path.join(root, name));
    await withTree(async (t) => {
      await t.write("made/c.txt", bytes("c"));
      await t.remove("made/c.txt");
      await t.removeMade();
    });
    expect(readdirSync(root).sort()).toEqual(["Stryker was here", "empty", "src"]);
  });
});

describe("opening a folder on the way", () => {
  it("a link refused with ELOOP (as on other systems than Linux) is a link too: apply/outside", async () => {
    symlinkSync(elsewhere, path.join(root, "out"));
    raceBefore(
      "open",
      "out",
      () => undefined,
      () => Promise.reject(errno("ELOOP")),
    );
    await withTree(async (t) => {
      await expect(t.write("out/secret.txt", bytes("x"))).rejects.toMatchObject({
        code: "apply/outside",
      });
    });
    expect(text(path.join(elsewhere, "secret.txt"))).toBe("secret\n");
  });

  it("another refusal (EACCES) is that error, not a missing folder nor a file", async () => {
    raceBefore(
      "open",
      "src",
      () => undefined,
      () => Promise.reject(errno("EACCES")),
    );
    await withTree(async (t) => {
      await expect(t.read("src/a.txt")).rejects.toMatchObject({ code: "EACCES" });
    });
  });

  it("a file on the way removed between the refused open and its lstat: absent", async () => {
    raceBefore("lstat", "a.txt", () => unlinkSync(path.join(root, "src/a.txt")));
    await withTree(async (t) => {
      expect(await t.read("src/a.txt/b")).toEqual({ kind: "absent" });
    });
  });
});

describe("writing, when the disk or the file system refuses", () => {
  /** Make the temporary file's `method` fail once with `code`. */
  function failOnTemp(method: "writeFile" | "sync" | "chmod", code: string): void {
    const open = currentCall<FileHandle>("open");
    vi.spyOn(containedFs, "open").mockImplementation((async (...a: [string, number, number?]) => {
      const fh = await open(...a);
      if (path.basename(a[0]).startsWith(".")) {
        vi.spyOn(fh, method).mockRejectedValueOnce(errno(code));
      }
      return fh;
    }) as never);
  }

  for (const [method, code] of [
    ["writeFile", "ENOSPC"],
    ["sync", "EIO"],
    ["chmod", "EPERM"],
  ] as const) {
    it(`${method} failing with ${code}: that error, the file as it was, no temporary file, nothing left open`, async () => {
      chmodSync(path.join(root, "src/a.txt"), 0o600);
      failOnTemp(method, code);
      const before = fdCount();
      await withTree(async (t) => {
        await expect(t.write("src/a.txt", bytes("changed"))).rejects.toMatchObject({ code });
      });
      expect(text(path.join(root, "src/a.txt"))).toBe("a\n");
      expect(readdirSync(path.join(root, "src"))).toEqual(["a.txt"]);
      expect(fdCount()).toBe(before);
    });
  }

  it("rename failing (EXDEV): that error, the file as it was, no temporary file", async () => {
    vi.spyOn(containedFs, "rename").mockRejectedValueOnce(errno("EXDEV"));
    await withTree(async (t) => {
      await expect(t.write("src/a.txt", bytes("changed"))).rejects.toMatchObject({
        code: "EXDEV",
      });
    });
    expect(text(path.join(root, "src/a.txt"))).toBe("a\n");
    expect(readdirSync(path.join(root, "src"))).toEqual(["a.txt"]);
  });
});

describe("the mode a file is made with (the umask taken as 0, as the test cannot set it)", () => {
  /** The mode of each file made, as made (before anything else is done to it). */
  function modesMade(): number[] {
    const made: number[] = [];
    vi.spyOn(containedFs, "open").mockImplementation((async (
      p: string,
      flags: number,
      mode?: number,
    ) => {
      const fh = await realFs.open(p, flags, mode);
      if ((flags & constants.O_CREAT) !== 0) {
        // O_CREAT: what the kernel gives under a umask of 0 (Node's default mode is 0666).
        await fh.chmod(mode ?? 0o666);
        made.push((await fh.stat()).mode & 0o7777);
      }
      return fh;
    }) as never);
    return made;
  }

  it("a new file is made 0644", async () => {
    const made = modesMade();
    await withTree(async (t) => t.write("src/new.txt", bytes("n")));
    expect(made).toEqual([0o644]);
  });

  it("a file of mode 0600 is written anew at 0600 from the start: its new bytes are never readable by others", async () => {
    chmodSync(path.join(root, "src/a.txt"), 0o600);
    const made = modesMade();
    await withTree(async (t) => t.write("src/a.txt", bytes("secret")));
    expect(made).toEqual([0o600]);
    expect(statSync(path.join(root, "src/a.txt")).mode & 0o7777).toBe(0o600);
  });
});

describe("a closed tree reaches nothing", () => {
  it("a read finds nothing, a write and a remove are refused, removeMade removes nothing", async () => {
    writeFileSync(path.join(root, "top.txt"), "top");
    const t = await ContainedTree.open(root);
    await t.write("made/c.txt", bytes("c"));
    await t.close();
    expect(await t.read("top.txt")).toEqual({ kind: "absent" });
    await expect(t.write("top.txt", bytes("x"))).rejects.toThrow();
    await expect(t.remove("top.txt")).rejects.toMatchObject({ code: "ENOENT" });
    await t.removeMade();
    expect(text(path.join(root, "top.txt"))).toBe("top");
    expect(text(path.join(root, "made/c.txt"))).toBe("c");
  });
});
