// The console's Evals page in a real browser (Debian's chromium, headless, driven by playwright-core):
// `warrant serve` on a store and `warrant eval run` in another process; the eval appears on the
// Evals page without a reload, and its task × agent matrix fills in live as cells finish, each cell
// linking to its loops. The API refuses anything but an eval's id.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe, stopServes } from "../e2e/serve-process.js";
import { cliPath, repoRoot } from "../helpers/cli.js";

const CHROMIUM = "/usr/bin/chromium";
// In CI the browser must be there (.ci/run installs it): these tests fail rather than skip.
const haveBrowser = existsSync(CHROMIUM) || process.env.CI === "true";
const EXAMPLE = path.join(repoRoot, "examples/evals");

let browser: Browser;
const dir = mkdtempSync(path.join(tmpdir(), "warrant-browser-evals-"));
const pageErrors: string[] = [];

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
  rmSync(dir, { recursive: true, force: true });
});

const scripted = (agent: string) =>
  Object.fromEntries(
    ["implementer", "reviewer", "summarizer"].map((r) => [
      r,
      `scripted:${path.join(EXAMPLE, "scripts", agent, "{task}", `${r}.jsonl`)}`,
    ]),
  );

const count = (page: Page, task: string, agent: string) =>
  page
    .locator(
      `[data-testid="eval-cell"][data-task="${task}"][data-agent="${agent}"] [data-testid="eval-count"]`,
    )
    .textContent({ timeout: 1000 })
    .catch(() => "");

describe.skipIf(!haveBrowser)("the console's Evals page", () => {
  it("shows an eval as it runs and fills its matrix live", { timeout: 180_000 }, async () => {
    const store = `sqlite:${path.join(dir, "ledger.db")}`;
    const set = path.join(dir, "set.json");
    writeFileSync(
      set,
      JSON.stringify({
        schema: "warrant-eval-set.v1",
        name: "live",
        approval: "auto",
        epochs: 3,
        tasks: ["median", "fizzbuzz"].map((id) => ({
          id,
          pack: path.join(EXAMPLE, "tasks", id, "task-pack.json"),
        })),
        agents: [
          { id: "fixer", models: scripted("fixer") },
          { id: "wrong-fixer", models: scripted("wrong-fixer") },
        ],
      }),
    );
    const { url } = await startServe(["--store", store], dir);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(m.text());
    });
    await page.goto(url);
    await expect.poll(() => page.locator('[data-testid="live"]').textContent()).toBe("live");
    await page.click('[data-testid="nav-evals"]');
    await page.evaluate(() => {
      (globalThis as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    await expect
      .poll(() => page.locator('[data-testid="app"]').textContent())
      .toContain("No eval in this store yet.");

    const run = spawn(
      process.execPath,
      [cliPath, "eval", "run", set, "--store", store, "--concurrency", "1"],
      {
        cwd: dir,
        env: { ...process.env, NO_COLOR: "1" },
        stdio: "ignore",
      },
    );
    const done = new Promise<number | null>((r) => run.on("close", r));

    // The eval appears without a reload, while it is still running.
    const row = page.locator('[data-testid="eval-row"]');
    await row.waitFor({ timeout: 60_000 });
    const progress = await row.locator('[data-testid="eval-progress"]').textContent();
    expect(progress).toMatch(/^\d+\/12$/);
    await row.locator("a").click();
    await page.locator('[data-testid="eval-cell"]').first().waitFor();
    expect(await page.locator('[data-testid="eval-cell"]').count()).toBe(4);
    // The cell the eval runs last (cells go task by task, agent by agent, epoch by epoch): the one
    // least likely to be full before the page shows the matrix.
    const seen = new Set<string>();
    await expect
      .poll(
        async () => {
          const text = await count(page, "fizzbuzz", "wrong-fixer");
          seen.add(text ?? "");
          return text;
        },
        { timeout: 150_000, interval: 200 },
      )
      .toBe("0/3");
    expect(await done).toBe(0);
    await expect.poll(() => count(page, "fizzbuzz", "fixer"), { timeout: 10_000 }).toBe("3/3");
    await expect.poll(() => count(page, "median", "wrong-fixer"), { timeout: 10_000 }).toBe("0/3");
    await expect
      .poll(() =>
        page.locator('[data-testid="eval-head"] [data-testid="eval-status"]').textContent(),
      )
      .toBe("complete");
    // The cell filled in step by step while the page stayed: it was seen before it was full.
    expect([...seen].some((t) => /^0\/[0-2]$/.test(t))).toBe(true);
    expect(
      await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded),
    ).toBe(true);

    // Each epoch links to its loop's page.
    const epoch = page.locator(
      '[data-testid="eval-cell"][data-task="median"][data-agent="fixer"] [data-testid="eval-epoch"]',
    );
    expect(await epoch.count()).toBe(3);
    expect(await epoch.first().getAttribute("data-outcome")).toBe("passed");
    await epoch.first().click();
    await expect
      .poll(() => page.locator('[data-testid="loop-state"]').first().textContent())
      .toBe("succeeded");

    // The API reads evals by id only: a path is refused, an unknown id is 404.
    const tokenOf = new URL(url).hash.replace(/^#token=/, "");
    const api = (p: string) =>
      fetch(new URL(p, url), {
        headers: { authorization: `Bearer ${decodeURIComponent(tokenOf)}` },
      });
    expect((await api(`/api/evals/${encodeURIComponent(set)}`)).status).toBe(400);
    expect((await api("/api/evals/eval:nothing-AAAAAAAAAAAAAAAA")).status).toBe(404);
    expect(pageErrors).toEqual([]);
  });
});
