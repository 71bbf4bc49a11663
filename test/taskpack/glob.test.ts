import { describe, expect, it } from "vitest";
import { compileGlob, globSyntaxError, matchesAny } from "../../src/core/taskpack/glob.js";

function glob(source: string) {
  const g = compileGlob(source);
  if (!g.ok) throw new Error(source);
  return g.value;
}

describe("glob matcher", () => {
  it("* matches within one segment only", () => {
    expect(glob("src/*.ts").matches("src/a.ts")).toBe(true);
    expect(glob("src/*.ts").matches("src/x/a.ts")).toBe(false);
    expect(glob("*").matches("a")).toBe(true);
    expect(glob("*").matches("a/b")).toBe(false);
    expect(glob("src/*").matches("src/.hidden")).toBe(true);
  });

  it("? matches exactly one character, never /", () => {
    expect(glob("a?c").matches("abc")).toBe(true);
    expect(glob("a?c").matches("ac")).toBe(false);
    expect(glob("a?c").matches("abbc")).toBe(false);
    expect(glob("a?b").matches("a/b")).toBe(false);
  });

  it("a trailing ** matches one or more segments, not the folder itself", () => {
    const g = glob("src/**");
    expect(g.matches("src/a.ts")).toBe(true);
    expect(g.matches("src/x/y/z.ts")).toBe(true);
    expect(g.matches("src")).toBe(false);
    expect(g.matches("srcx/a.ts")).toBe(false);
    expect(g.matches("lib/src/a.ts")).toBe(false);
  });

  it("a leading or inner ** matches zero or more segments", () => {
    expect(glob("**/*.md").matches("README.md")).toBe(true);
    expect(glob("**/*.md").matches("docs/a/b.md")).toBe(true);
    expect(glob("a/**/b").matches("a/b")).toBe(true);
    expect(glob("a/**/b").matches("a/x/y/b")).toBe(true);
    expect(glob("a/**/b").matches("a/x/y/c")).toBe(false);
  });

  it("? and * take a character outside the Basic Multilingual Plane as one", () => {
    expect(glob("a?c").matches("a\u{1f600}c")).toBe(true);
    expect(glob("a??c").matches("a\u{1f600}c")).toBe(false);
    expect(glob("*.md").matches("\u{1f600}.md")).toBe(true);
  });

  it("regular-expression characters are literal", () => {
    expect(glob("a.b+(c)").matches("a.b+(c)")).toBe(true);
    expect(glob("a.b").matches("axb")).toBe(false);
    expect(glob("$x^").matches("$x^")).toBe(true);
  });

  it("matchesAny tries every glob", () => {
    const gs = [glob("src/**"), glob("package.json")];
    expect(matchesAny(gs, "package.json")).toBe(true);
    expect(matchesAny(gs, "test/a.js")).toBe(false);
  });

  it.each([
    ["", "empty", "not empty"],
    ["/abs/**", "absolute", "relative"],
    ["/", "absolute", "relative"],
    ["src//a", "empty segment", "empty segment"],
    ["src/", "trailing slash", "empty segment"],
    ["../x", "dot-dot", ". or .."],
    ["./x", "dot", ". or .."],
    ["src/a**", "partial globstar", "whole segment"],
    ["src/[ab].ts", "class", "brackets"],
    ["src/{a,b}.ts", "braces", "braces"],
    ["src\\a", "backslash", "backslash"],
    ["a\0b", "nul", "NUL"],
  ])("refuses %j (%s) with taskpack/glob-invalid, saying why", (source, _what, why) => {
    expect(globSyntaxError(source)).toContain(why);
    const r = compileGlob(source);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]).toMatchObject({ code: "taskpack/glob-invalid", path: "" });
      expect(r.errors[0]?.message).toContain(why);
    }
  });

  it("a well-formed glob has no syntax error", () => {
    for (const g of ["**", "a/**/b", "*.ts", "a?b", ".hidden/x", "a..b"])
      expect(globSyntaxError(g)).toBeUndefined();
  });
});
