import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyUnifiedDiff, parseUnifiedDiff } from "../../src/core/taskpack/patch.js";

const FILE = "one\ntwo\nthree\nfour\nfive\n";

function diff(...lines: string[]): string {
  return `${lines.join("\n")}\n`;
}

describe("quoted names in headers", () => {
  it("reads git's quoted names in diff --git, --- and +++ lines", () => {
    const d = diff(
      'diff --git "a/na\\303\\257ve file.txt" "b/na\\303\\257ve file.txt"',
      "index 1111111..2222222 100644",
      '--- "a/na\\303\\257ve file.txt"',
      '+++ "b/na\\303\\257ve file.txt"',
      "@@ -2,1 +2,1 @@",
      "-two",
      "+TWO",
    );
    const parsed = parseUnifiedDiff(d);
    expect(parsed.ok && parsed.value.oldPath).toBe("naïve file.txt");
    expect(parsed.ok && parsed.value.newPath).toBe("naïve file.txt");
    expect(parsed.ok && parsed.value.headers.gitPaths).toEqual([
      "a/naïve file.txt",
      "b/naïve file.txt",
    ]);
    expect(applyUnifiedDiff(FILE, d)).toEqual({ ok: true, value: "one\nTWO\nthree\nfour\nfive\n" });
  });

  it("ends a quoted name at its closing quote, before a tab", () => {
    const parsed = parseUnifiedDiff(
      diff('--- "a/x\\ty"\t2024-01-01', '+++ "b/x\\ty"', "@@ -1,1 +1,1 @@", "-one", "+ONE"),
    );
    expect(parsed.ok && [parsed.value.oldPath, parsed.value.newPath]).toEqual(["x\ty", "x\ty"]);
  });

  it("refuses a broken quoted name with patch/malformed at its line", () => {
    const at = (d: string) => {
      const r = parseUnifiedDiff(d);
      return r.ok ? undefined : [r.errors[0]?.code, r.errors[0]?.line, r.errors[0]?.message];
    };
    expect(at(diff('--- "a/x', "+++ b/x", "@@ -1,1 +1,1 @@", "-one", "+ONE"))).toEqual([
      "patch/malformed",
      1,
      "the --- line has a quoted name that is not well formed",
    ]);
    expect(at(diff("--- a/x", '+++ "b/\\q"', "@@ -1,1 +1,1 @@", "-one", "+ONE"))).toEqual([
      "patch/malformed",
      2,
      "the +++ line has a quoted name that is not well formed",
    ]);
    expect(at(diff('--- "a/x" junk', "+++ b/x", "@@ -1,1 +1,1 @@", "-one", "+ONE"))?.[0]).toBe(
      "patch/malformed",
    );
    expect(
      at(diff('diff --git "a/\\777" b/x', "--- a/x", "+++ b/x", "@@ -1,1 +1,1 @@", "-one", "+ONE")),
    ).toEqual([
      "patch/malformed",
      1,
      "the diff --git line has a quoted name that is not well formed",
    ]);
  });
});

