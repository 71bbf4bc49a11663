// The pack's `ignore` globs (with their default) and command profiles' `env` (no credentials).
import { describe, expect, it } from "vitest";
import { DEFAULT_IGNORE, isIgnored, withoutIgnored } from "../../src/core/taskpack/ignore.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { packDoc } from "./fixtures.js";

function codes(doc: unknown): string[] {
  const r = validateTaskPack(doc);
  return r.ok ? [] : r.errors.map((e) => e.code);
}

describe("ignore", () => {
  it("defaults to byte-code and tool caches, at any depth", () => {
    const r = validateTaskPack(packDoc());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.ignore.map((g) => g.source)).toEqual(DEFAULT_IGNORE);
    for (const p of [
      "__pycache__/m.cpython-312.pyc",
      "pkg/__pycache__/m.cpython-312.pyc",
      "pkg/m.pyc",
      ".pytest_cache/v/cache/nodeids",
      "node_modules/.cache/x",
      "a/node_modules/.cache/y/z",
    ])
      expect(isIgnored(r.value.ignore, p)).toBe(true);
    for (const p of ["src/m.py", "pycache.py", "node_modules/x/index.js", "pyc"])
      expect(isIgnored(r.value.ignore, p)).toBe(false);
  });

  it("a pack's own list replaces the default; an empty list ignores nothing", () => {
    const doc = packDoc();
    doc.ignore = ["build/**"];
    const r = validateTaskPack(doc);
    expect(r.ok && r.value.ignore.map((g) => g.source)).toEqual(["build/**"]);
    doc.ignore = [];
    const none = validateTaskPack(doc);
    expect(none.ok && none.value.ignore).toEqual([]);
  });

  it("refuses a malformed glob and a list that is not of strings", () => {
    const doc = packDoc();
    doc.ignore = ["a//b"];
    expect(codes(doc)).toEqual(["taskpack/glob-invalid"]);
    doc.ignore = [3];
    expect(codes(doc)).toContain("taskpack/schema");
  });

  it("takes ignored paths out of a diff", () => {
    const r = validateTaskPack(packDoc());
    if (!r.ok) throw new Error("pack");
    expect(
      withoutIgnored(
        { added: ["__pycache__/a.pyc", "src/new.py"], removed: ["x.pyc"], changed: ["src/a.py"] },
        r.value.ignore,
      ),
    ).toEqual({ added: ["src/new.py"], removed: [], changed: ["src/a.py"] });
  });
});

describe("command profile env", () => {
  it("is mapped onto the profile", () => {
    const doc = packDoc();
    doc.commands["run-tests"].env = { PYTHONDONTWRITEBYTECODE: "1", CI: "true" };
    const r = validateTaskPack(doc);
    expect(r.ok && r.value.commands.get("run-tests")?.env).toEqual({
      PYTHONDONTWRITEBYTECODE: "1",
      CI: "true",
    });
    const plain = validateTaskPack(packDoc());
    expect(plain.ok && plain.value.commands.get("run-tests")?.env).toBeUndefined();
  });

  it("refuses a name the credential rule matches, HOME, a bad name and a value that is not text", () => {
    for (const key of [
      "API_KEY",
      "GITHUB_TOKEN",
      "db_password",
      "AWS_SECRET",
      "SESSION_ID",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "auth_header",
      "COOKIE_JAR",
    ]) {
      const doc = packDoc();
      doc.commands["run-tests"].env = { [key]: "x" };
      const r = validateTaskPack(doc);
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.errors[0]).toMatchObject({
        code: "taskpack/env-secret",
        path: `/commands/run-tests/env/${key}`,
      });
      // The refusal names the variable; its value never reaches the message.
      expect(r.errors[0]?.message).toContain(key);
      expect(r.errors[0]?.message).not.toContain('"x"');
    }
    // A name near every word of the rule, holding none of them, is set.
    const near = packDoc();
    near.commands["run-tests"].env = { PASS_COUNT: "1", AUTO: "1", COOK: "1", KEYS_: "1" };
    expect(codes(near)).toEqual(["taskpack/env-secret"]);
    near.commands["run-tests"].env = { PASS_COUNT: "1", AUTO: "1", COOK: "1" };
    expect(codes(near)).toEqual([]);
    const home = packDoc();
    home.commands["run-tests"].env = { HOME: "/root" };
    const reserved = validateTaskPack(home);
    expect(reserved.ok ? [] : reserved.errors).toEqual([
      expect.objectContaining({
        code: "taskpack/env-reserved",
        path: "/commands/run-tests/env/HOME",
        message: expect.stringContaining("HOME"),
      }),
    ]);
    const badName = packDoc();
    badName.commands["run-tests"].env = { "A-B": "1" };
    expect(codes(badName)).toContain("taskpack/schema");
    const notText = packDoc();
    notText.commands["run-tests"].env = { A: 1 };
    expect(codes(notText)).toContain("taskpack/schema");
  });
});
