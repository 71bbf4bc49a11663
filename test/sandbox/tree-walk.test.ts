// Walking and removing trees a sandboxed command may have shaped (tree-walk.ts): directories before
// what they hold, links reported and never followed, a depth bound exactly at its limit, and a
// directory replaced or moved while it is walked refused (sandbox/tree-changed) — each made to
// happen deterministically from inside the walk's own callback. Removal never follows a link.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeQuietly, displayPath, openDirPath } from "../../src/adapters/sandbox/host-fs.js";
import {
  child,
  partsOf,
  removeAt,
  removePath,
  type Visitor,
  type WalkOptions,
  walkTree,
} from "../../src/adapters/sandbox/tree-walk.js";

const work = mkdtempSync(path.join(tmpdir(), "warrant-walk-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let root: string;
let n = 0;
beforeEach(() => {
  n += 1;
  root = path.join(work, `t${n}`);
  // t/a/b/c/deep, t/a/f, t/top, a link to a/ and one to the outside.
  mkdirSync(path.join(root, "a/b/c"), { recursive: true });
  mkdirSync(path.join(work, `outside${n}`));
  writeFileSync(path.join(work, `outside${n}/keep`), "keep");
  writeFileSync(path.join(root, "a/b/c/deep"), "d");
  writeFileSync(path.join(root, "a/f"), "f");
  writeFileSync(path.join(root, "top"), "t");
  symlinkSync("a", path.join(root, "to-a"));
  symlinkSync(path.join(work, `outside${n}`), path.join(root, "to-outside"));
});

/** Every entry as `path kind`, with `>` and `<` for entering and leaving, in walk order. */
async function walk(
  opts: WalkOptions = {},
  onEntry?: (p: string, kind: string) => void,
): Promise<string[]> {
  const seen: string[] = [];
  const fd = openDirPath(root);
  const visitor: Visitor<string> = {
    entry(_dirFd, _name, _st, kind, node, state) {
      const p = displayPath(partsOf(node));
      seen.push(`${p} ${kind} in ${state}`);
      onEntry?.(p, kind);
      return kind === "dir" ? p : undefined;
    },
    leave(node, state) {
      seen.push(`< ${displayPath(partsOf(node))} ${state}`);
    },
    tooDeep(node, state) {
      seen.push(`too deep ${displayPath(partsOf(node))} ${state}`);
    },
  };
  try {
    await walkTree(fd, "root", visitor, opts);
  } finally {
    closeQuietly(fd);
  }
  return seen.sort();
}

describe("walkTree", () => {
  it("visits every entry with its parent's state, leaves each folder walked, never follows a link", async () => {
    expect(await walk()).toEqual(
      [
        "a dir in root",
        "a/b dir in a",
        "a/b/c dir in a/b",
        "a/b/c/deep file in a/b/c",
        "a/f file in a",
        "top file in root",
        "to-a symlink in root",
        "to-outside symlink in root",
        "< a a",
        "< a/b a/b",
        "< a/b/c a/b/c",
      ].sort(),
    );
  });

  it("walks folders down to maxDepth exactly; one level deeper is told tooDeep instead", async () => {
    const seen = await walk({ maxDepth: 2 });
    expect(seen).toContain("a/b dir in a");
    expect(seen).toContain("< a/b a/b");
    expect(seen).toContain("too deep a/b/c a/b/c");
    expect(seen.some((s) => s.startsWith("a/b/c/deep"))).toBe(false);
    expect(seen.some((s) => s.startsWith("< a/b/c"))).toBe(false);
  });

  it("a visitor without tooDeep: folders past maxDepth are passed over, the walk goes on", async () => {
    const seen: string[] = [];
    const fd = openDirPath(root);
    try {
      await walkTree(
        fd,
        0,
        {
          entry(_d, _n, _s, kind, node) {
            seen.push(displayPath(partsOf(node)));
            return kind === "dir" ? 0 : undefined;
          },
        },
        { maxDepth: 1 },
      );
    } finally {
      closeQuietly(fd);
    }
    expect(seen.sort()).toEqual(["a", "a/b", "a/f", "to-a", "to-outside", "top"]);
  });

  it("a state returned for a file or a link walks into nothing", async () => {
    const seen: string[] = [];
    const fd = openDirPath(root);
    try {
      await walkTree(fd, 0, {
        entry(_d, _n, _s, kind, node) {
          seen.push(`${displayPath(partsOf(node))} ${kind}`);
          return 0;
        },
      });
    } finally {
      closeQuietly(fd);
    }
    expect(seen.sort()).toEqual(
      [
        "a dir",
        "a/b dir",
        "a/b/c dir",
        "a/b/c/deep file",
        "a/f file",
        "to-a symlink",
        "to-outside symlink",
        "top file",
      ].sort(),
    );
  });

  it("closes every folder it opens, walked to the end or refused", async () => {
    const fds = () => readdirSync("/proc/self/fd").length;
    const before = fds();
    await walk();
    expect(fds()).toBe(before);
    mkdirSync(path.join(work, `away${n}`));
    const err = await walk({}, (p) => {
      if (p === "a/b/c/deep") renameSync(path.join(root, "a/b"), path.join(work, `away${n}/b`));
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "sandbox/tree-changed" });
    expect(fds()).toBe(before);
  });

  it("a folder the visitor skips is not walked into", async () => {
    const seen: string[] = [];
    const fd = openDirPath(root);
    await walkTree(fd, 0, {
      entry(_d, _n, _s, kind, node) {
        seen.push(displayPath(partsOf(node)));
        return kind === "dir" && displayPath(partsOf(node)) !== "a/b" ? 0 : undefined;
      },
    });
    closeQuietly(fd);
    expect(seen.sort()).toEqual(["a", "a/b", "a/f", "to-a", "to-outside", "top"]);
  });

  it("stop ends the walk at the next entry", async () => {
    let entries = 0;
    const seen = await walk({ stop: () => entries >= 2 }, () => {
      entries += 1;
    });
    expect(seen.filter((s) => !s.startsWith("<"))).toHaveLength(2);
    expect(seen.some((s) => s.startsWith("<"))).toBe(false);
  });

  it("an entry gone between the listing and its lstat is passed over", async () => {
    const seen = await walk({}, (p) => {
      if (p === "a") rmSync(path.join(root, "top"));
    });
    // Listed order decides whether top was visited before a; either way the walk goes on.
    expect(seen).toContain("a/b/c/deep file in a/b/c");
  });

  it("a folder replaced by another after its lstat: sandbox/tree-changed, nothing walked in it", async () => {
    mkdirSync(path.join(work, `other${n}`));
    writeFileSync(path.join(work, `other${n}/planted`), "p");
    const err = await walk({}, (p) => {
      if (p === "a") {
        renameSync(path.join(root, "a"), path.join(work, `moved${n}`));
        renameSync(path.join(work, `other${n}`), path.join(root, "a"));
      }
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "sandbox/tree-changed" });
  });

  it("a folder moved elsewhere while it is walked: going back up is refused", async () => {
    mkdirSync(path.join(work, `away${n}`));
    const err = await walk({}, (p) => {
      if (p === "a/b/c/deep") renameSync(path.join(root, "a/b"), path.join(work, `away${n}/b`));
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "sandbox/tree-changed" });
  });

  it("a chain of names: depth counted from 1, parts in order", () => {
    const a = child(undefined, Buffer.from("a"));
    const b = child(a, Buffer.from("b"));
    expect([a.depth, b.depth]).toEqual([1, 2]);
    expect(partsOf(b).map(String)).toEqual(["a", "b"]);
    expect(partsOf(undefined)).toEqual([]);
  });
});

describe("removeAt and removePath", () => {
  it("removes a whole tree at any depth, links inside it removed, never what they point at", async () => {
    symlinkSync(path.join(work, `outside${n}`), path.join(root, "a/b/c/out"));
    mkdirSync(path.join(root, "a/b/c/d1/d2/d3"), { recursive: true });
    mkdirSync(path.join(root, "a/e"));
    const fd = openDirPath(root);
    try {
      expect(await removeAt(fd, Buffer.from("a"))).toBe(true);
    } finally {
      closeQuietly(fd);
    }
    expect(existsSync(path.join(root, "a"))).toBe(false);
    expect(readFileSync(path.join(work, `outside${n}/keep`), "utf8")).toBe("keep");
    expect(existsSync(path.join(root, "top"))).toBe(true);
  });

  it("a link is removed itself; a file is removed; nothing there is already removed", async () => {
    const fd = openDirPath(root);
    try {
      expect(await removeAt(fd, Buffer.from("to-outside"))).toBe(true);
      expect(await removeAt(fd, Buffer.from("to-a"))).toBe(true);
      expect(await removeAt(fd, Buffer.from("top"))).toBe(true);
      expect(await removeAt(fd, Buffer.from("missing"))).toBe(true);
    } finally {
      closeQuietly(fd);
    }
    expect(existsSync(path.join(root, "to-outside"))).toBe(false);
    expect(existsSync(path.join(root, "to-a"))).toBe(false);
    expect(existsSync(path.join(root, "top"))).toBe(false);
    expect(readFileSync(path.join(work, `outside${n}/keep`), "utf8")).toBe("keep");
    expect(readFileSync(path.join(root, "a/f"), "utf8")).toBe("f");
  });

  it("removePath: a tree by its path; a path whose folder is missing is removed already", async () => {
    expect(await removePath(path.join(root, "a"))).toBe(true);
    expect(existsSync(path.join(root, "a"))).toBe(false);
    expect(await removePath(path.join(root, "no/such/thing"))).toBe(true);
    // Its parent is a link: refused, nothing removed through it.
    expect(await removePath(path.join(root, "to-outside", "keep"))).toBe(false);
    expect(readFileSync(path.join(work, `outside${n}/keep`), "utf8")).toBe("keep");
    // A parent that is a file is not ENOENT: false.
    expect(await removePath(path.join(root, "top", "x"))).toBe(false);
  });
});
