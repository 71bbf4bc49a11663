// Unified diffs at their edges: the shortest edit script (no more changed lines than needed, removals
// before additions), the context and the merging of hunks exactly at their limits, and the headers of
// empty, binary and whitespace-named files.
import { describe, expect, it } from "vitest";
import { fileDiff, unifiedDiff, unifiedHunks } from "../../src/core/taskpack/unified-diff.js";

const enc = (s: string) => new TextEncoder().encode(s);
const text = (lines: readonly string[]) => `${lines.join("\n")}\n`;
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `l${i + 1}`);

/** The lines of a side as the diff compares them: a last line without its newline is another line. */
function sideLines(t: string): string[] {
  if (t === "") return [];
  const lines = t.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  else lines[lines.length - 1] = `${lines[lines.length - 1]}\u0000`;
  return lines;
}

function lcs(a: readonly string[], b: readonly string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    let diag = 0;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j] as number;
      row[j] = x === b[j - 1] ? diag + 1 : Math.max(up, row[j - 1] as number);
      diag = up;
    }
  }
  return row[b.length] as number;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("the edit script", () => {
  it("changes no more lines than the shortest edit script needs (300 random pairs)", () => {
    const r = rng(2024);
    const words = ["a", "b", "c", ""];
    const side = () => {
      const n = Math.floor(r() * 9);
      const xs = Array.from({ length: n }, () => words[Math.floor(r() * words.length)] as string);
      return xs.length === 0 ? "" : `${xs.join("\n")}${r() < 0.7 ? "\n" : ""}`;
    };
    for (let i = 0; i < 300; i++) {
      const before = side();
      const after = side();
      const a = sideLines(before);
      const b = sideLines(after);
      const changed = unifiedHunks(before, after).filter(
        (l) => (l.startsWith("-") || l.startsWith("+")) && !l.startsWith("\\"),
      ).length;
      expect(changed, JSON.stringify([before, after])).toBe(a.length + b.length - 2 * lcs(a, b));
    }
  });

  it("writes a replaced line as its removal, then its addition", () => {
    expect(unifiedHunks("a\n", "b\n")).toEqual(["@@ -1 +1 @@", "-a", "+b"]);
    expect(unifiedHunks("a\nb\nc\n", "x\nb\ny\n")).toEqual([
      "@@ -1,3 +1,3 @@",
      "-a",
      "+x",
      " b",
      "-c",
      "+y",
    ]);
    expect(unifiedHunks("a\nb\n", "b\nc\n")).toEqual(["@@ -1,2 +1,2 @@", "-a", " b", "+c"]);
  });

  it("is empty for equal sides, and takes every line for disjoint ones", () => {
    expect(unifiedHunks("a\nb\n", "a\nb\n")).toEqual([]);
    expect(unifiedHunks("a\nb", "a\nb")).toEqual([]);
    expect(unifiedHunks("", "")).toEqual([]);
    expect(unifiedHunks("a\nb\n", "c\nd\n")).toEqual(["@@ -1,2 +1,2 @@", "-a", "-b", "+c", "+d"]);
    expect(unifiedHunks("", "a\n")).toEqual(["@@ -0,0 +1 @@", "+a"]);
    expect(unifiedHunks("a\n", "")).toEqual(["@@ -1 +0,0 @@", "-a"]);
  });
});

