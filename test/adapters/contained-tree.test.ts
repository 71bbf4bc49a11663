// ContainedTree, what `warrant apply` writes with: the target opened without following it, every
// folder on the way opened without following a link (apply/outside), a missing target or one that
// is a file refused (apply/target-missing), files read as they are (absent, a file with its bytes
// and mode, something else), written by rename over their name with their mode kept, removed
// without following a link, and the folders a write made removed again. Every test runs twice:
// through /proc/self/fd, and as on a system without /proc (by full paths, each folder's identity
// checked), which must give the same results.
import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ContainedTree } from "../../src/adapters/fs/contained-tree.js";
import { withoutProc } from "./contained-fs.js";

let base: string;
let root: string;
let elsewhere: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), "warrant-contained-"));
  root = path.join(base, "tree");
  // A sibling whose name extends the target's: never reached through the tree.
  elsewhere = path.join(base, "tree-x");
  await mkdir(path.join(root, "src"), { recursive: true });
  await mkdir(elsewhere);
  await writeFile(path.join(root, "src/a.txt"), "a\n");
  await writeFile(path.join(elsewhere, "secret.txt"), "secret\n");
});

afterEach(async () => {
  vi.restoreAllMocks();
  await rm(base, { recursive: true, force: true });
});

async function withTree<T>(f: (t: ContainedTree) => Promise<T>, at = root): Promise<T> {
  const t = await ContainedTree.open(at);
  try {
    return await f(t);
  } finally {
    await t.close();
  }
}

