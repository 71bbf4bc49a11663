// The operator from another terminal: a `warrant run` without --yes waits for each mutation's
// approval, polling the store; `warrant approve`, `deny` and `cancel` in another process decide.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot, runCli } from "../helpers/cli.js";
import { ensureStore } from "../helpers/store.js";
import { demoPack, scripted, startRun } from "./cli-run.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-operator-"));
  dirs.push(d);
  return d;
}
const models = ["implementer", "reviewer", "summarizer"].flatMap((r) => ["--model", scripted(r)]);
const APPROVAL = /warrant approve (\S+) (\S+) \| warrant deny/;

describe("operator acts from another terminal", () => {
  it("approve RUN STEP lets a waiting run go on to success", async () => {
    const cwd = tempDir();
    const run = startRun([demoPack, ...models], cwd);
    const [, proposal, step] = await run.waitFor(APPROVAL);
    expect(step).toBe("fix-slugify");
    const approved = await runCli(["approve", proposal as string, step as string], { cwd });
    expect(approved.code).toBe(0);
    const r = await run.done;
    expect(r.stdout).toContain("loop stopped: succeeded");
    expect(r.code).toBe(0);
  });

  it("deny RUN STEP concludes the run refused hil/denied and the loop goes on", async () => {
    const cwd = tempDir();
    const run = startRun([demoPack, ...models], cwd);
    const [, proposal, step] = await run.waitFor(APPROVAL);
    expect((await runCli(["deny", proposal as string, step as string], { cwd })).code).toBe(0);
    const r = await run.done;
    expect(r.stdout).toContain("concluded refused (hil/denied)");
    // The loop goes on; the scripted implementer has no answer left, so it waits on its model.
    expect(r.stdout).toMatch(/loop blocked: model/);
    // Blocked, waiting on its model: exit 3, not 0.
    expect(r.code).toBe(3);
    const query = (r.stdout.trim().split("\n").at(-1) ?? "").slice("query: ".length);
    const doc = JSON.parse((await runCli(["export", query], { cwd })).stdout) as { state: string };
    expect(doc.state).toBe("open");
  });

  it("approve takes a unique prefix (8 characters) of the run's digest and lets the run finish", async () => {
    const cwd = tempDir();
    const run = startRun([demoPack, ...models], cwd);
    const [, proposal, step] = await run.waitFor(APPROVAL);
    const digest = (proposal as string).slice("corpus-experiment:sha256:".length);
    // After `--`: a base64url digest may start with '-', which would read as an option.
    const short = await runCli(["approve", "--", digest.slice(0, 7), step as string], { cwd });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("hil/ref-too-short");
    const approved = await runCli(["approve", "--json", "--", digest.slice(0, 8), step as string], {
      cwd,
    });
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ ok: true, result: "posted" });
    expect(JSON.parse(approved.stdout).message).toContain(proposal);
    const r = await run.done;
    expect(r.stdout).toContain("loop stopped: succeeded");
    expect(r.code).toBe(0);
  });

  it("a digest prefix that starts with '-' is said to go after `--`, and is taken there", async () => {
    const cwd = tempDir();
    const asOption = await runCli(["approve", "-mAvdJ4x", "build", "--store", "memory:"], { cwd });
    expect(asOption.code).toBe(2);
    expect(asOption.stderr).toContain("unknown option '-mAvdJ4x'");
    expect(asOption.stderr).toContain("-mAvdJ4x may be a run's digest prefix");
    expect(asOption.stderr).toContain("warrant approve [options] -- -mAvdJ4x STEP");
    // A digest may start with two: the same.
    const twoDashes = await runCli(["deny", "--Q0vdJ4x", "build", "--store", "memory:"], { cwd });
    expect(twoDashes.code).toBe(2);
    expect(twoDashes.stderr).toContain("warrant deny [options] -- --Q0vdJ4x STEP");
    // A real option is not taken for a digest.
    const wrong = await runCli(["approve", "--nope", "abcdefgh", "build"], { cwd });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).not.toContain("digest prefix");
    // After `--` it is the run's reference: too short at 7 characters.
    const taken = await runCli(["approve", "--store", "memory:", "--", "-mAvdJ4", "build"], {
      cwd,
    });
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain("hil/ref-too-short");
  });

  it("deny --reason is recorded with the act and shown by show --records and record", async () => {
    const cwd = tempDir();
    const run = startRun([demoPack, ...models], cwd);
    const [, proposal, step] = await run.waitFor(APPROVAL);
    const prefix = `corpus-experiment:sha256:${(proposal as string).slice(25, 35)}`;
    const denied = await runCli(
      ["deny", prefix, step as string, "--reason", "rewrite the whole file instead"],
      { cwd },
    );
    expect(denied.code, denied.stderr).toBe(0);
    expect(denied.stdout).toContain("rewrite the whole file instead");
    const r = await run.done;
    expect(r.stdout).toContain("concluded refused (hil/denied)");
    const query = (r.stdout.trim().split("\n").at(-1) ?? "").slice("query: ".length);
    const shown = await runCli(["show", query, "--records", "--json"], { cwd });
    const { acts } = JSON.parse(shown.stdout) as { acts: { kind: string; text?: string }[] };
    expect(acts).toEqual([
      expect.objectContaining({ kind: "deny", text: "rewrite the whole file instead" }),
    ]);
    const plain = await runCli(["show", query, "--records"], { cwd });
    expect(plain.stdout).toContain(`deny ${step} of ${proposal} by node-operator-binding:`);
    expect(plain.stdout).toMatch(/deny fix-slugify of .*: rewrite the whole file instead/);
    const execution = JSON.parse(
      (await runCli(["show", query, "--json"], { cwd })).stdout,
    ).records.findLast((x: { kind: string }) => x.kind === "execution").ref as string;
    const rec = await runCli(["record", execution], { cwd });
    expect(rec.stdout).toContain("outcome: refused (hil/denied)");
    expect(rec.stdout).toMatch(
      /operator acts:\n\s+- deny fix-slugify of .*: rewrite the whole file instead/,
    );
  });

  it("approve of an unknown run or step is refused", async () => {
    const cwd = tempDir();
    const unknown = `corpus-experiment:sha256:${"A".repeat(43)}`;
    await ensureStore(undefined, cwd);
    const r = await runCli(["approve", unknown, "fix-slugify"], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("loop/run-missing");
  });

  it("cancel QUERY while a run waits stops the run, records its conclusion and stops the loop", async () => {
    const cwd = tempDir();
    const run = startRun([demoPack, ...models], cwd);
    const [, query] = await run.waitFor(/opened (query:\S+)/);
    await run.waitFor(APPROVAL);
    const cancelled = await runCli(["cancel", query as string], { cwd });
    expect(cancelled.code).toBe(0);
    const r = await run.done;
    expect(r.stdout).toContain("concluded cancelled");
    expect(r.stdout).toContain("loop stopped: cancelled");
    // Stopped without success: exit 1.
    expect(r.code).toBe(1);
    const again = await runCli(["cancel", query as string], { cwd });
    expect(again.stdout).toContain("nothing appended");
  });

  it("renew needs exactly one of --deadline and --extend (usage error otherwise)", async () => {
    const r = await runCli(["renew", "query:x"], { cwd: tempDir() });
    expect(r.code).toBe(2);
  });

  it("answer, renew and resume: a loop blocked on a question goes on once answered (--json)", async () => {
    const cwd = tempDir();
    const implementer = path.join(repoRoot, "test/fixtures/runtime/question-implementer.jsonl");
    const args = [
      demoPack,
      "--model",
      `implementer=scripted:${implementer}`,
      "--model",
      scripted("reviewer"),
      "--model",
      scripted("summarizer"),
      "--yes",
      "--json",
    ];
    const first = await runCli(["run", ...args], { cwd });
    // Blocked on the operator's question: exit 3.
    expect(first.code, first.stderr).toBe(3);
    const blocked = JSON.parse(first.stdout) as {
      query: string;
      status: string;
      blocked: { reason: string };
    };
    expect(blocked.status).toBe("blocked");
    expect(blocked.blocked.reason).toBe("operator-question");
    const q = blocked.query;
    const answered = await runCli(["answer", q, "No: fix src/ only.", "--json"], { cwd });
    expect(JSON.parse(answered.stdout)).toMatchObject({ ok: true, result: "posted" });
    const again = await runCli(["answer", q, "twice", "--json"], { cwd });
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({
      ok: false,
      code: "hil/already-answered",
      answer: { kind: "answer", text: "No: fix src/ only." },
    });
    const tooFar = await runCli(["renew", q, "--extend", "700000", "--json"], { cwd });
    expect(JSON.parse(tooFar.stdout)).toMatchObject({ ok: false, code: "loop/renewal-invalid" });
    const renewed = await runCli(["renew", q, "--extend", "599900", "--json"], { cwd });
    expect(JSON.parse(renewed.stdout)).toMatchObject({ ok: true, result: "appended" });
    const resumed = await runCli(["resume", q, "--yes", "--json"], { cwd });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      query: q,
      status: "stopped",
      stop: { reason: "succeeded" },
    });
    const doc = JSON.parse((await runCli(["export", q], { cwd })).stdout) as {
      facts: { step: { kind: string } }[];
    };
    expect(doc.facts.map((f) => f.step.kind)).toContain("renewed");
  });
});
