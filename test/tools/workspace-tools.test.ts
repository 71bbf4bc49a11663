// Workspace observation tools on a real folder: reads, listings, search, and every refused path.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createWorkspaceTools,
  WORKSPACE_TOOL_SPECS,
} from "../../src/adapters/tools/workspace-tools.js";
import type { ToolHost } from "../../src/core/ports/tool-host.js";
import { createToolRegistry } from "../../src/core/turn/tool-registry.js";

let base: string;
let root: string;
let tools: ToolHost;

beforeAll(() => {
  base = mkdtempSync(path.join(tmpdir(), "warrant-ws-"));
  root = path.join(base, "ws");
  mkdirSync(path.join(root, "src", "deep"), { recursive: true });
  writeFileSync(path.join(root, "README.md"), "hello\nworld\n");
  writeFileSync(
    path.join(root, "src", "slugify.js"),
    "export function slugify(s) {\n  return s; // TODO\n}\n",
  );
  writeFileSync(path.join(root, "src", "deep", "notes.txt"), "a TODO here\nnothing\nTODO again\n");
  writeFileSync(path.join(root, "big.txt"), "y".repeat(5000));
  writeFileSync(path.join(root, "bin.dat"), Buffer.from([0, 84, 79, 68, 79]));
  writeFileSync(path.join(base, "secret.txt"), "TODO outside\n");
  mkdirSync(path.join(base, "outside-dir"));
  writeFileSync(path.join(base, "outside-dir", "x.txt"), "TODO outside dir\n");
  symlinkSync(path.join(base, "secret.txt"), path.join(root, "escape.txt"));
  symlinkSync(path.join(base, "outside-dir"), path.join(root, "escape-dir"));
  symlinkSync(path.join(root, "README.md"), path.join(root, "inside-link.md"));
  tools = createWorkspaceTools({ root, maxReadBytes: 1000, maxMatches: 2 });
});

describe("workspace tools", () => {
  it("declares three observation tools whose schemas register", () => {
    expect(WORKSPACE_TOOL_SPECS.map((s) => [s.name, s.effect])).toEqual([
      ["workspace.read_file", "observation"],
      ["workspace.list_dir", "observation"],
      ["workspace.search_text", "observation"],
    ]);
    expect(createToolRegistry(tools.specs()).ok).toBe(true);
  });

  it("reads a file", async () => {
    expect(await tools.call("workspace.read_file", { path: "README.md" })).toEqual({
      ok: true,
      isError: false,
      content: "hello\nworld\n",
    });
    expect(
      (await tools.call("workspace.read_file", { path: "./src/slugify.js" })).content,
    ).toContain("slugify");
  });

  it("follows a symbolic link that stays inside", async () => {
    expect((await tools.call("workspace.read_file", { path: "inside-link.md" })).content).toBe(
      "hello\nworld\n",
    );
  });

  it("cuts a long file and says so", async () => {
    const r = await tools.call("workspace.read_file", { path: "big.txt" });
    expect(r.ok).toBe(true);
    expect(r.content.startsWith("y".repeat(1000))).toBe(true);
    expect(r.content).not.toContain("y".repeat(1001));
    expect(r.content).toContain("[truncated: big.txt is 5000 bytes; the first 1000 are shown]");
  });

  it("lists a folder, sorted, folders with a slash and links with @", async () => {
    expect((await tools.call("workspace.list_dir", { path: "." })).content.split("\n")).toEqual([
      "README.md",
      "big.txt",
      "bin.dat",
      "escape-dir@",
      "escape.txt@",
      "inside-link.md@",
      "src/",
    ]);
    expect((await tools.call("workspace.list_dir", { path: "src" })).content).toBe(
      "deep/\nslugify.js",
    );
  });

  it("bounds a listing", async () => {
    const small = createWorkspaceTools({ root, maxEntries: 2 });
    const lines = (await small.call("workspace.list_dir", { path: "." })).content.split("\n");
    expect(lines).toEqual([
      "README.md",
      "big.txt",
      "[truncated: 7 entries; the first 2 are shown]",
    ]);
  });

  it("searches literal text, never through links, and bounds the matches", async () => {
    const all = createWorkspaceTools({ root });
    expect(
      (await all.call("workspace.search_text", { pattern: "TODO" })).content.split("\n"),
    ).toEqual([
      "src/deep/notes.txt:1: a TODO here",
      "src/deep/notes.txt:3: TODO again",
      "src/slugify.js:2:   return s; // TODO",
    ]);
    expect(
      (await all.call("workspace.search_text", { pattern: "TODO", path: "src/deep" })).content,
    ).toBe("src/deep/notes.txt:1: a TODO here\nsrc/deep/notes.txt:3: TODO again");
    expect((await all.call("workspace.search_text", { pattern: "(s)" })).content).toContain(
      "slugify(s)",
    );
    expect((await all.call("workspace.search_text", { pattern: "absent text" })).content).toBe(
      'no line contains "absent text"',
    );
    const cut = (await tools.call("workspace.search_text", { pattern: "TODO" })).content.split(
      "\n",
    );
    expect(cut).toHaveLength(3);
    expect(cut[2]).toMatch(/^\[truncated: stopped after 2 matches/);
  });

  it.each([
    ["workspace.read_file", { path: "/etc/passwd" }],
    ["workspace.read_file", { path: "../secret.txt" }],
    ["workspace.read_file", { path: "src/../../secret.txt" }],
    ["workspace.read_file", { path: "src/.." }],
    ["workspace.read_file", { path: "escape.txt" }],
    ["workspace.read_file", { path: "escape-dir/x.txt" }],
    ["workspace.list_dir", { path: "escape-dir" }],
    ["workspace.list_dir", { path: "/" }],
    ["workspace.list_dir", { path: ".." }],
    ["workspace.search_text", { pattern: "TODO", path: "escape-dir" }],
    ["workspace.search_text", { pattern: "TODO", path: "../outside-dir" }],
  ])("refuses %s %j with tool/path-outside-workspace", async (name, args) => {
    const r = await tools.call(name, args);
    expect(r).toMatchObject({ ok: false, isError: true, code: "tool/path-outside-workspace" });
    expect(r.content).not.toContain("TODO outside");
    expect(r.content).not.toContain(base);
  });

  it("answers other failures with their codes", async () => {
    expect((await tools.call("workspace.read_file", { path: "missing.txt" })).code).toBe(
      "tool/not-found",
    );
    expect((await tools.call("workspace.read_file", { path: "src" })).code).toBe("tool/not-a-file");
    expect((await tools.call("workspace.list_dir", { path: "README.md" })).code).toBe(
      "tool/not-a-directory",
    );
    expect((await tools.call("workspace.read_file", {})).code).toBe("tool/arguments-invalid");
    expect((await tools.call("workspace.search_text", { pattern: "" })).code).toBe(
      "tool/arguments-invalid",
    );
    expect((await tools.call("workspace.write_file", { path: "a" })).code).toBe("tool/unknown");
    const ac = new AbortController();
    ac.abort();
    expect(
      (await tools.call("workspace.read_file", { path: "README.md" }, { signal: ac.signal })).code,
    ).toBe("tool/aborted");
  });

  it("skips binary files in a search", async () => {
    expect(
      (await tools.call("workspace.search_text", { pattern: "TODO", path: "bin.dat" })).content,
    ).toBe('no line contains "TODO"');
  });
});
