// A pack's `dependencies` and `toolchains`: each rule on their paths refused with its code at its
// pointer — pure (validateTaskPack) and against the file system (loadTaskPack) — and what they
// give: a dependency's writes are ignored everywhere `ignore` is read.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadTaskPack } from "../../src/adapters/fs/task-pack-files.js";
import { toolchainForbiddenWhy } from "../../src/core/taskpack/dependencies.js";
import { isIgnored } from "../../src/core/taskpack/ignore.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { packDoc } from "./fixtures.js";

const codes = (doc: Record<string, unknown>) => {
  const r = validateTaskPack(doc);
  return r.ok ? [] : r.errors.map((e) => [e.code, e.path]);
};

describe("validateTaskPack: dependencies and toolchains", () => {
  it("accepts folders of the workspace and toolchain folders; a dependency's files are ignored", () => {
    const r = validateTaskPack({
      ...packDoc(),
      dependencies: ["node_modules", ".venv/", "packages/a/vendor"],
      toolchains: ["/opt/jdk-21", "/home/dev/.pyenv/versions/3.12.1", "/root/.nvm"],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.dependencies).toEqual(["node_modules", ".venv", "packages/a/vendor"]);
    expect(r.value.toolchains).toEqual([
      "/opt/jdk-21",
      "/home/dev/.pyenv/versions/3.12.1",
      "/root/.nvm",
    ]);
    for (const p of ["node_modules/x/index.js", ".venv/lib/site.py", "packages/a/vendor/m.go"])
      expect(isIgnored(r.value.ignore, p)).toBe(true);
    for (const p of ["node_modules_x/a", "src/node_modules.js", "packages/a/vendorx"])
      expect(isIgnored(r.value.ignore, p)).toBe(false);
    // The default ignore list still applies beside them.
    expect(isIgnored(r.value.ignore, "src/__pycache__/m.pyc")).toBe(true);
  });

  it("without them: none, and nothing more ignored", () => {
    const r = validateTaskPack(packDoc());
    expect(r.ok && [r.value.dependencies, r.value.toolchains]).toEqual([[], []]);
    expect(r.ok && isIgnored(r.value.ignore, "node_modules/x.js")).toBe(false);
  });

  it("refuses a dependency outside the workspace, inside .git, or overlapping another", () => {
    expect(
      codes({
        ...packDoc(),
        dependencies: [
          "/usr/lib/node_modules",
          "../vendor/node_modules",
          "a/../../b",
          ".git/modules",
          "a\\b",
          ".",
          "node_modules",
          "node_modules",
          "node_modules/.bin",
        ],
      }),
    ).toEqual([
      ["taskpack/dependency-outside", "/dependencies/0"],
      ["taskpack/dependency-outside", "/dependencies/1"],
      ["taskpack/dependency-outside", "/dependencies/2"],
      ["taskpack/dependency-invalid", "/dependencies/3"],
      ["taskpack/dependency-invalid", "/dependencies/4"],
      ["taskpack/dependency-invalid", "/dependencies/5"],
      ["taskpack/dependency-overlap", "/dependencies/7"],
      ["taskpack/dependency-overlap", "/dependencies/8"],
    ]);
  });

  it("refuses / , top-level system folders, a home folder, kernel file systems, relative and unnormalised paths", () => {
    const r = validateTaskPack({
      ...packDoc(),
      toolchains: ["/", "/usr", "/opt"],
    });
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["taskpack/toolchain-forbidden", "/toolchains/0"],
      ["taskpack/toolchain-forbidden", "/toolchains/1"],
      ["taskpack/toolchain-forbidden", "/toolchains/2"],
    ]);
    expect(r.ok ? "" : r.errors[1]?.message).toContain("/usr is a top-level system folder");
    expect(
      codes({ ...packDoc(), toolchains: ["/home/dev", "/root", "/proc/1/root", "/sys/x"] }),
    ).toEqual([
      ["taskpack/toolchain-forbidden", "/toolchains/0"],
      ["taskpack/toolchain-forbidden", "/toolchains/1"],
      ["taskpack/toolchain-forbidden", "/toolchains/2"],
      ["taskpack/toolchain-forbidden", "/toolchains/3"],
    ]);
    expect(
      codes({
        ...packDoc(),
        toolchains: ["/opt/jdk/../..", "/opt/jdk/", "/opt//jdk", "/opt/jdk"],
      }),
    ).toEqual([
      ["taskpack/toolchain-path", "/toolchains/0"],
      ["taskpack/toolchain-path", "/toolchains/1"],
      ["taskpack/toolchain-path", "/toolchains/2"],
    ]);
    // Relative, and more than four, are the schema's.
    expect(codes({ ...packDoc(), toolchains: ["opt/jdk"] })).toEqual([
      ["taskpack/schema", "/toolchains/0"],
    ]);
    expect(
      codes({ ...packDoc(), toolchains: ["/opt/a", "/opt/b", "/opt/c", "/opt/d", "/opt/e"] }),
    ).toEqual([["taskpack/schema", "/toolchains"]]);
    expect(codes({ ...packDoc(), toolchains: ["/opt/jdk", "/opt/jdk"] })).toEqual([
      ["taskpack/toolchain-overlap", "/toolchains/1"],
    ]);
  });
});

