// The patch parser and applier, each check deciding alone: git's extended headers read exactly,
// refusals at their line, no-newline markers on each side, hunk counts on each side, and where a
// hunk lands when its stated line is off, repeated, past the end or before the previous hunk.
import { describe, expect, it } from "vitest";
import type { Problem, Result } from "../../src/core/result.js";
import {
  applyParsedDiff,
  applyUnifiedDiff,
  type ParsedDiff,
  parseUnifiedDiff,
} from "../../src/core/taskpack/patch.js";

function diff(...lines: string[]): string {
  return `${lines.join("\n")}\n`;
}

function parsed(d: string): ParsedDiff {
  const r = parseUnifiedDiff(d);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

function refusal(r: Result<unknown>): Problem {
  if (r.ok) throw new Error("expected a refusal");
  expect(r.errors).toHaveLength(1);
  return r.errors[0] as Problem;
}

/** The code and line of a malformed diff's refusal (its path is always ""). */
function malformedAt(d: string): [string, number | undefined] {
  const e = refusal(parseUnifiedDiff(d));
  expect(e.path).toBe("");
  expect(e.message.length).toBeGreaterThan(0);
  return [e.code, e.line];
}

const HEADERS = ["--- a/f", "+++ b/f"];

describe("parseUnifiedDiff: the preamble", () => {
  it("a plain diff has no extended headers", () => {
    const p = parsed(diff(...HEADERS, "@@ -1 +1 @@", "-a", "+b"));
    expect(p.headers).toStrictEqual({ gitPaths: [], renameOrCopy: false, binary: false });
    expect([p.oldPath, p.newPath]).toEqual(["f", "f"]);
  });

  it("reads plain names in diff --git, and the mode lines trimmed, each under its own key", () => {
    const p = parsed(
      diff("diff --git a/x b/x", "old mode 100644  ", "new mode 100755 ", "--- a/x", "+++ b/x"),
    );
    expect(p.headers).toStrictEqual({
      gitPaths: ["a/x", "b/x"],
      renameOrCopy: false,
      binary: false,
      oldMode: "100644",
      newMode: "100755",
    });
    const created = parsed(
      diff("diff --git a/n b/n", "new file mode 100755 ", "--- /dev/null", "+++ b/n"),
    );
    expect(created.headers).toStrictEqual({
      gitPaths: ["a/n", "b/n"],
      renameOrCopy: false,
      binary: false,
      newFileMode: "100755",
    });
    expect([created.oldPath, created.newPath]).toEqual([null, "n"]);
    const deleted = parsed(
      diff("diff --git a/d b/d", "deleted file mode 100644 ", "--- a/d", "+++ /dev/null"),
    );
    expect(deleted.headers).toStrictEqual({
      gitPaths: ["a/d", "b/d"],
      renameOrCopy: false,
      binary: false,
      deletedFileMode: "100644",
    });
    expect([deleted.oldPath, deleted.newPath]).toEqual(["d", null]);
  });

  it("a header that only changes modes has no ---/+++ and no hunk", () => {
    const r = parseUnifiedDiff(diff("diff --git a/x b/x", "old mode 100644", "new mode 100755"));
    expect(r).toEqual({
      ok: true,
      value: {
        oldPath: null,
        newPath: null,
        headers: {
          gitPaths: ["a/x", "b/x"],
          renameOrCopy: false,
          binary: false,
          oldMode: "100644",
          newMode: "100755",
        },
        hunks: [],
      },
    });
    // Without a diff --git line, text with no ---/+++ is refused (with no line).
    const e = refusal(parseUnifiedDiff(diff("just some text", "old mode 100644")));
    expect(e.code).toBe("patch/malformed");
    expect(e).not.toHaveProperty("line");
    expect(e.message.length).toBeGreaterThan(0);
  });

  it.each([
    "rename from x",
    "rename to y",
    "copy from x",
    "copy to y",
    "similarity index 90%",
    "dissimilarity index 60%",
  ])("%s marks a rename or copy", (line) => {
    const p = parsed(diff("diff --git a/x b/y", line, ...HEADERS));
    expect(p.headers.renameOrCopy).toBe(true);
    expect(p.headers.binary).toBe(false);
  });

  it.each(["Binary files a/x and b/x differ", "GIT binary patch"])("%s marks a binary", (line) => {
    const p = parsed(diff("diff --git a/x b/x", line, ...HEADERS));
    expect(p.headers.binary).toBe(true);
    expect(p.headers.renameOrCopy).toBe(false);
  });

  it("free text that merely contains those words, or a diff --git line that is not one, marks nothing", () => {
    const p = parsed(
      diff(
        "note: rename from x",
        "x similarity index 90%",
        "x dissimilarity index 60%",
        "see Binary files a/x",
        "GIT binary patch follows",
        "said: diff --git a/x b/x",
        "diff --git a/x b/x extra",
        "mode new file mode 1",
        ...HEADERS,
      ),
    );
    expect(p.headers).toStrictEqual({ gitPaths: [], renameOrCopy: false, binary: false });
  });

  it("refuses a second diff --git line, and a broken quoted name on either side, at their line", () => {
    expect(malformedAt(diff("diff --git a/x b/x", "diff --git a/y b/y", ...HEADERS))).toEqual([
      "patch/malformed",
      2,
    ]);
    expect(malformedAt(diff("index 1..2", 'diff --git a/x "b/\\777"', ...HEADERS))).toEqual([
      "patch/malformed",
      2,
    ]);
  });

  it("refuses a hunk before the headers, at its line", () => {
    expect(malformedAt(diff("diff --git a/x b/x", "@@ -1 +1 @@", "-a", "+b"))).toEqual([
      "patch/malformed",
      2,
    ]);
    // A hunk header with the function name after it, as git writes it.
    expect(malformedAt(diff("index 1..2", "@@ -1 +1 @@ main()", "-a", "+b"))).toEqual([
      "patch/malformed",
      2,
    ]);
  });
});

describe("parseUnifiedDiff: the ---/+++ pair", () => {
  it("a --- line without +++ after it, at the end or before a hunk, is refused at the next line", () => {
    expect(malformedAt(diff("x", "--- a/f"))).toEqual(["patch/malformed", 3]);
    expect(malformedAt(diff("--- a/f", "@@ -1 +1 @@"))).toEqual(["patch/malformed", 2]);
  });

  it("takes a/ and b/ off only when they are there", () => {
    const p = parsed(diff("--- src/f", "+++ lib/g"));
    expect([p.oldPath, p.newPath]).toEqual(["src/f", "lib/g"]);
    const q = parsed(diff("--- b/f", "+++ a/g"));
    expect([q.oldPath, q.newPath]).toEqual(["b/f", "a/g"]);
  });

  it("a quote inside a plain name is part of the name", () => {
    const p = parsed(diff('--- a/x"y"', '+++ b/x"y"'));
    expect([p.oldPath, p.newPath]).toEqual(['x"y"', 'x"y"']);
  });

  it("a text without its final newline parses as the one with it", () => {
    const d = diff(...HEADERS, "@@ -1 +1 @@", "-a", "+b");
    expect(parseUnifiedDiff(d.slice(0, -1))).toEqual(parseUnifiedDiff(d));
    expect(parsed(d.slice(0, -1)).hunks[0]?.lines).toEqual([
      { tag: "-", text: "a" },
      { tag: "+", text: "b" },
    ]);
  });
});

describe("parseUnifiedDiff: hunks", () => {
  it("reads line numbers of several digits", () => {
    const p = parsed(
      diff(...HEADERS, "@@ -10,12 +20,11 @@", ...Array.from({ length: 11 }, () => " x"), "-y"),
    );
    expect(p.hunks[0]).toMatchObject({
      oldStart: 10,
      oldCount: 12,
      newStart: 20,
      newCount: 11,
      line: 3,
    });
    const q = parsed(diff(...HEADERS, "@@ -123 +456 @@", "-a", "+b"));
    expect(q.hunks[0]).toMatchObject({ oldStart: 123, oldCount: 1, newStart: 456, newCount: 1 });
  });

  it("refuses a second file after a hunk, and junk where a hunk header belongs, at its line", () => {
    for (const next of ["--- a/g", "diff --git a/g b/g"]) {
      const d = diff(...HEADERS, "@@ -1 +1 @@", "-a", "+b", next, "+++ b/g");
      expect(malformedAt(d)).toEqual(["patch/malformed", 6]);
      expect(refusal(parseUnifiedDiff(d)).message).toContain("one file");
    }
    expect(
      malformedAt(diff(...HEADERS, "@@ -1 +1 @@", "-a", "+b", "x@@ -1 +1 @@", "-c", "+d")),
    ).toEqual(["patch/malformed", 6]);
    expect(malformedAt(diff(...HEADERS, "junk"))).toEqual(["patch/malformed", 3]);
  });

  it("refuses a line with another tag inside a hunk, at its line", () => {
    expect(malformedAt(diff(...HEADERS, "@@ -1,2 +1,2 @@", "-a", "x", "+b"))).toEqual([
      "patch/malformed",
      5,
    ]);
    expect(
      refusal(parseUnifiedDiff(diff(...HEADERS, "@@ -1,2 +1,2 @@", "-a", "x", "+b"))).message,
    ).toContain("line 5");
  });

  it("refuses a hunk that ends before its count on either side, at its header", () => {
    expect(malformedAt(diff(...HEADERS, "@@ -1,2 +1 @@", "-a", "+b"))).toEqual([
      "patch/malformed",
      3,
    ]);
    expect(malformedAt(diff(...HEADERS, "@@ -1 +1,2 @@", "-a", "+b"))).toEqual([
      "patch/malformed",
      3,
    ]);
  });

  it("refuses a no-newline marker with no line before it, at its line", () => {
    expect(
      malformedAt(diff(...HEADERS, "@@ -1 +1 @@", "\\ No newline at end of file", "-a", "+b")),
    ).toEqual(["patch/malformed", 4]);
  });

  it("a marker after a removed line is the old side's, after an added line the new side's, after context both", () => {
    const flags = (...body: string[]) => {
      const h = parsed(diff(...HEADERS, ...body)).hunks[0];
      return [h?.oldNoFinalNewline, h?.newNoFinalNewline];
    };
    const marker = "\\ No newline at end of file";
    // Inside the counted lines.
    expect(flags("@@ -1 +1 @@", "-a", marker, "+b")).toEqual([true, false]);
    expect(flags("@@ -1,2 +1,2 @@", " a", "+b", marker, "-c")).toEqual([false, true]);
    expect(flags("@@ -1,2 +1,2 @@", " a", marker, "-c", "+b")).toEqual([true, true]);
    // Right after the last counted line.
    expect(flags("@@ -1 +1 @@", "+b", "-a", marker)).toEqual([true, false]);
    expect(flags("@@ -1 +1 @@", "-a", "+b", marker)).toEqual([false, true]);
    expect(flags("@@ -1 +1 @@", " a", marker)).toEqual([true, true]);
    expect(flags("@@ -1 +1 @@", "-a", "+b")).toEqual([false, false]);
  });

  it("a marker after a hunk with no lines belongs to no line", () => {
    const h = parsed(diff(...HEADERS, "@@ -0,0 +0,0 @@", "\\ No newline at end of file")).hunks;
    expect(h).toEqual([
      {
        oldStart: 0,
        oldCount: 0,
        newStart: 0,
        newCount: 0,
        lines: [],
        oldNoFinalNewline: false,
        newNoFinalNewline: false,
        line: 3,
      },
    ]);
  });
});

describe("applyParsedDiff: where a hunk lands", () => {
  const apply = (before: string | null, ...body: string[]) =>
    applyUnifiedDiff(before, diff(...HEADERS, ...body));

  it("at its stated line when the same lines are also elsewhere", () => {
    expect(apply("x\nx\nx\nx\n", "@@ -3 +3 @@", "-x", "+y")).toEqual({
      ok: true,
      value: "x\nx\ny\nx\n",
    });
    expect(apply("x\nx\n", "@@ -1 +1 @@", "-x", "+y")).toEqual({ ok: true, value: "y\nx\n" });
    // A pure insertion goes after its stated line.
    expect(apply("x\nx\nx\n", "@@ -2,0 +3 @@", "+new")).toEqual({
      ok: true,
      value: "x\nx\nnew\nx\n",
    });
  });

  it("looked for backwards when it is stated later than it is", () => {
    expect(apply("a\nb\nc\nd\ne\nf\n", "@@ -5 +5 @@", "-b", "+B")).toEqual({
      ok: true,
      value: "a\nB\nc\nd\ne\nf\n",
    });
    // Stated past the end; found at the first line.
    expect(apply("a\nb\nc\nd\ne\n", "@@ -10 +10 @@", "-a", "+A")).toEqual({
      ok: true,
      value: "A\nb\nc\nd\ne\n",
    });
  });

  it("a pure insertion stated past the end goes at the end", () => {
    expect(apply("a\nb\n", "@@ -5,0 +6,2 @@", "+c", "+d")).toEqual({
      ok: true,
      value: "a\nb\nc\nd\n",
    });
  });

  it("an insertion stated before the previous hunk's end, which is the file's end, goes at the end", () => {
    expect(apply("a\nb\n", "@@ -2 +2 @@", "-b", "+B", "@@ -1,0 +3 @@", "+c")).toEqual({
      ok: true,
      value: "a\nB\nc\n",
    });
  });

  it("never before the end of the previous hunk, but right at it", () => {
    // The second hunk's lines are also before the first's end: not there, after it.
    expect(
      apply(
        "x\ny\nx\ny\n",
        "@@ -1,2 +1,2 @@",
        "-x",
        "-y",
        "+X",
        "+Y",
        "@@ -1,2 +1,2 @@",
        "-x",
        "-y",
        "+P",
        "+Q",
      ),
    ).toEqual({ ok: true, value: "X\nY\nP\nQ\n" });
    // Only before it: refused.
    const r = apply("a\nb\na\nc\n", "@@ -3 +3 @@", "-a", "+A", "@@ -3 +3 @@", "-a", "+Z");
    expect(refusal(r)).toMatchObject({
      code: "patch/hunk-failed",
      path: "",
      line: 6,
      detail: { hunk: 2 },
    });
    // Stated later, found right where the previous hunk ended.
    expect(apply("a\nb\nc\nd\ne\n", "@@ -1 +1 @@", "-a", "+A", "@@ -4 +4 @@", "-b", "+B")).toEqual({
      ok: true,
      value: "A\nB\nc\nd\ne\n",
    });
  });
});

describe("applyParsedDiff: the end of the file", () => {
  const apply = (before: string | null, ...body: string[]) =>
    applyUnifiedDiff(before, diff(...HEADERS, ...body));

  it("a file without its final newline keeps it missing when a hunk does not reach the end", () => {
    expect(apply("a\nb\nc", "@@ -1 +1 @@", "-a", "+A")).toEqual({ ok: true, value: "A\nb\nc" });
  });

  it("a hunk that disagrees about the final newline is refused with its line and number", () => {
    const r = apply(
      "a\nb\n",
      "@@ -1 +1 @@",
      "-a",
      "+A",
      "@@ -2 +2 @@",
      "-b",
      "\\ No newline at end of file",
      "+B",
    );
    expect(refusal(r)).toMatchObject({
      code: "patch/hunk-failed",
      path: "",
      line: 6,
      detail: { hunk: 2 },
    });
  });

  it("removing every line but keeping the file leaves it empty", () => {
    expect(apply("a\n", "@@ -1 +0,0 @@", "-a")).toEqual({ ok: true, value: "" });
  });

  it("a deletion that leaves lines is refused, at no line", () => {
    const r = applyUnifiedDiff("a\nb\n", diff("--- a/f", "+++ /dev/null", "@@ -1 +0,0 @@", "-a"));
    const e = refusal(r);
    expect(e).toMatchObject({ code: "patch/hunk-failed", path: "" });
    expect(e).not.toHaveProperty("line");
  });

  it("creating over an existing file and changing an absent one are refused with no path", () => {
    expect(
      refusal(applyUnifiedDiff("x\n", diff("--- /dev/null", "+++ b/f", "@@ -0,0 +1 @@", "+a"))),
    ).toMatchObject({
      code: "patch/target-exists",
      path: "",
    });
    expect(refusal(apply(null, "@@ -1 +1 @@", "-a", "+b"))).toMatchObject({
      code: "patch/target-missing",
      path: "",
    });
  });

  it("a malformed diff is refused before anything is applied", () => {
    const r = applyUnifiedDiff("a\n", diff("@@ -1 +1 @@", "-a", "+b"));
    expect(refusal(r)).toMatchObject({ code: "patch/malformed", path: "", line: 1 });
  });

  it("applies a parsed diff on its own", () => {
    const p = parsed(diff(...HEADERS, "@@ -1 +1 @@", "-a", "+b"));
    expect(applyParsedDiff("a\n", p)).toEqual({ ok: true, value: "b\n" });
  });
});
