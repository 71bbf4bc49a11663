// The approval card is enough to decide, and a stopped loop says how it ended (Debian's chromium,
// headless, driven by playwright-core). `warrant serve --operators` gives bob a token; a `warrant
// run` of a pack whose every mutation waits for approval plans first a diff with git's own headers
// that does not apply, then the fix. The first card shows that diff once (no header twice), the
// task, no earlier evidence, the checks to come, the budget and the deadline; alice approves it from
// a terminal (`--operator alice`). The second card shows what the implementer saw (the failed
// check's stderr); bob approves it in the console. On the stopped loop's page: no renew, cancel or
// answer; the summarizer's Result; who approved each step; the execution's checks by name; the
// changeset as a diff.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRun } from "../e2e/cli-run.js";
import { startServe, stopServes } from "../e2e/serve-process.js";
import { runCli } from "../helpers/cli.js";
import { STDERR, writeFailingPack, writeFailingScripts } from "../helpers/failing-pack.js";

const CHROMIUM = "/usr/bin/chromium";
// In CI the browser must be there (.ci/run installs it): these tests fail rather than skip.
const haveBrowser = existsSync(CHROMIUM) || process.env.CI === "true";

let browser: Browser | undefined;
const dirs: string[] = [];
beforeAll(async () => {
  if (!haveBrowser) return;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox"],
  });
});
afterAll(async () => {
  await browser?.close();
  stopServes();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const approvalOf = (step: string) => new RegExp(`warrant approve (\\S+) ${step} \\| warrant deny`);
const count = (text: string, line: string) =>
  text.split("\n").filter((l) => l === line || l.startsWith(`${line} `)).length;

describe.skipIf(!haveBrowser)("the approval card and a stopped loop in the console", () => {
  it("shows the task, the evidence, the checks to come, the budget and deadline; a stopped loop its Result and approvers, and no act controls", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-browser-card-"));
    dirs.push(cwd);
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    const pack = writeFailingPack(cwd, { hil: "each-mutation" });
    const models = writeFailingScripts(cwd, { gitHeaders: true });
    const file = path.join(cwd, "operators.json");
    writeFileSync(file, JSON.stringify({ bob: null }));
    const { url } = await startServe(["--store", store, "--operators", file], cwd);
    const bob = (JSON.parse(readFileSync(file, "utf8")) as { bob: string }).bob;

    const run = startRun([pack, ...models, "--store", store], cwd);
    const [, query] = await run.waitFor(/opened (query:\S+)/);
    const [, proposal] = await run.waitFor(approvalOf("stale-diff"));

    const page: Page = await (browser as Browser).newPage({
      viewport: { width: 1280, height: 900 },
    });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.goto(`${url.replace(/\/$/, "")}/#token=${bob}`);
    await expect
      .poll(() => page.locator('[data-testid="operator"]').textContent())
      .toBe("acting as bob");

    // The first card: the plan's diff with its git headers, each once.
    const first = page.locator(
      `[data-testid="pending-approval"][data-run="${proposal}"][data-step="stale-diff"]`,
    );
    await first.waitFor({ timeout: 20_000 });
    const diff = first.locator("pre.diff");
    await expect.poll(() => diff.count(), { timeout: 10_000 }).toBe(1);
    const diffText = (await diff.textContent()) ?? "";
    expect(count(diffText, "diff --git")).toBe(1);
    expect(count(diffText, "--- a/src/a.txt")).toBe(1);
    expect(count(diffText, "+++ b/src/a.txt")).toBe(1);
    const task = first.locator('[data-testid="approval-task"]');
    await expect
      .poll(() => task.textContent(), { timeout: 10_000 })
      .toBe("Task: Make src/a.txt say fixed.");
    expect(await first.locator('[data-testid="approval-evidence"]').textContent()).toContain(
      "no earlier run",
    );
    expect(await first.locator('[data-testid="approval-checks"]').textContent()).toBe(
      "Checks after approval: tests-pass — command run-tests exits 0",
    );
    const deadline = (
      JSON.parse((await runCli(["export", query as string, "--store", store], { cwd })).stdout) as {
        deadline: string;
      }
    ).deadline;
    const budget = (await first.locator('[data-testid="approval-budget"]').textContent()) ?? "";
    expect(budget).toContain("experiments 2 of 3");
    expect(budget).toContain("cycles 3 of 4");
    expect(budget).toContain(`(${deadline})`);
    expect(budget).toMatch(/deadline \d+m \d{2}s/);

    // alice approves it from a terminal; the diff does not apply and the run fails its check.
    const alice = await runCli(
      ["approve", proposal as string, "stale-diff", "--operator", "alice", "--store", store],
      { cwd },
    );
    expect(alice.code, alice.stderr).toBe(0);

    // The second card: what the implementer saw is the failed check's stderr.
    const [, second] = await run.waitFor(approvalOf("fix"));
    const card = page.locator(`[data-testid="pending-approval"][data-run="${second}"]`);
    await card.waitFor({ timeout: 20_000 });
    const evidence = card.locator('[data-testid="approval-evidence"]');
    await expect.poll(() => evidence.textContent(), { timeout: 10_000 }).toContain(STDERR);
    expect(await evidence.textContent()).toContain(
      `failed check tests-pass of run ${(proposal as string).slice(-12)}`,
    );
    expect(await card.locator('[data-testid="approval-budget"]').textContent()).toContain(
      "experiments 1 of 3",
    );
    // bob approves it here: the run succeeds and the loop stops.
    await card.locator('[data-testid="approve"]').click();
    // The act's answer stays on the card, which is no longer pending once the loop moves on.
    const answered = page.locator(`[data-run="${second}"] [data-testid="act-result"]`);
    await expect.poll(() => answered.textContent(), { timeout: 10_000 }).toContain("approved fix");
    const done = await run.done;
    expect(done.stdout).toContain("loop stopped: succeeded");

    // The stopped loop's page.
    await page.evaluate((q) => {
      (globalThis as unknown as { location: { hash: string } }).location.hash =
        `#/loop/${encodeURIComponent(q)}`;
    }, query as string);
    const result = page.locator('[data-testid="loop-result"]');
    await expect.poll(() => result.textContent(), { timeout: 20_000 }).toBe("verified: done");
    for (const control of ["loop-controls", "renew", "cancel", "answer", "answer-text"])
      expect(await page.locator(`[data-testid="${control}"]`).count(), control).toBe(0);
    const decisions = page.locator('[data-testid="decision"]');
    await expect.poll(() => decisions.count()).toBe(2);
    expect(await decisions.nth(0).textContent()).toMatch(/^approve stale-diff by alice at /);
    expect(await decisions.nth(1).textContent()).toMatch(/^approve fix by bob at /);

    // The verified run's execution: each check by name, who approved its step.
    const execution = page.locator('[data-testid="record"][data-kind="execution"]').last();
    await execution.locator("summary").click();
    const check = execution.locator('[data-testid="check"][data-check="tests-pass"]');
    await expect.poll(() => check.count(), { timeout: 10_000 }).toBe(1);
    expect(await check.textContent()).toMatch(/^tests-pass/);
    expect(await execution.locator('[data-testid="execution-act"]').textContent()).toMatch(
      /^approve fix by bob at /,
    );
    // The first run's execution: its failed check by name, with the stderr under it.
    const failed = page.locator('[data-testid="record"][data-kind="execution"]').first();
    await failed.locator("summary").click();
    await expect
      .poll(() => failed.locator('.check.failed[data-check="tests-pass"]').count())
      .toBe(1);
    expect(await failed.locator('[data-testid="check-detail"]').textContent()).toBe(
      STDERR.split("\n").slice(1).join("\n"),
    );

    // The changeset: a diff, not JSON with base64 contents.
    const changeset = page.locator('[data-testid="record"][data-kind="changeset"]').last();
    await changeset.locator("summary").click();
    const changed = changeset.locator('[data-testid="changeset-diff"] pre.diff');
    await expect.poll(() => changed.count(), { timeout: 10_000 }).toBe(1);
    const changedText = (await changed.textContent()) ?? "";
    expect(changedText.split("\n")).toEqual(
      expect.arrayContaining([
        "diff --git a/src/a.txt b/src/a.txt",
        "--- a/src/a.txt",
        "+++ b/src/a.txt",
        "-broken",
        "+fixed",
      ]),
    );
    expect(count(changedText, "--- a/src/a.txt")).toBe(1);
    expect(await changeset.textContent()).not.toContain("after/content");
    expect(await changeset.textContent()).not.toContain(Buffer.from("fixed\n").toString("base64"));

    // The same records in `warrant record`: the execution names its checks and its approver, the
    // changeset is a diff.
    const shown = JSON.parse(
      (await runCli(["show", query as string, "--json", "--store", store], { cwd })).stdout,
    ) as { records: { ref: string; kind: string }[] };
    const refOf = (kind: string) => shown.records.findLast((x) => x.kind === kind)?.ref as string;
    const rec = await runCli(["record", refOf("execution"), "--store", store], { cwd });
    expect(rec.stdout).toMatch(/^ {4}- tests-pass: passed/m);
    expect(rec.stdout).toMatch(/approve fix of \S+ by node-operator-binding:bob at /);
    const cs = await runCli(["record", refOf("changeset"), "--store", store], { cwd });
    expect(cs.stdout).toContain("  diff:\n    diff --git a/src/a.txt b/src/a.txt\n");
    expect(cs.stdout).toContain("\n    -broken\n    +fixed");

    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);
});