describe("context and hunks", () => {
  const base = numbered(20);

  it("three lines of context on each side, fewer at the start and the end of the file", () => {
    const mid = [...base];
    mid[9] = "X";
    expect(unifiedHunks(text(base), text(mid))).toEqual([
      "@@ -7,7 +7,7 @@",
      " l7",
      " l8",
      " l9",
      "-l10",
      "+X",
      " l11",
      " l12",
      " l13",
    ]);
    const first = [...base];
    first[1] = "X";
    expect(unifiedHunks(text(base), text(first))[0]).toBe("@@ -1,5 +1,5 @@");
    const last = [...base];
    last[18] = "X";
    expect(unifiedHunks(text(base), text(last))[0]).toBe("@@ -16,5 +16,5 @@");
  });

  it("joins two changes six unchanged lines apart, splits them at seven", () => {
    const six = [...base];
    six[3] = "X";
    six[10] = "Y";
    expect(unifiedHunks(text(base), text(six)).filter((l) => l.startsWith("@@"))).toEqual([
      "@@ -1,14 +1,14 @@",
    ]);
    const seven = [...base];
    seven[3] = "X";
    seven[11] = "Y";
    expect(unifiedHunks(text(base), text(seven)).filter((l) => l.startsWith("@@"))).toEqual([
      "@@ -1,7 +1,7 @@",
      "@@ -9,7 +9,7 @@",
    ]);
  });

  it("joins a run of three changes each within reach of the next", () => {
    const three = [...base];
    three[2] = "X";
    three[8] = "Y";
    three[14] = "Z";
    expect(unifiedHunks(text(base), text(three)).filter((l) => l.startsWith("@@"))).toEqual([
      "@@ -1,18 +1,18 @@",
    ]);
  });

  it("numbers a pure insertion and a pure removal inside a file by the line before them", () => {
    const inserted = [...base.slice(0, 10), "NEW", ...base.slice(10)];
    expect(unifiedHunks(text(base), text(inserted))[0]).toBe("@@ -8,6 +8,7 @@");
    const removed = [...base.slice(0, 10), ...base.slice(11)];
    expect(unifiedHunks(text(base), text(removed))[0]).toBe("@@ -8,7 +8,6 @@");
  });

  it("marks a missing final newline on either side, and on both when the last line changes", () => {
    expect(unifiedHunks("a\nb\n", "a\nb")).toEqual([
      "@@ -1,2 +1,2 @@",
      " a",
      "-b",
      "+b",
      "\\ No newline at end of file",
    ]);
    expect(unifiedHunks("a\nb", "a\nc")).toEqual([
      "@@ -1,2 +1,2 @@",
      " a",
      "-b",
      "\\ No newline at end of file",
      "+c",
      "\\ No newline at end of file",
    ]);
    // The marked line keeps all of its text.
    expect(unifiedHunks("abc", "xyz\n")).toEqual([
      "@@ -1 +1 @@",
      "-abc",
      "\\ No newline at end of file",
      "+xyz",
    ]);
    // A context line without its newline is marked too.
    expect(unifiedHunks("a\nb", "x\nb")).toEqual([
      "@@ -1,2 +1,2 @@",
      "-a",
      "+x",
      " b",
      "\\ No newline at end of file",
    ]);
  });
});

describe("fileDiff headers", () => {
  it("a deleted empty file has headers and no hunk", () => {
    expect(fileDiff({ path: "e", before: enc(""), after: null })).toBe(
      "diff --git a/e b/e\ndeleted file mode 100644\n",
    );
  });

  it("a file emptied or filled keeps both names", () => {
    expect(fileDiff({ path: "f", before: enc("a\n"), after: enc("") })).toBe(
      "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-a\n",
    );
    expect(fileDiff({ path: "f", before: enc(""), after: enc("a\n") })).toBe(
      "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+a\n",
    );
  });

  it("a name with a space ends with a tab on ---/+++, except /dev/null", () => {
    expect(fileDiff({ path: "a b", before: enc("x\n"), after: enc("y\n") })).toBe(
      "diff --git a/a b b/a b\n--- a/a b\t\n+++ b/a b\t\n@@ -1 +1 @@\n-x\n+y\n",
    );
    expect(fileDiff({ path: "a b", before: null, after: enc("y\n") })).toBe(
      "diff --git a/a b b/a b\nnew file mode 100644\n--- /dev/null\n+++ b/a b\t\n@@ -0,0 +1 @@\n+y\n",
    );
    expect(fileDiff({ path: "a b", before: enc("x\n"), after: null })).toBe(
      "diff --git a/a b b/a b\ndeleted file mode 100644\n--- a/a b\t\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
    );
  });

  it("binary on either side, a deleted binary and a NUL inside valid UTF-8", () => {
    expect(fileDiff({ path: "b", before: enc("x\n"), after: new Uint8Array([0xc3]) })).toBe(
      "diff --git a/b b/b\nBinary files a/b and b/b differ\n",
    );
    expect(fileDiff({ path: "b", before: enc("a\u0000b"), after: null })).toBe(
      "diff --git a/b b/b\ndeleted file mode 100644\nBinary files a/b and /dev/null differ\n",
    );
    // Equal binaries are still reported: their bytes are not compared as text.
    expect(fileDiff({ path: "b", before: new Uint8Array([0]), after: new Uint8Array([0]) })).toBe(
      "diff --git a/b b/b\nBinary files a/b and b/b differ\n",
    );
  });

  it("unifiedDiff joins the files' diffs in the order given, skipping unchanged ones", () => {
    expect(
      unifiedDiff([
        { path: "z", before: enc("1\n"), after: enc("2\n") },
        { path: "same", before: enc("s\n"), after: enc("s\n") },
        { path: "a", before: null, after: enc("n\n") },
      ]),
    ).toBe(
      "diff --git a/z b/z\n--- a/z\n+++ b/z\n@@ -1 +1 @@\n-1\n+2\n" +
        "diff --git a/a b/a\nnew file mode 100644\n--- /dev/null\n+++ b/a\n@@ -0,0 +1 @@\n+n\n",
    );
    expect(unifiedDiff([])).toBe("");
  });
});
