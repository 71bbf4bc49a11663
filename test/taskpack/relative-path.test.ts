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
    if (!r.ok) expect(r.errors[0]?.detail?.reason).toBe(reason);
  });
});