// Without /proc, every call given a /proc path fails: the tree's probe finds none.
describe.each(["with /proc", "without /proc"] as const)("%s", (mode) => {
  beforeEach(() => {
    if (mode === "without /proc") withoutProc();
  });

  describe("opening the target", () => {
    it("a target that is a symbolic link (even to a folder inside the tree): apply/outside", async () => {
      const link = path.join(base, "link");
      await symlink(root, link);
      await expect(ContainedTree.open(link)).rejects.toMatchObject({ code: "apply/outside" });
    });

    it("a missing target or one that is a file: apply/target-missing", async () => {
      await expect(ContainedTree.open(path.join(base, "none"))).rejects.toMatchObject({
        code: "apply/target-missing",
      });
      await expect(ContainedTree.open(path.join(root, "src/a.txt"))).rejects.toMatchObject({
        code: "apply/target-missing",
      });
    });

    it("a dangling link as the target is a link, not a missing folder: apply/outside", async () => {
      const link = path.join(base, "dangling");
      await symlink(path.join(base, "none"), link);
      await expect(ContainedTree.open(link)).rejects.toMatchObject({ code: "apply/outside" });
    });

    it("the tree keeps the root it was opened on", async () => {
      await withTree(async (t) => expect(t.root).toBe(root));
    });
  });

  describe("reading", () => {
    it("a file: its bytes and mode; a missing file or folder: absent; a folder: other", async () => {
      await chmod(path.join(root, "src/a.txt"), 0o640);
      await withTree(async (t) => {
        const a = await t.read("src/a.txt");
        expect(a).toEqual({ kind: "file", bytes: new TextEncoder().encode("a\n"), mode: 0o640 });
        expect(await t.read("src/none.txt")).toEqual({ kind: "absent" });
        expect(await t.read("none/none.txt")).toEqual({ kind: "absent" });
        expect(await t.read("src")).toEqual({ kind: "other" });
      });
    });

    it("a file at the top of the tree is read from the root itself", async () => {
      await writeFile(path.join(root, "top.txt"), "top");
      await withTree(async (t) => {
        const top = await t.read("top.txt");
        expect(top.kind === "file" && new TextDecoder().decode(top.bytes)).toBe("top");
      });
    });

    it("a path through a file is absent (the file is not a folder)", async () => {
      await withTree(async (t) => {
        expect(await t.read("src/a.txt/b")).toEqual({ kind: "absent" });
      });
    });

    it("a file that is a link, or a folder on the way that is a link to a sibling: apply/outside", async () => {
      await symlink(path.join(elsewhere, "secret.txt"), path.join(root, "src/link.txt"));
      await symlink(elsewhere, path.join(root, "out"));
      await withTree(async (t) => {
        await expect(t.read("src/link.txt")).rejects.toMatchObject({ code: "apply/outside" });
        await expect(t.read("out/secret.txt")).rejects.toMatchObject({ code: "apply/outside" });
      });
    });

    it("a link to a folder inside the tree is refused too: nothing is reached through a link", async () => {
      await symlink("src", path.join(root, "alias"));
      await withTree(async (t) => {
        await expect(t.read("alias/a.txt")).rejects.toMatchObject({ code: "apply/outside" });
      });
    });
  });

  describe("writing", () => {
    it("a new file in new folders: the folders made, the file 0644 (less the umask)", async () => {
      await withTree(async (t) => {
        await t.write("new/deep/b.txt", new TextEncoder().encode("b"));
      });
      expect(await readFile(path.join(root, "new/deep/b.txt"), "utf8")).toBe("b");
      const mode = (await stat(path.join(root, "new/deep/b.txt"))).mode & 0o777;
      expect(mode & ~0o644).toBe(0);
      expect(mode & 0o600).toBe(0o600);
    });

    it("a modified file keeps its mode, and no temporary file is left beside it", async () => {
      await chmod(path.join(root, "src/a.txt"), 0o755);
      await withTree(async (t) => t.write("src/a.txt", new TextEncoder().encode("changed")));
      expect(await readFile(path.join(root, "src/a.txt"), "utf8")).toBe("changed");
      expect((await stat(path.join(root, "src/a.txt"))).mode & 0o7777).toBe(0o755);
      expect(await readdir(path.join(root, "src"))).toEqual(["a.txt"]);
    });

    it("a write through a folder that is a link to a sibling (tree-x): apply/outside, nothing written there", async () => {
      await symlink(elsewhere, path.join(root, "out"));
      await withTree(async (t) => {
        await expect(
          t.write("out/secret.txt", new TextEncoder().encode("x")),
        ).rejects.toMatchObject({
          code: "apply/outside",
        });
      });
      expect(await readFile(path.join(elsewhere, "secret.txt"), "utf8")).toBe("secret\n");
    });

    it("a write over a file that is a link replaces the link, never the file it points at", async () => {
      await symlink(path.join(elsewhere, "secret.txt"), path.join(root, "src/link.txt"));
      await withTree(async (t) => {
        await expect(t.write("src/link.txt", new TextEncoder().encode("x"))).rejects.toMatchObject({
          code: "apply/outside",
        });
      });
      expect(await readFile(path.join(elsewhere, "secret.txt"), "utf8")).toBe("secret\n");
    });

    it("a write whose folder on the way is a file: ENOTDIR, nothing written", async () => {
      await withTree(async (t) => {
        await expect(t.write("src/a.txt/b.txt", new Uint8Array())).rejects.toMatchObject({
          code: "ENOTDIR",
        });
      });
      expect(await readFile(path.join(root, "src/a.txt"), "utf8")).toBe("a\n");
    });

    it("the folders a write made are removed again, deepest first; folders that were there stay", async () => {
      await withTree(async (t) => {
        await t.write("src/made/deeper/c.txt", new TextEncoder().encode("c"));
        await t.remove("src/made/deeper/c.txt");
        await t.removeMade();
      });
      expect(await readdir(path.join(root, "src"))).toEqual(["a.txt"]);
    });

    it("a folder made that is not empty any more is left", async () => {
      await withTree(async (t) => {
        await t.write("made/c.txt", new TextEncoder().encode("c"));
        await t.removeMade();
      });
      expect(await readFile(path.join(root, "made/c.txt"), "utf8")).toBe("c");
    });
  });

  describe("removing", () => {
    it("a file is unlinked; a link is removed, never what it points at", async () => {
      await symlink(path.join(elsewhere, "secret.txt"), path.join(root, "src/link.txt"));
      await withTree(async (t) => {
        await t.remove("src/a.txt");
        await t.remove("src/link.txt");
      });
      expect(await readdir(path.join(root, "src"))).toEqual([]);
      expect(await readFile(path.join(elsewhere, "secret.txt"), "utf8")).toBe("secret\n");
    });

    it("a file in a missing folder: ENOENT", async () => {
      await withTree(async (t) => {
        await expect(t.remove("none/a.txt")).rejects.toMatchObject({ code: "ENOENT" });
      });
    });
  });

  describe("what a tree holds open, and names that look like its own rules", () => {
    const openFds = async () => (await readdir("/proc/self/fd")).length;

    it("close releases every folder it opened, however often a path was walked", async () => {
      const before = await openFds();
      await withTree(async (t) => {
        await t.read("src/a.txt");
        await t.read("src/a.txt");
        await t.read("src/none/x.txt");
        await t.write("made/deep/x.txt", new TextEncoder().encode("x"));
        await t.write("made/deep/y.txt", new TextEncoder().encode("y"));
      });
      expect(await openFds()).toBe(before);
    });

    it("a write into folders that are already there opens each once: close leaves nothing open", async () => {
      await mkdir(path.join(root, "src/deep"));
      const before = await openFds();
      await withTree(async (t) => {
        // Nothing has opened src or src/deep yet: the write finds them there, makes nothing.
        await t.write("src/deep/b.txt", new TextEncoder().encode("b"));
        await t.removeMade();
      });
      expect(await openFds()).toBe(before);
      expect(await readFile(path.join(root, "src/deep/b.txt"), "utf8")).toBe("b");
    });

    it("a read never makes a folder; a remove never makes one either", async () => {
      await withTree(async (t) => {
        expect(await t.read("none/x.txt")).toEqual({ kind: "absent" });
        await expect(t.remove("gone/x.txt")).rejects.toMatchObject({ code: "ENOENT" });
      });
      expect((await readdir(root)).sort()).toEqual(["src"]);
    });

    it("folders whose names end or start with a dot are folders like any other", async () => {
      await mkdir(path.join(root, "dir."));
      await mkdir(path.join(root, ".hidden"));
      await mkdir(path.join(root, "dir"));
      await mkdir(path.join(root, "hidden"));
      await writeFile(path.join(root, "dir./f"), "dot-end");
      await writeFile(path.join(root, ".hidden/f"), "dot-start");
      await withTree(async (t) => {
        const text = async (rel: string) => {
          const c = await t.read(rel);
          return c.kind === "file" ? new TextDecoder().decode(c.bytes) : c.kind;
        };
        expect(await text("dir./f")).toBe("dot-end");
        expect(await text(".hidden/f")).toBe("dot-start");
        await t.remove("dir./f");
        await t.remove(".hidden/f");
        await t.write("made./g", new TextEncoder().encode("g"));
        await t.remove("made./g");
        await t.removeMade();
      });
      expect((await readdir(path.join(root, "dir."))).length).toBe(0);
      expect((await readdir(path.join(root, ".hidden"))).length).toBe(0);
      expect((await readdir(root)).sort()).toEqual([".hidden", "dir", "dir.", "hidden", "src"]);
    });

    it("folders made under folders whose names end or start with a dot are removed again", async () => {
      await withTree(async (t) => {
        for (const rel of ["made./sub/g", ".made/sub/g"]) {
          await t.write(rel, new TextEncoder().encode("g"));
          await t.remove(rel);
        }
        await t.removeMade();
      });
      expect(await readdir(root)).toEqual(["src"]);
    });

    it("a file at the top is removed; a folder made at the top is removed again", async () => {
      await writeFile(path.join(root, "top.txt"), "top");
      await withTree(async (t) => {
        await t.remove("top.txt");
        await t.write("made/c.txt", new TextEncoder().encode("c"));
        await t.remove("made/c.txt");
        await t.removeMade();
      });
      expect(await readdir(root)).toEqual(["src"]);
    });

    it("a name too long for the file system is that error, not a link nor an absent file", async () => {
      const long = "n".repeat(300);
      await withTree(async (t) => {
        await expect(t.read(long)).rejects.toMatchObject({ code: "ENAMETOOLONG" });
        await expect(t.read(`${long}/x.txt`)).rejects.toMatchObject({ code: "ENAMETOOLONG" });
      });
    });

    it("a write over a folder fails and leaves no temporary file behind", async () => {
      await withTree(async (t) => {
        await expect(t.write("src", new TextEncoder().encode("x"))).rejects.toBeTruthy();
      });
      expect((await readdir(root)).sort()).toEqual(["src"]);
      expect(await readdir(path.join(root, "src"))).toEqual(["a.txt"]);
    });

    it("the target that is a link says so: nothing is written through a link", async () => {
      const link = path.join(base, "link");
      await symlink(root, link);
      await expect(ContainedTree.open(link)).rejects.toThrow(/^the target .* is a symbolic link/);
    });
  });

  describe("modes", () => {
    it("a modified file keeps its mode, write bits for group and others included (which a umask of 022 would take)", async () => {
      await chmod(path.join(root, "src/a.txt"), 0o777);
      await withTree(async (t) => t.write("src/a.txt", new TextEncoder().encode("m")));
      expect((await stat(path.join(root, "src/a.txt"))).mode & 0o7777).toBe(0o777);
    });
  });
});
