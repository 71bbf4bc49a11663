// Git-style unified diffs of whole files: headers, hunks, missing final newlines, binaries, and a
// round trip through the patch applier (and git itself) over many random edits.
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { applyUnifiedDiff } from "../../src/core/taskpack/patch.js";
import { fileDiff, unifiedDiff, unifiedHunks } from "../../src/core/taskpack/unified-diff.js";

const enc = (s: string) => new TextEncoder().encode(s);

describe("fileDiff", () => {
  it("a modified file: git headers and one hunk with three lines of context", () => {
    const before = "a\nb\nc\nd\ne\nf\ng\nh\n";
    const after = "a\nb\nc\nd\nE\nf\ng\nh\n";
    expect(fileDiff({ path: "src/x.txt", before: enc(before), after: enc(after) })).toBe(
      "diff --git a/src/x.txt b/src/x.txt\n--- a/src/x.txt\n+++ b/src/x.txt\n" +
        "@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n",
    );
  });

  it("an added and a deleted file: mode lines and /dev/null", () => {
    expect(fileDiff({ path: "n.txt", before: null, after: enc("one\ntwo\n") })).toBe(
      "diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n",
    );
    expect(fileDiff({ path: "d.txt", before: enc("gone\n"), after: null })).toBe(
      "diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n",
    );
  });

  it("an added empty file has headers and no hunk; an unchanged file has no diff", () => {
    expect(fileDiff({ path: "e", before: null, after: enc("") })).toBe(
      "diff --git a/e b/e\nnew file mode 100644\n",
    );
    expect(fileDiff({ path: "s", before: enc("x\n"), after: enc("x\n") })).toBe("");
  });

  it("marks a side without a final newline", () => {
    expect(unifiedHunks("a\nb", "a\nb\n")).toEqual([
      "@@ -1,2 +1,2 @@",
      " a",
      "-b",
      "\\ No newline at end of file",
      "+b",
    ]);
  });

  it("reports bytes that are not UTF-8 text, or hold a NUL, as binary", () => {
    expect(fileDiff({ path: "b.bin", before: new Uint8Array([0, 1]), after: enc("x") })).toBe(
      "diff --git a/b.bin b/b.bin\nBinary files a/b.bin and b/b.bin differ\n",
    );
    expect(fileDiff({ path: "c.bin", before: null, after: new Uint8Array([0xff, 0xfe]) })).toBe(
      "diff --git a/c.bin b/c.bin\nnew file mode 100644\nBinary files /dev/null and b/c.bin differ\n",
    );
  });

  it("splits far-apart changes into separate hunks and joins near ones", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `l${i}`);
    const near = [...lines];
    near[5] = "X";
    near[10] = "Y";
    expect(
      unifiedHunks(`${lines.join("\n")}\n`, `${near.join("\n")}\n`).filter((l) =>
        l.startsWith("@@"),
      ),
    ).toHaveLength(1);
    const far = [...lines];
    far[2] = "X";
    far[25] = "Y";
    expect(
      unifiedHunks(`${lines.join("\n")}\n`, `${far.join("\n")}\n`).filter((l) =>
        l.startsWith("@@"),
      ),
    ).toEqual(["@@ -1,6 +1,6 @@", "@@ -23,7 +23,7 @@"]);
  });
});

/** A small seeded generator: the same cases on every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomEdit(r: () => number): [string, string] {
  const words = ["a", "b", "c", "d", "", "e"];
  const n = Math.floor(r() * 12);
  const before = Array.from({ length: n }, () => words[Math.floor(r() * words.length)] as string);
  const after = [...before];
  const edits = Math.floor(r() * 5);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(r() * (after.length + 1));
    const kind = r();
    if (kind < 0.4) after.splice(at, 0, words[Math.floor(r() * words.length)] as string);
    else if (kind < 0.7) after.splice(at, 1);
    else after[at] = "z";
  }
  const end = (xs: string[]) => (xs.length === 0 ? "" : `${xs.join("\n")}${r() < 0.8 ? "\n" : ""}`);
  return [end(before), end(after)];
}

describe("paths in headers", () => {
  const names = [
    "plain.txt",
    "sp ace.txt",
    "nl\ndiff --git a-owned b-owned.txt",
    "esc\u001b]0;title\u0007.txt",
    "ü.txt",
    'q"t.txt',
    "back\\slash.txt",
    "tab\there.txt",
  ];

  it("are quoted as git quotes them: the same bytes as git diff writes, for every kind of name", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "warrant-diff-names-"));
    try {
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "core.quotePath=true", ...args], {
          cwd: dir,
          encoding: "utf8",
          env: {
            ...process.env,
            GIT_AUTHOR_NAME: "a",
            GIT_AUTHOR_EMAIL: "a@x",
            GIT_COMMITTER_NAME: "a",
            GIT_COMMITTER_EMAIL: "a@x",
          },
        });
      git("init", "-q");
      // Each name three ways: modified, deleted, added.
      const changes = names.flatMap((n) => [
        { path: `m-${n}`, before: enc("one\n"), after: enc("two\n") },
        { path: `d-${n}`, before: enc("gone\n"), after: null },
        { path: `a-${n}`, before: null, after: enc("new\n") },
      ]);
      for (const c of changes)
        if (c.before !== null) await writeFile(path.join(dir, c.path), c.before);
      git("add", "-A");
      git("commit", "-qm", "base");
      for (const c of changes) {
        if (c.after === null) await rm(path.join(dir, c.path));
        else await writeFile(path.join(dir, c.path), c.after);
      }
      git("add", "-A");
      const byGit = git("diff", "--cached", "--no-renames")
        .split("\n")
        .filter((l) => !l.startsWith("index "))
        .join("\n");
      const order = [...changes].sort((x, y) =>
        Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)),
      );
      const ours = unifiedDiff(order);
      expect(ours).toBe(byGit);
      // No name starts a line of its own.
      expect(ours.match(/^diff --git .*$/gm)).toHaveLength(changes.length);
      expect(ours).not.toContain("\u001b");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("round trip", () => {
  it("the project's patch applier turns before into after for 400 random edits", () => {
    const r = rng(42);
    for (let i = 0; i < 400; i++) {
      const [before, after] = randomEdit(r);
      const d = fileDiff({ path: "f", before: enc(before), after: enc(after) });
      if (d === "") {
        expect(after).toBe(before);
        continue;
      }
      const applied = applyUnifiedDiff(before, d.slice(d.indexOf("\n") + 1));
      expect(applied).toEqual({ ok: true, value: after });
    }
  });

  it("git apply takes a several-file diff and reproduces the after side", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "warrant-udiff-"));
    try {
      execFileSync("git", ["init", "-q"], { cwd: dir });
      const r = rng(7);
      const files = Array.from({ length: 12 }, (_, i) => {
        const [before, after] = randomEdit(r);
        return { path: `f${i}.txt`, before, after };
      });
      for (const f of files) await writeFile(path.join(dir, f.path), f.before);
      const diff = unifiedDiff(
        files.map((f) => ({ path: f.path, before: enc(f.before), after: enc(f.after) })),
      );
      execFileSync("git", ["apply", "-"], { cwd: dir, input: diff });
      for (const f of files) expect(await readFile(path.join(dir, f.path), "utf8")).toBe(f.after);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
