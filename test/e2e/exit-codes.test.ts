// Exit codes a script can trust, through the built CLI: `run`, `resume` and `demo` exit 0 only when
// the loop stopped `succeeded`, 1 when it stopped otherwise, 3 when it is blocked or waiting; a
// budget-blocked loop's hint says that renew cannot lift it and cancel closes it. And the small
// things: `run DIR` takes a folder holding task-pack.json, a `memory:` store prints no `show` hint
// that cannot work, and `renew --extend` counts from now.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot, runCli } from "../helpers/cli.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-exit-"));
  dirs.push(d);
  return d;
}

const fixtures = path.join(repoRoot, "test/fixtures/runtime");
const tightPack = path.join(fixtures, "tight-budget.task-pack.json");
const observe = JSON.parse(readFileSync(path.join(fixtures, "plans.json"), "utf8")).observe;
const turn = (type: string, payload: unknown) =>
  JSON.stringify({
    kind: "message",
    summary: type,
    tool_calls: [],
    message: { type, payload_json: JSON.stringify(payload), paper_ref: null },
  });
const reject = turn("Verdict", {
  decision: "reject",
  findings: [{ severity: "high", claim: "only observes", evidence: [] }],
});

/** Scripts that spend the tight pack's 3 passages on two rejected plans: blocked on max/passages. */
function budgetScripts(cwd: string): string[] {
  const implementer = path.join(cwd, "implementer.jsonl");
  const reviewer = path.join(cwd, "reviewer.jsonl");
  writeFileSync(implementer, `${turn("Plan", observe)}\n${turn("Plan", observe)}\n`);
  writeFileSync(reviewer, `${reject}\n${reject}\n`);
  return [
    "--model",
    `implementer=scripted:${implementer}`,
    "--model",
    `reviewer=scripted:${reviewer}`,
  ];
}

const queryOf = (stdout: string) =>
  (stdout.trim().split("\n").at(-1) ?? "").replace(/^query: /, "");

describe("exit codes of run, resume and demo", () => {
  it("a budget-blocked run exits 3; its hint says renew cannot lift a spent counter and cancel closes it; resume exits 3 again, and 1 once cancelled", async () => {
    const cwd = tempDir();
    const r = await runCli(["run", tightPack, "--yes", ...budgetScripts(cwd)], { cwd });
    expect(r.stdout).toMatch(/loop blocked: budget \(max\/passages\)/);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(
      /nothing lifts a spent budget \(max\/passages\): renew moves only the deadline/,
    );
    expect(r.stdout).toContain(`close the loop with: warrant cancel ${queryOf(r.stdout)}`);
    expect(r.stdout).not.toContain("warrant renew");
    const query = queryOf(r.stdout);

    const again = await runCli(["resume", query, "--json"], { cwd });
    expect(again.code, again.stderr).toBe(3);
    expect(JSON.parse(again.stdout)).toMatchObject({
      status: "blocked",
      blocked: { reason: "budget", counter: "max/passages" },
    });

    // renew --extend MS: the new deadline is MS from now (not from the current deadline).
    const before = Date.now();
    const renewed = await runCli(["renew", query, "--extend", "599990", "--json"], { cwd });
    const after = Date.now();
    expect(JSON.parse(renewed.stdout)).toMatchObject({ ok: true, result: "appended" });
    const doc = JSON.parse((await runCli(["export", query], { cwd })).stdout) as {
      deadline: string;
    };
    expect(Date.parse(doc.deadline)).toBeGreaterThanOrEqual(before + 599990 - 1);
    expect(Date.parse(doc.deadline)).toBeLessThanOrEqual(after + 599990);
    // A renewal does not lift the budget: still blocked, still 3.
    expect((await runCli(["resume", query], { cwd })).code).toBe(3);

    expect((await runCli(["cancel", query], { cwd })).code).toBe(0);
    const stopped = await runCli(["resume", query], { cwd });
    expect(stopped.stdout).toContain("is stopped: cancelled");
    expect(stopped.code).toBe(1);
    const stoppedJson = await runCli(["resume", query, "--json"], { cwd });
    expect(stoppedJson.code).toBe(1);
    expect(JSON.parse(stoppedJson.stdout)).toMatchObject({
      status: "stopped",
      stop: { reason: "cancelled" },
    });
  });

  it("--json: a budget-blocked run exits 3 as well", async () => {
    const cwd = tempDir();
    const r = await runCli(["run", tightPack, "--yes", "--json", ...budgetScripts(cwd)], { cwd });
    expect(r.code, r.stderr).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: "blocked",
      blocked: { reason: "budget" },
    });
  });

  it("help of run, resume and demo states the exit codes; renew --extend says from now", async () => {
    for (const cmd of ["run", "resume", "demo"]) {
      const h = await runCli([cmd, "--help"]);
      expect(h.code).toBe(0);
      expect(h.stdout).toContain("0 the loop stopped succeeded");
      expect(h.stdout).toMatch(/3 the loop is blocked or\s+waiting/);
    }
    expect((await runCli(["renew", "--help"])).stdout).toMatch(/MS from now/);
  });

  it("the demo on a memory: store succeeds (0) and prints no show or export hint that could not work", async () => {
    const cwd = tempDir();
    const r = await runCli(["demo", "--store", "memory:"], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("loop stopped: succeeded");
    expect(r.stdout).not.toMatch(/warrant show|warrant export/);
    expect(r.stdout).toContain("ledger: memory: (kept in this process only");
  });
});

describe("warrant run DIR", () => {
  it("takes a folder holding task-pack.json", async () => {
    const r = await runCli(["run", "examples/fix-failing-test", "--check", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      taskpack: path.join(repoRoot, "examples/fix-failing-test/task-pack.json"),
      ok: true,
    });
  });

  it("a folder without task-pack.json is a usage error (2), nothing on stdout", async () => {
    const cwd = tempDir();
    mkdirSync(path.join(cwd, "empty"));
    for (const args of [
      ["run", "empty"],
      ["run", "empty", "--check"],
    ]) {
      const r = await runCli(args, { cwd });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("a folder without task-pack.json");
      expect(r.stdout).toBe("");
    }
  });
});
