import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadTaskPack } from "../../src/adapters/fs/task-pack-files.js";
import { packDoc } from "./fixtures.js";

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "warrant-pack-"));
  mkdirSync(path.join(dir, "workspace/src"), { recursive: true });
  mkdirSync(path.join(dir, "agents"));
  for (const role of ["implementer", "reviewer", "summarizer"]) {
    writeFileSync(path.join(dir, `agents/${role}.json`), "{}");
  }
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

function writePack(doc: unknown, name = "pack.json"): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof doc === "string" ? doc : JSON.stringify(doc));
  return file;
}

describe("loadTaskPack", () => {
  it("resolves the workspace and agent files against the pack file's folder", async () => {
    const r = await loadTaskPack(writePack(packDoc()));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.workspaceDir).toBe(path.join(dir, "workspace"));
    expect(r.value.agentFiles.implementer).toBe(path.join(dir, "agents/implementer.json"));
    expect(r.value.agentFiles.summarizer).toBe(path.join(dir, "agents/summarizer.json"));
    expect(r.value.pack.name).toBe("fix-failing-test");
    expect(r.value.bytes.length).toBeGreaterThan(0);
  });

  it("refuses a missing workspace folder", async () => {
    const doc = packDoc();
    doc.workspace = "nowhere";
    const r = await loadTaskPack(writePack(doc));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["taskpack/workspace-missing", "/workspace"],
    ]);
  });

  it("refuses a missing agent file", async () => {
    const doc = packDoc();
    doc.agents.reviewer = "agents/missing.json";
    const r = await loadTaskPack(writePack(doc));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["taskpack/agent-missing", "/agents/reviewer"],
    ]);
  });

  it("refuses malformed JSON, an unreadable file and schema errors", async () => {
    const bad = await loadTaskPack(writePack("{ nope"));
    expect(bad.ok ? "" : bad.errors[0]?.code).toBe("taskpack/json");
    const gone = await loadTaskPack(path.join(dir, "absent.json"));
    expect(gone.ok ? "" : gone.errors[0]?.code).toBe("taskpack/read");
    const doc = packDoc();
    doc.hil = "never";
    const invalid = await loadTaskPack(writePack(doc));
    expect(invalid.ok ? "" : invalid.errors[0]?.code).toBe("taskpack/schema");
  });
});
