// The console shows why a run failed (Debian's chromium, headless, driven by playwright-core): a
// loop run with `warrant run` whose first run had a stale diff and a check writing only to stderr;
// on its loop page, that run's report shows the patch's reason under the step and the stderr under
// the failed check.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

describe.skipIf(!haveBrowser)("the console says why a run failed", () => {
  it("shows a failed patch's reason under its step and a stderr-only check's output under the check", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-browser-reasons-"));
    dirs.push(cwd);
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    const run = await runCli(
      ["run", writeFailingPack(cwd), "--json", "--store", store, ...writeFailingScripts(cwd)],
      { cwd, timeoutMs: 120_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const { query } = JSON.parse(run.stdout) as { query: string };

    const { url } = await startServe(["--store", store], cwd);
    const page = await (browser as Browser).newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(url);
    await page.evaluate((q) => {
      (globalThis as unknown as { location: { hash: string } }).location.hash =
        `#/loop/${encodeURIComponent(q)}`;
    }, query);
    // The first run's report: the one whose check failed.
    const report = page.locator('[data-testid="record"][data-kind="runReport"]').first();
    await report.waitFor({ timeout: 20_000 });
    await report.locator("summary").click();
    const reason = report.locator('[data-testid="step-reason"]');
    await expect.poll(() => reason.count(), { timeout: 10_000 }).toBe(1);
    expect(await reason.textContent()).toMatch(/hunk 1 .*does not apply/);
    const detail = report.locator('[data-testid="check-detail"]');
    expect(await detail.textContent()).toBe(STDERR.split("\n").slice(1).join("\n"));
    expect(await report.locator(".check.failed").textContent()).toBe(
      `tests-pass — run-tests exited 1: ${STDERR.split("\n")[0]}`,
    );
    // The second run's report: passed, nothing to explain.
    const second = page.locator('[data-testid="record"][data-kind="runReport"]').nth(1);
    await second.locator("summary").click();
    await expect.poll(() => second.locator(".check.passed").count()).toBe(1);
    expect(await second.locator('[data-testid="step-reason"]').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);
});
