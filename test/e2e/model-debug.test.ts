// Mistakes in a scripted model, found as a user meets them: `run --check` reads every script line as
// the turn it will be and names FILE:LINE and the JSON Pointer (`model/script-invalid`); a run whose
// model runs out after a refused answer prints that answer's problem in the live view and in `show`,
// and the transcript says a repair was asked.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot, runCli } from "../helpers/cli.js";

const root = mkdtempSync(path.join(tmpdir(), "warrant-model-debug-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const VERDICT_PROBLEM =
  'turn/payload-invalid /message/payload_json: the Verdict payload: /decision: "approve" is not one of accept, reject, request-regeneration';

/** A copy of the examples, its `role` script's line `n` (1-based) edited by `edit`. */
function examples(role: string, n: number, edit: (line: string) => string): string {
  const dir = mkdtempSync(path.join(root, "examples-"));
  cpSync(path.join(repoRoot, "examples"), dir, { recursive: true });
  const script = path.join(dir, "fix-failing-test/scripted", `${role}.jsonl`);
  const lines = readFileSync(script, "utf8").split("\n");
  lines[n - 1] = edit(lines[n - 1] ?? "");
  writeFileSync(script, lines.join("\n"));
  return dir;
}

const approveInsteadOfAccept = (line: string) =>
  line.replace('\\"decision\\": \\"accept\\"', '\\"decision\\": \\"approve\\"');

describe("run --check reads every script line as a turn for its role", () => {
  it("refuses an invalid Verdict with model/script-invalid, FILE:LINE and the pointer", async () => {
    const dir = examples("reviewer", 3, approveInsteadOfAccept);
    const pack = path.join(dir, "fix-failing-test/task-pack.json");
    const r = await runCli(["run", pack, "--check"], { cwd: dir });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain("FAIL scripts");
    expect(r.stdout).toContain(
      `/message/payload_json: model/script-invalid: fix-failing-test/scripted/reviewer.jsonl:3: reviewer: ${VERDICT_PROBLEM}`,
    );
    const json = await runCli(["run", pack, "--check", "--json"], { cwd: dir });
    const report = JSON.parse(json.stdout) as { ok: boolean; problems: Record<string, unknown>[] };
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      expect.objectContaining({
        check: "scripts",
        code: "model/script-invalid",
        path: "/message/payload_json",
        usage: false,
        detail: expect.objectContaining({ line: 3, role: "reviewer" }),
      }),
    ]);
  });

  it("refuses a tool no passage offers, and a Plan the pack refuses", async () => {
    const dir = examples("implementer", 1, (l) =>
      l.replace('"name": "workspace.read_file"', '"name": "workspace.read_files"'),
    );
    const script = path.join(dir, "fix-failing-test/scripted/implementer.jsonl");
    const lines = readFileSync(script, "utf8").split("\n");
    lines[1] = (lines[1] ?? "").replace(
      '\\"profile\\": \\"run-tests\\"',
      '\\"profile\\": \\"run-test\\"',
    );
    writeFileSync(script, lines.join("\n"));
    const pack = path.join(dir, "fix-failing-test/task-pack.json");
    const r = await runCli(["run", pack, "--check"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "/tool_calls/0/name: model/script-invalid: fix-failing-test/scripted/implementer.jsonl:1: implementer: turn/unknown-tool /tool_calls/0/name: no tool named workspace.read_files is registered for this passage",
    );
    expect(r.stdout).toContain(
      'fix-failing-test/scripted/implementer.jsonl:2: implementer: plan/outside-profile /message/payload_json/steps/0/profile: the Plan: /steps/0/profile: step 0: no command profile named run-test (did you mean "run-tests"?)',
    );
  });

  it("passes the bundled examples' scripts", async () => {
    for (const pack of ["fix-failing-test", "fix-config"]) {
      const r = await runCli([
        "run",
        path.join(repoRoot, "examples", pack, "task-pack.json"),
        "--check",
      ]);
      expect(r.code, r.stdout).toBe(0);
      expect(r.stdout).toMatch(/ok {3}scripts/);
    }
  });
});

describe("a run whose model has no valid answer left", () => {
  it("prints the refused answer's problem live and in show; the transcript asked a repair", {
    timeout: 120_000,
  }, async () => {
    const dir = examples("reviewer", 3, approveInsteadOfAccept);
    const pack = path.join(dir, "fix-failing-test/task-pack.json");
    const run = await runCli(["run", pack, "--yes"], { cwd: dir, timeoutMs: 110_000 });
    expect(run.code, run.stdout + run.stderr).toBe(3);
    expect(run.stdout).toContain(
      `refused: model/script-exhausted: reviewer passage failed: the scripted model has no answer left (its script has 3 answers, 2 of them used by earlier passages); its last answer was refused: ${VERDICT_PROBLEM}`,
    );
    const query = /^query: (\S+)$/m.exec(run.stdout)?.[1] ?? "";
    const show = await runCli(["show", query], { cwd: dir });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(
      `waiting: model (reviewer: model/script-exhausted): the scripted model has no answer left`,
    );
    expect(show.stdout).toContain(VERDICT_PROBLEM);
    const records = await runCli(["show", query, "--records"], { cwd: dir });
    expect(records.stdout).toContain("→ repair asked");
    expect(records.stdout).not.toContain("no repair left");
  });
});
