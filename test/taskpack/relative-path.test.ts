import { describe, expect, it } from "vitest";
import { normaliseRelativePath } from "../../src/core/taskpack/relative-path.js";

describe("normaliseRelativePath", () => {
  it.each([
    ["src/a.ts", "src/a.ts"],
    ["./src/a.ts", "src/a.ts"],
    ["src//a.ts", "src/a.ts"],
    ["src/./a.ts", "src/a.ts"],
    ["a..b/c", "a..b/c"],
    [".gitignore", ".gitignore"],
    // A drive letter only at the start makes a path absolute; a colon further in is a name.
    ["notes/a:b.txt", "notes/a:b.txt"],
    ["ab:c", "ab:c"],
  ])("normalises %j to %j", (raw, want) => {
    expect(normaliseRelativePath(raw)).toEqual({ ok: true, value: want });
  });

  it.each([
    ["", "empty"],
    [".", "empty"],
    ["a\0b", "nul"],
    ["src\\a.ts", "backslash"],
    ["/etc/passwd", "absolute"],
    ["C:/x", "absolute"],
    ["src/", "directory"],
    ["../x", "dot-dot"],
    ["src/../../x", "dot-dot"],
    ["src/..", "dot-dot"],
    [".git/config", "git"],
    ["sub/.GIT/hooks/pre-commit", "git"],
  ])("refuses %j (%s)", (raw, reason) => {
    const r = normaliseRelativePath(raw);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ code: "path/refused", path: "", detail: { reason } });
    // Every refusal says why in words; a path that is not empty is named in it.
    expect(r.errors[0]?.message.length).toBeGreaterThan(0);
    if (raw !== "" && !raw.includes("\0") && !raw.includes("\\")) {
      expect(r.errors[0]?.message).toContain(raw);
    }
  });
});
