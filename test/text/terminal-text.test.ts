// Hostile text made safe for a terminal, and git's path quoting (core.quotePath).
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  gitQuotePath,
  gitUnquotePath,
  terminalLine,
  terminalSafe,
} from "../../src/core/text/terminal-text.js";

describe("terminalSafe", () => {
  it("escapes ESC, so a title or erase sequence is shown, not obeyed", () => {
    const hostile = "ok\x1b]0;pwned\x07\x1b[2K\x1b[1A";
    const safe = terminalSafe(hostile);
    expect(safe).toBe("ok\\x1b]0;pwned\\x07\\x1b[2K\\x1b[1A");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may remain.
    expect(safe).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  });

  it("escapes CR, DEL, NUL and the C1 range at both ends", () => {
    expect(terminalSafe("a\rb")).toBe("a\\rb");
    expect(terminalSafe("\x7f\x00")).toBe("\\x7f\\x00");
    expect(terminalSafe("\u0080x\u009b")).toBe("\\x80x\\x9b");
  });

  it("leaves printable text, tabs, newlines and characters past C1 as they are", () => {
    const text = "line 1\n\tline 2 — ą 🙂 \u00a0end";
    expect(terminalSafe(text)).toBe(text);
  });

  it("escapes newlines too when the text must stay on one line", () => {
    expect(terminalLine("a\nb\rc")).toBe("a\\nb\\rc");
    expect(terminalSafe("a\nb", { newlines: false })).toBe("a\\nb");
  });

  it("is stable when called twice in a row on the same pattern (no lastIndex state)", () => {
    expect(terminalSafe("\x1b")).toBe("\\x1b");
    expect(terminalSafe("\x1b")).toBe("\\x1b");
    expect(terminalLine("\n")).toBe("\\n");
    expect(terminalLine("\n")).toBe("\\n");
  });
});

describe("gitQuotePath", () => {
  it("leaves a plain path unquoted", () => {
    expect(gitQuotePath("src/a b/c-d_e.txt")).toBe("src/a b/c-d_e.txt");
  });

  it("quotes a newline, so no header line can be forged", () => {
    const quoted = gitQuotePath("x\ndiff --git a/y b/y");
    expect(quoted).toBe('"x\\ndiff --git a/y b/y"');
    expect(quoted).not.toContain("\n");
  });

  it("quotes quotes, backslashes, controls and non-ASCII bytes as octal", () => {
    expect(gitQuotePath('a"b')).toBe('"a\\"b"');
    expect(gitQuotePath("a\\b")).toBe('"a\\\\b"');
    expect(gitQuotePath("a\tb\x1b")).toBe('"a\\tb\\033"');
    expect(gitQuotePath("ą")).toBe('"\\304\\205"');
    expect(gitQuotePath("\x7f")).toBe('"\\177"');
  });

  it("matches git's own quoting of the same names", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-quote-"));
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", dir, "-c", "core.quotePath=true", ...args], { encoding: "utf8" });
    git("init", "-q");
    const names = [
      "plain.txt",
      "new\nline.txt",
      'quo"te.txt',
      "back\\slash.txt",
      "tab\there",
      "zażółć.txt",
      "esc\x1b.txt",
    ];
    for (const n of names) writeFileSync(path.join(dir, n), "x\n");
    const listed = git("ls-files", "--others")
      .split("\n")
      .filter((l) => l !== "");
    expect(listed.sort()).toEqual(names.map(gitQuotePath).sort());
  });
});

describe("gitUnquotePath", () => {
  it("reads back every name gitQuotePath writes", () => {
    for (const n of [
      "plain.txt",
      "new\nline",
      'quo"te',
      "back\\slash",
      "tab\there",
      "zażółć",
      "\x07\x08\v\f\r\x1b\x7f",
    ]) {
      expect(gitUnquotePath(gitQuotePath(n))).toBe(n);
    }
  });

  it("takes an unquoted name as it is", () => {
    expect(gitUnquotePath("a/b c.txt")).toBe("a/b c.txt");
  });

  it("refuses a quoted name that is not well formed", () => {
    expect(gitUnquotePath('"')).toBeUndefined();
    expect(gitUnquotePath('"abc')).toBeUndefined();
    expect(gitUnquotePath('"a"b"')).toBeUndefined();
    expect(gitUnquotePath('"a\\q"')).toBeUndefined();
    expect(gitUnquotePath('"a\\"')).toBeUndefined();
    expect(gitUnquotePath('"\\400"')).toBeUndefined();
    expect(gitUnquotePath('"\\12"')).toBeUndefined();
    // Octal bytes that are not UTF-8.
    expect(gitUnquotePath('"\\377"')).toBeUndefined();
    expect(gitUnquotePath('"\\303"')).toBeUndefined();
  });
});