describe("loadTaskPack: dependencies and toolchains on this host", () => {
  let dir: string;
  const file = () => path.join(dir, "pack.json");
  const write = (doc: Record<string, unknown>) => writeFileSync(file(), JSON.stringify(doc));
  const loadCodes = async () => {
    const r = await loadTaskPack(file());
    return r.ok ? [] : r.errors.map((e) => [e.code, e.path]);
  };

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "warrant-pack-deps-"));
    mkdirSync(path.join(dir, "workspace/node_modules/dep"), { recursive: true });
    mkdirSync(path.join(dir, "agents"));
    mkdirSync(path.join(dir, "tools/mytool/bin"), { recursive: true });
    for (const role of ["implementer", "reviewer", "summarizer"])
      writeFileSync(path.join(dir, `agents/${role}.json`), "{}");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("loads a pack whose dependency and toolchain are there", async () => {
    write({ ...packDoc(), dependencies: ["node_modules"], toolchains: [`${dir}/tools/mytool`] });
    expect(await loadCodes()).toEqual([]);
  });

  it("refuses a dependency that is not there, a file, a link, or a link leading outside", async () => {
    writeFileSync(path.join(dir, "workspace/notes.txt"), "x");
    mkdirSync(path.join(dir, "elsewhere"));
    symlinkSync("node_modules", path.join(dir, "workspace/linked"));
    symlinkSync("../elsewhere", path.join(dir, "workspace/outside"));
    mkdirSync(path.join(dir, "workspace/pkgs"));
    symlinkSync("../node_modules", path.join(dir, "workspace/pkgs/through"));
    write({
      ...packDoc(),
      dependencies: [".venv", "notes.txt", "linked", "outside", "pkgs/through/dep"],
    });
    expect(await loadCodes()).toEqual([
      ["taskpack/dependency-missing", "/dependencies/0"],
      ["taskpack/dependency-not-folder", "/dependencies/1"],
      ["taskpack/dependency-not-folder", "/dependencies/2"],
      ["taskpack/dependency-outside", "/dependencies/3"],
      ["taskpack/dependency-not-folder", "/dependencies/4"],
    ]);
    const r = await loadTaskPack(file());
    expect(r.ok ? "" : r.errors[0]?.message).toContain(
      "the dependency .venv is not in the workspace",
    );
  });

  it("refuses a toolchain that is not a folder, holds the workspace, is the home folder, or links to a forbidden one", async () => {
    writeFileSync(path.join(dir, "tools/file"), "x");
    symlinkSync("/usr", path.join(dir, "tools/usr-link"));
    write({
      ...packDoc(),
      toolchains: [`${dir}/tools/absent`, `${dir}/tools/file`, dir, `${dir}/tools/usr-link`],
    });
    expect(await loadCodes()).toEqual([
      ["taskpack/toolchain-missing", "/toolchains/0"],
      ["taskpack/toolchain-missing", "/toolchains/1"],
      ["taskpack/toolchain-forbidden", "/toolchains/2"],
      ["taskpack/toolchain-forbidden", "/toolchains/3"],
    ]);
    const r = await loadTaskPack(file());
    expect(r.ok ? "" : r.errors[2]?.message).toContain("it holds the pack's workspace");
    // The temp folder (where environments and pins are made) is never bound into one.
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = path.join(dir, "tools/tmp-root");
    mkdirSync(process.env.TMPDIR);
    try {
      write({ ...packDoc(), toolchains: [`${dir}/tools`] });
      expect(await loadCodes()).toEqual([["taskpack/toolchain-forbidden", "/toolchains/0"]]);
      const t = await loadTaskPack(file());
      expect(t.ok ? "" : t.errors[0]?.message).toContain("where environments are made");
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    // The host's home folder is refused by its real path, wherever it is.
    write({ ...packDoc(), toolchains: [homedir()] });
    expect(await loadCodes()).toEqual([["taskpack/toolchain-forbidden", "/toolchains/0"]]);
    expect(toolchainForbiddenWhy("/srv/users/dev", "/srv/users/dev")).toBe(
      "/srv/users/dev is the home folder",
    );
    expect(toolchainForbiddenWhy("/srv/users/dev/.pyenv", "/srv/users/dev")).toBeUndefined();
  });
});