describe("unified diff application", () => {
  it("applies a hunk at its stated position", () => {
    const d = diff("--- a/f", "+++ b/f", "@@ -2,3 +2,3 @@", " two", "-three", "+THREE", " four");
    expect(applyUnifiedDiff(FILE, d)).toEqual({ ok: true, value: "one\ntwo\nTHREE\nfour\nfive\n" });
  });

  it("applies several hunks and additions/removals", () => {
    const d = diff(
      "--- a/f",
      "+++ b/f",
      "@@ -1,2 +1,3 @@",
      " one",
      "+one-and-a-half",
      " two",
      "@@ -4,2 +5,1 @@",
      " four",
      "-five",
    );
    expect(applyUnifiedDiff(FILE, d)).toEqual({
      ok: true,
      value: "one\none-and-a-half\ntwo\nthree\nfour\n",
    });
  });

  it("finds a hunk whose line numbers are off", () => {
    const d = diff("--- a/f", "+++ b/f", "@@ -1,2 +1,2 @@", " four", "-five", "+5");
    expect(applyUnifiedDiff(FILE, d)).toEqual({ ok: true, value: "one\ntwo\nthree\nfour\n5\n" });
  });

  it("fails clearly on a hunk that does not apply", () => {
    const d = diff("--- a/f", "+++ b/f", "@@ -2,2 +2,2 @@", " two", "-tree", "+THREE");
    const r = applyUnifiedDiff(FILE, d);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors[0]?.code).toBe("patch/hunk-failed");
      expect(r.errors[0]?.line).toBe(3);
      expect(r.errors[0]?.detail).toEqual({ hunk: 1 });
    }
  });

  it("creates a file from /dev/null and refuses to create one that exists", () => {
    const d = diff("--- /dev/null", "+++ b/src/new.js", "@@ -0,0 +1,2 @@", "+a", "+b");
    expect(applyUnifiedDiff(null, d)).toEqual({ ok: true, value: "a\nb\n" });
    const r = applyUnifiedDiff("x\n", d);
    expect(r.ok ? undefined : r.errors[0]?.code).toBe("patch/target-exists");
  });

  it("refuses to change a file that does not exist", () => {
    const d = diff("--- a/f", "+++ b/f", "@@ -1 +1 @@", "-a", "+b");
    const r = applyUnifiedDiff(null, d);
    expect(r.ok ? undefined : r.errors[0]?.code).toBe("patch/target-missing");
  });

  it("deletes a file to /dev/null only when every line is removed", () => {
    const d = diff("--- a/f", "+++ /dev/null", "@@ -1,2 +0,0 @@", "-a", "-b");
    expect(applyUnifiedDiff("a\nb\n", d)).toEqual({ ok: true, value: null });
    const r = applyUnifiedDiff("a\nb\nc\n", d);
    expect(r.ok ? undefined : r.errors[0]?.code).toBe("patch/hunk-failed");
  });

  it("honours no-newline-at-end-of-file markers on both sides", () => {
    const add = diff(
      "--- a/f",
      "+++ b/f",
      "@@ -1 +1 @@",
      "-a",
      "\\ No newline at end of file",
      "+a",
    );
    expect(applyUnifiedDiff("a", add)).toEqual({ ok: true, value: "a\n" });
    const drop = diff(
      "--- a/f",
      "+++ b/f",
      "@@ -1 +1 @@",
      "-a",
      "+a",
      "\\ No newline at end of file",
    );
    expect(applyUnifiedDiff("a\n", drop)).toEqual({ ok: true, value: "a" });
    // The marker says the old file lacks a final newline, but it has one.
    const r = applyUnifiedDiff("a\n", add);
    expect(r.ok ? undefined : r.errors[0]?.code).toBe("patch/hunk-failed");
  });

  it("accepts an empty context line written without its space", () => {
    const d = diff("--- a/f", "+++ b/f", "@@ -1,3 +1,3 @@", " a", "", "-b", "+B");
    expect(applyUnifiedDiff("a\n\nb\n", d)).toEqual({ ok: true, value: "a\n\nB\n" });
  });

  it.each([
    ["no headers", diff("@@ -1 +1 @@", "-a", "+b")],
    ["--- without +++", diff("--- a/f", "@@ -1 +1 @@")],
    ["counts disagree", diff("--- a/f", "+++ b/f", "@@ -1,2 +1,2 @@", "-a", "+b")],
    ["two files", diff("--- a/f", "+++ b/f", "@@ -1 +1 @@", "-a", "+b", "--- a/g", "+++ b/g")],
    ["junk between hunks", diff("--- a/f", "+++ b/f", "@@ -1 +1 @@", "-a", "+b", "junk")],
  ])("refuses a malformed diff (%s) with patch/malformed", (_why, d) => {
    const r = parseUnifiedDiff(d);
    expect(r.ok ? undefined : r.errors[0]?.code).toBe("patch/malformed");
  });

  it("reads git's extended headers", () => {
    const r = parseUnifiedDiff(
      diff("diff --git a/x b/x", "old mode 100644", "new mode 100755", "--- a/x", "+++ b/x"),
    );
    expect(r.ok && r.value.headers).toMatchObject({ oldMode: "100644", newMode: "100755" });
  });

  it("replacing every line round-trips any text (property)", () => {
    const line = fc.string({
      unit: fc.constantFrom("a", "b", " ", "-", "+", "\\", "é"),
      maxLength: 6,
    });
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 8 }),
        fc.array(line, { minLength: 1, maxLength: 8 }),
        (a, b) => {
          const before = `${a.join("\n")}\n`;
          const after = `${b.join("\n")}\n`;
          const d = diff(
            "--- a/f",
            "+++ b/f",
            `@@ -1,${a.length} +1,${b.length} @@`,
            ...a.map((l) => `-${l}`),
            ...b.map((l) => `+${l}`),
          );
          expect(applyUnifiedDiff(before, d)).toEqual({ ok: true, value: after });
        },
      ),
    );
  });
});
