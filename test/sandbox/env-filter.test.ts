// The environment a contained command gets (scrubbedEnv): fixed PATH, HOME, LANG and TMPDIR, plus
// the profile's variables less any whose name the credential rule matches, HOME, and names that
// are not shell names. Each alternative of the credential rule and each part of the name rule is
// tried alone, on a name every other check passes.
import { describe, expect, it } from "vitest";
import { SANDBOX_PATH, scrubbedEnv } from "../../src/adapters/sandbox/contained-exec.js";
import { CREDENTIAL_NAME } from "../../src/core/taskpack/ignore.js";

const FIXED = { PATH: SANDBOX_PATH, HOME: "/work", LANG: "C.UTF-8", TMPDIR: "/tmp" };

describe("scrubbedEnv", () => {
  it("without extra variables: PATH, HOME (the workspace), LANG and TMPDIR only", () => {
    expect(scrubbedEnv("/work", undefined)).toEqual(FIXED);
    expect(scrubbedEnv("/work", {})).toEqual(FIXED);
  });

  it("passes plain shell names, upper, lower, with digits and underscores", () => {
    const extra = { CI: "true", lower: "1", _lead: "2", Mixed_9: "3", Z: "4", a0: "5" };
    expect(scrubbedEnv("/work", extra)).toEqual({ ...extra, ...FIXED });
  });

  it("drops every name the credential rule matches, one alternative at a time, in any case", () => {
    for (const word of [
      "KEY",
      "TOKEN",
      "SECRET",
      "PASSW",
      "CREDENTIAL",
      "AUTH",
      "COOKIE",
      "SESSION",
    ]) {
      for (const name of [`MY_${word}_X`, `my_${word.toLowerCase()}`, word]) {
        expect(CREDENTIAL_NAME.test(name), name).toBe(true);
        expect(scrubbedEnv("/work", { [name]: "s", KEEP: "k" }), name).toEqual({
          KEEP: "k",
          ...FIXED,
        });
      }
    }
    // Names near the words but holding none of them pass; a word inside a longer word counts.
    for (const name of ["KE", "TOKE", "SECRE", "PASS", "CREDENTIA", "AUT", "COOKI", "SESSIO"])
      expect(CREDENTIAL_NAME.test(name), name).toBe(false);
    expect(CREDENTIAL_NAME.test("MONKEY_BARS")).toBe(true);
    expect(scrubbedEnv("/work", { PASS: "1" })).toEqual({ PASS: "1", ...FIXED });
  });

  it("drops a name that is not a shell name, wherever the bad character is", () => {
    for (const name of ["A-B", "-A", "A-", "1A", "9", "", "A B", "A=B", "Ä", "A.B", "A\nB"])
      expect(scrubbedEnv("/work", { [name]: "x" }), JSON.stringify(name)).toEqual(FIXED);
  });

  it("HOME is always the workspace; LANG and TMPDIR are fixed; PATH may be given", () => {
    expect(
      scrubbedEnv("/work", { HOME: "/root", LANG: "fr_FR", TMPDIR: "/var/tmp", PATH: "/opt/bin" }),
    ).toEqual({ ...FIXED, PATH: "/opt/bin" });
  });
});
