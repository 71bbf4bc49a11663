// ignore.ts on its own: the default ignore list, the ignore test on a diff, and the credential-name
// rule that keeps secrets out of a command profile's env (each alternative of it).
import { describe, expect, it } from "vitest";
import { compileGlob } from "../../src/core/taskpack/glob.js";
import {
  CREDENTIAL_NAME,
  DEFAULT_IGNORE,
  defaultIgnore,
  isIgnored,
  withoutIgnored,
} from "../../src/core/taskpack/ignore.js";

describe("defaultIgnore", () => {
  it("compiles exactly the default globs, in order", () => {
    expect(defaultIgnore().map((g) => g.source)).toEqual([
      "**/__pycache__/**",
      "**/*.pyc",
      "**/.pytest_cache/**",
      "**/node_modules/.cache/**",
    ]);
    expect(DEFAULT_IGNORE).toHaveLength(4);
  });

  it("ignores each kind of cache, at the top and deeper, and nothing else", () => {
    const d = defaultIgnore();
    for (const p of [
      "__pycache__/m.pyc",
      "a/b/__pycache__/x",
      "m.pyc",
      "a/m.pyc",
      ".pytest_cache/v",
      "a/.pytest_cache/v/x",
      "node_modules/.cache/x",
      "a/node_modules/.cache/b/c",
    ])
      expect(isIgnored(d, p)).toBe(true);
    for (const p of ["__pycache__", "m.py", "m.pyc.txt", "node_modules/x", ".cache/x", "src/a.ts"])
      expect(isIgnored(d, p)).toBe(false);
  });
});

describe("isIgnored and withoutIgnored", () => {
  const globs = ["build/**", "*.log"].map((s) => {
    const c = compileGlob(s);
    if (!c.ok) throw new Error(s);
    return c.value;
  });

  it("a path is ignored when any glob matches it", () => {
    expect(isIgnored(globs, "build/a.o")).toBe(true);
    expect(isIgnored(globs, "x.log")).toBe(true);
    expect(isIgnored(globs, "src/x.log")).toBe(false);
    expect(isIgnored([], "build/a.o")).toBe(false);
  });

  it("keeps each list's paths that are not ignored, in order, and only those", () => {
    expect(
      withoutIgnored(
        {
          added: ["build/a.o", "a.ts", "x.log", "b.ts"],
          removed: ["c.ts", "build/b.o"],
          changed: ["y.log", "d.ts"],
        },
        globs,
      ),
    ).toEqual({ added: ["a.ts", "b.ts"], removed: ["c.ts"], changed: ["d.ts"] });
  });
});

describe("CREDENTIAL_NAME", () => {
  it.each([
    "API_KEY",
    "KEYFILE",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "MY_SECRET",
    "PASSWORD",
    "DB_PASSWD",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CREDENTIAL",
    "AUTH",
    "OAUTH_X",
    "COOKIE_JAR",
    "SESSION_ID",
  ])("matches %s, and in lower case", (name) => {
    expect(CREDENTIAL_NAME.test(name)).toBe(true);
    expect(CREDENTIAL_NAME.test(name.toLowerCase())).toBe(true);
    // Anywhere in the name, after other text.
    expect(CREDENTIAL_NAME.test(`X_${name}`)).toBe(true);
  });

  it.each(["HOME", "PATH", "LANG", "CI", "PYTHONDONTWRITEBYTECODE", "NODE_ENV", "PASS", "AUTO"])(
    "does not match %s",
    (name) => {
      expect(CREDENTIAL_NAME.test(name)).toBe(false);
    },
  );
});
