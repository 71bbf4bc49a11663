// Definitions at run time through the built CLI: the fix-config example (a skill, read-only and
// writable memory, a fallback behind an unreachable local server, a checker sub-agent) runs to
// success and passes `loop check`; its memory carries over to the next loop; an edited skill
// refuses the run before any loop opens; the demo runs on its definitions' scripted models and a
// `--model` override is recorded; `definition show` tells how a definition runs.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import type { LedgerStore } from "../../src/core/ports/ledger-store.js";
import type { MemoryWriteBody } from "../../src/core/records/memory-write.js";
import type { BindingBody, PassageEndBody } from "../../src/runtime/records.js";
import { repoRoot, runCli } from "../helpers/cli.js";

const FIX_CONFIG = path.join(repoRoot, "examples/fix-config/task-pack.json");
const DEMO = path.join(repoRoot, "examples/fix-failing-test/task-pack.json");
const FIXER = path.join(repoRoot, "examples/agents/config-fixer.json");

let cwd: string;
const db = () => `sqlite:${path.join(cwd, "ledger.db")}`;
const queryOf = (stdout: string) =>
  (stdout.trim().split("\n").at(-1) ?? "").replace(/^query: /, "");

async function withStore<T>(f: (store: LedgerStore) => Promise<T>): Promise<T> {
  const store = await openStore(db());
  try {
    return await f(store);
  } finally {
    await store.close();
  }
}

const bodies = async (query: string, kind: string) =>
  withStore(async (s) =>
    (await s.listRecords(query)).filter((r) => r.kind === kind).map((r) => r.body),
  );

beforeAll(() => {
  cwd = mkdtempSync(path.join(tmpdir(), "warrant-defs-e2e-"));
});
afterAll(() => {
  rmSync(cwd, { recursive: true, force: true });
});

describe("the fix-config example", () => {
  let first = "";

  it("runs to success on its definitions: the fallback answers, the checker is a nested charged passage", async () => {
    const r = await runCli(["run", FIX_CONFIG, "--yes", "--store", db()], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("loop stopped: succeeded");
    expect(r.stdout).toContain("(sub-agent checker)");
    first = queryOf(r.stdout);
    const check = await runCli(["loop", "check", "--store", db(), first], { cwd });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    const ends = (await bodies(first, "passageEnd")) as PassageEndBody[];
    const nested = ends.find((e) => e["parent/ref"] !== undefined);
    expect(nested).toMatchObject({ role: "implementer", message: { type: "Finding" } });
    expect(nested?.["agent/id"]).toMatch(/^agent:baga6yaq6[a-z2-7]+#\/subAgents\/0$/);
    const transcripts = (await bodies(first, "transcript")) as Record<string, unknown>[];
    const parent = ends.find((e) => e.role === "implementer" && e["parent/ref"] === undefined);
    expect(nested?.["parent/ref"]).toBe(parent?.["passage/ref"]);
    const fixer = transcripts.find((t) => t["passage/ref"] === parent?.["passage/ref"]);
    expect(JSON.stringify(fixer?.middleware)).toContain('"on":"model/unreachable"');
    expect(fixer?.skills).toEqual([
      { name: "config-style", cid: expect.stringMatching(/^bagaachra/) },
    ]);
  });

  it("keeps what the fixer wrote in the store: the next loop's write follows it", async () => {
    const r = await runCli(["run", FIX_CONFIG, "--yes", "--store", db()], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const [before] = (await bodies(first, "memoryWrite")) as MemoryWriteBody[];
    const [after] = (await bodies(queryOf(r.stdout), "memoryWrite")) as MemoryWriteBody[];
    expect(before).toMatchObject({ version: 1, "before/digest": null });
    expect(after).toMatchObject({ version: 2, "before/digest": before?.["after/digest"] });
  });

  it("an edited skill refuses the run before any loop opens, naming the skill", async () => {
    const copy = path.join(cwd, "copy");
    cpSync(path.join(repoRoot, "examples"), copy, { recursive: true });
    writeFileSync(path.join(copy, "agents/skills/config-style/SKILL.md"), "edited\n");
    const store = `sqlite:${path.join(cwd, "edited.db")}`;
    const r = await runCli(
      ["run", path.join(copy, "fix-config/task-pack.json"), "--yes", "--store", store],
      {
        cwd,
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("definition/skill-cid-mismatch");
    expect(r.stderr).toContain("skill config-style");
    // Refused before any loop opens: the store is not even created.
    const loops = await runCli(["loops", "--json", "--store", store], { cwd });
    expect(loops.stderr).toContain("store/not-found");
  });
});

describe("models from the definition, overrides recorded", () => {
  it("the demo's roles run on the scripted models their definitions name; --model is recorded as an override", async () => {
    const reviewer = path.join(repoRoot, "examples/fix-failing-test/scripted/reviewer.jsonl");
    const r = await runCli(
      ["run", DEMO, "--yes", "--store", db(), "--model", `reviewer=scripted:${reviewer}`],
      { cwd },
    );
    expect(r.code, r.stderr).toBe(0);
    const query = queryOf(r.stdout);
    const [binding] = (await bodies(query, "binding")) as BindingBody[];
    expect(binding?.["model/override"]).toEqual({ reviewer: `scripted:${reviewer}` });
    expect(binding?.models.implementer).toBe(
      `scripted:${path.join(repoRoot, "examples/fix-failing-test/scripted/implementer.jsonl")}`,
    );
    const ends = (await bodies(query, "passageEnd")) as PassageEndBody[];
    for (const e of ends)
      expect(e["model/override"]).toBe(e.role === "reviewer" ? `scripted:${reviewer}` : undefined);
  });
});

describe("warrant definition show", () => {
  it("shows models, settings as sent, verified skills and memory, middleware and sub-agents", async () => {
    const r = await runCli(["definition", "show", FIXER], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^config-fixer {2}agent:baga6yaq6/);
    expect(r.stdout).toContain("model 0: openai-compatible local-coder");
    expect(r.stdout).toContain('sends {"temperature":0.2}');
    expect(r.stdout).toContain("skill config-style: bagaachra");
    expect(r.stdout).toMatch(
      /memory memory\/config-conventions\.md: read-only bagaachra\S+ verified/,
    );
    expect(r.stdout).toContain("memory lessons.md: writable, shared");
    expect(r.stdout).toContain("middleware model-fallback");
    expect(r.stdout).toContain("sub-agent agent.checker:");
    const j = await runCli(["definition", "show", FIXER, "--json"], { cwd });
    const shown = JSON.parse(j.stdout) as { id: string; agent: { subAgents: { id: string }[] } };
    expect(shown.agent.subAgents[0]?.id).toBe(`${shown.id}#/subAgents/0`);
  });

  it("exits 1 and names the part when a skill does not verify; an invalid definition is refused as by validate", async () => {
    const copy = path.join(cwd, "show-copy");
    cpSync(path.join(repoRoot, "examples/agents"), copy, { recursive: true });
    writeFileSync(path.join(copy, "skills/config-style/reference.md"), "edited\n");
    const r = await runCli(["definition", "show", path.join(copy, "config-fixer.json")], { cwd });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "skill config-style: bagaachra5mlzz5acox6dhmngab3hhwuge6rkka3igyjw7zlbyq3atcorzxfq NOT VERIFIED",
    );
    expect(r.stdout).toContain("/skills/0/cid: definition/skill-cid-mismatch");
    const bad = path.join(cwd, "bad.json");
    writeFileSync(bad, "{");
    expect((await runCli(["definition", "show", bad], { cwd })).code).toBe(1);
  });
});
