// The console in a real browser (Debian's chromium, headless, driven by playwright-core): `warrant
// serve` on a store, a `warrant run` without --yes (or `run --dispatch` and `warrant worker` on
// PostgreSQL) in other processes; the approval appears without a reload, Approve lets the run
// finish and the loop row turns `succeeded` live; Deny with a reason concludes `hil/denied`; the API
// refuses the page without the token; a page on another loopback port cannot frame the console;
// the event stream resumes from Last-Event-ID without loss; the loops list refreshes while a steady
// stream of facts keeps coming (PostgreSQL tells of each at once), not only once it stops.
// With WARRANT_SCREENSHOTS=1 the queue and a loop page are saved as docs/console-*.png.
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { openSqliteLedgerStore } from "../../src/adapters/store/sqlite-ledger-store.js";
import type { LoopCommand } from "../../src/core/loop/types.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { demoPack, scripted, startRun } from "../e2e/cli-run.js";
import { startServe, stopServes } from "../e2e/serve-process.js";
import { cliPath, repoRoot, runCli } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";

const CHROMIUM = "/usr/bin/chromium";
// In CI the browser must be there (.ci/run installs it): these tests fail rather than skip.
const haveBrowser = existsSync(CHROMIUM) || process.env.CI === "true";
const models = ["implementer", "reviewer", "summarizer"].flatMap((r) => ["--model", scripted(r)]);
const APPROVAL = /warrant approve (\S+) (\S+) \| warrant deny/;
const pg = await postgresForTests();
const schemas = new TestSchemas(pg.url, "console");

let browser: Browser;
const dirs: string[] = [];
const children: ChildProcess[] = [];

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
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  if (pg.enabled) await schemas.dropAll();
});

function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-browser-"));
  dirs.push(d);
  return d;
}

async function screenshot(page: Page, name: string): Promise<void> {
  const file = path.join(tempDir(), name);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.WARRANT_SCREENSHOTS === "1")
    copyFileSync(file, path.join(repoRoot, "docs", name));
}

/** Opens the console URL; marks the window so a reload would be noticed. */
async function open_(url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // The page breaks none of its own Content-Security-Policy and throws nothing.
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(m.text());
  });
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  await page.goto(url);
  await page.evaluate(() => {
    (globalThis as unknown as { notReloaded: boolean }).notReloaded = true;
  });
  return page;
}

const notReloaded = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded === true);

const pageErrors: string[] = [];
afterEach(() => {
  // Browsers log every refused fetch: a 401 (the test without the token) and a 409 (no diff
  // before a verified run) are answers the page shows; anything else (a missing asset) is not.
  const errors = pageErrors.splice(0).filter((e) => !/status of (401|409) /.test(e));
  expect(errors).toEqual([]);
});

/** `promise`, or a failure after `ms` that says what was awaited and what the page shows. */
async function within<T>(ms: number, promise: Promise<T>, what: () => Promise<string>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void what().then((w) => reject(new Error(`timed out after ${ms} ms waiting for ${w}`)));
    }, ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const row = (page: Page, query: string) =>
  page.locator(`[data-testid="loop-row"][data-query="${query}"]`);

describe.skipIf(!haveBrowser)("the console in a browser (SQLite)", () => {
  it("shows a waiting mutation with its diff; Approve lets the run finish and the row turns succeeded live", async () => {
    const cwd = tempDir();
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    const { url } = await startServe(["--store", store], cwd);
    const page = await open_(url);
    await expect.poll(() => page.locator('[data-testid="live"]').textContent()).toBe("live");

    const run = startRun([demoPack, ...models, "--store", store], cwd);
    const [, query] = await run.waitFor(/opened (query:\S+)/);
    const [, proposal, step] = await run.waitFor(APPROVAL);
    const card = page.locator(
      `[data-testid="pending-approval"][data-run="${proposal}"][data-step="${step}"]`,
    );
    await card.waitFor({ timeout: 20_000 });
    await expect
      .poll(() => card.locator("pre.diff").textContent(), { timeout: 10_000 })
      .toContain("slugify");
    await expect.poll(() => card.textContent(), { timeout: 10_000 }).toContain("Reviewer: accept");
    await expect
      .poll(() =>
        row(page, query as string)
          .locator('[data-testid="loop-state"]')
          .textContent(),
      )
      .toBe("open");
    expect(
      await row(page, query as string)
        .locator('[data-testid="budget-meter"]')
        .count(),
    ).toBe(5);
    await expect
      .poll(() =>
        row(page, query as string)
          .locator('[data-testid="loop-waiting"]')
          .textContent(),
      )
      .toBe(`approval mutation ${step}`);
    // Each meter's bar is as full as its count says.
    const meters = await row(page, query as string)
      .locator('[data-testid="budget-meter"]')
      .evaluateAll((els) =>
        els.map((e) => ({
          text: e.textContent ?? "",
          width: (e.querySelector("i") as unknown as { style: { width: string } }).style.width,
        })),
      );
    for (const m of meters) {
      const [used, max] = (/(\d+)\/(\d+)$/.exec(m.text.trim()) ?? []).slice(1).map(Number);
      expect(m.width, m.text).toBe(`${Math.round(((used as number) / (max as number)) * 100)}%`);
    }
    await screenshot(page, "console-queue.png");

    await card.locator('[data-testid="approve"]').click();
    await expect
      .poll(
        () =>
          row(page, query as string)
            .locator('[data-testid="loop-state"]')
            .textContent(),
        { timeout: 30_000 },
      )
      .toBe("succeeded");
    await expect.poll(() => page.locator('[data-testid="pending-approval"]').count()).toBe(0);
    expect(await notReloaded(page)).toBe(true);
    const r = await run.done;
    expect(r.stdout).toContain("loop stopped: succeeded");

    // The loop page: every fact in the timeline, the final diff, the records.
    await row(page, query as string)
      .locator("a")
      .first()
      .click();
    const facts = JSON.parse(
      (await runCli(["export", query as string, "--store", store], { cwd })).stdout,
    ) as {
      facts: unknown[];
    };
    await expect
      .poll(() => page.locator('[data-testid="fact-row"]').count())
      .toBe(facts.facts.length);
    await expect
      .poll(() => page.locator("pre.diff").first().textContent())
      .toContain("src/slugify.js");
    const proposalRecord = page.locator('[data-testid="record"][data-kind="proposal"]').last();
    await proposalRecord.locator("summary").click();
    await expect.poll(() => proposalRecord.textContent()).toContain("Hypothesis");
    await screenshot(page, "console-loop.png");
    await page.close();
  });

  it("Deny with a reason concludes the run hil/denied, seen live on the loop page", async () => {
    const cwd = tempDir();
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    const { url } = await startServe(["--store", store], cwd);
    const run = startRun([demoPack, ...models, "--store", store], cwd);
    const [, query] = await run.waitFor(/opened (query:\S+)/);
    const [, proposal] = await run.waitFor(APPROVAL);
    const page = await open_(url);
    await page.evaluate((q) => {
      (globalThis as unknown as { location: { hash: string } }).location.hash =
        `#/loop/${encodeURIComponent(q)}`;
    }, query as string);
    await expect.poll(() => page.locator('[data-testid="live"]').textContent()).toBe("live");
    const card = page.locator(`[data-testid="pending-approval"][data-run="${proposal}"]`);
    await card.waitFor({ timeout: 20_000 });
    await card.locator('[data-testid="deny-reason"]').fill("touches more than the bug");
    await card.locator('[data-testid="deny"]').click();
    // The run hears the denial and concludes (its own output says so) …
    await within(30_000, run.waitFor(/concluded refused \(hil\/denied\)/), async () => {
      const cards = await page.locator(`[data-run="${proposal}"]`).allTextContents();
      return `the run to conclude hil/denied; the page's card: ${JSON.stringify(cards)}`;
    });
    // … and the loop page shows that fact as it comes.
    await expect
      .poll(
        () => page.locator('[data-testid="fact-row"]').filter({ hasText: "hil/denied" }).count(),
        { timeout: 30_000, message: "the hil/denied fact on the loop page" },
      )
      .toBe(1);
    expect(await notReloaded(page)).toBe(true);
    const r = await run.done;
    expect(r.stdout).toContain("concluded refused (hil/denied)");
    const show = await runCli(["export", query as string, "--bundle", "--store", store], { cwd });
    expect(show.stdout).toContain("touches more than the bug");
    await page.close();
  });

  it("refuses the API without the token (401), and says so on the page", async () => {
    const cwd = tempDir();
    const { url } = await startServe(["--store", `sqlite:${path.join(cwd, "ledger.db")}`], cwd);
    const base = url.slice(0, url.indexOf("/#token="));
    const page = await browser.newPage();
    await page.goto(`${base}/`);
    const status = await page.evaluate(async () => (await fetch("/api/loops")).status);
    expect(status).toBe(401);
    const wrong = await page.evaluate(
      async () =>
        (await fetch("/api/pending", { headers: { authorization: "Bearer not-the-token-at-all" } }))
          .status,
    );
    expect(wrong).toBe(401);
    await expect
      .poll(() => page.locator('[data-testid="live"]').textContent())
      .toContain("token was refused");
    await page.close();
  });

  it("cannot be framed by a page on another loopback port", async () => {
    const cwd = tempDir();
    const { url } = await startServe(["--store", `sqlite:${path.join(cwd, "ledger.db")}`], cwd);
    // The framing page: another origin on the same host, as any local web server could be.
    const framer = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<!doctype html><iframe id="console" src="${url}" width="800" height="600"></iframe>`,
      );
    });
    await new Promise<void>((r) => framer.listen(0, "127.0.0.1", () => r()));
    const framerPort = (framer.address() as AddressInfo).port;
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on("console", (m) => refused.push(m.text()));
    try {
      await page.goto(`http://127.0.0.1:${framerPort}/`);
      // The browser refuses to render the console inside the frame: its app never appears there.
      await expect
        .poll(() => refused.join("\n"), { timeout: 10_000 })
        .toMatch(/frame-ancestors 'none'|X-Frame-Options/);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      const app = await frame
        ?.locator('[data-testid="app"]')
        .count()
        .catch(() => 0);
      expect(app ?? 0).toBe(0);
    } finally {
      await page.close();
      await new Promise((r) => framer.close(r));
    }
  });

  it("resumes the event stream from Last-Event-ID without losing a fact", async () => {
    const cwd = tempDir();
    const file = path.join(cwd, "ledger.db");
    const store = `sqlite:${file}`;
    const { url } = await startServe(["--store", store], cwd);
    const run = startRun([demoPack, ...models, "--store", store], cwd);
    const [, proposal, step] = await run.waitFor(APPROVAL);
    expect(
      (await runCli(["approve", proposal as string, step as string, "--store", store], { cwd }))
        .code,
    ).toBe(0);
    await run.done;
    // The loop has stopped: the store holds every fact the stream can tell.
    const ledger = openSqliteLedgerStore(file);
    let stored = 0;
    for (const l of await ledger.listLoops()) stored += (await ledger.readFacts(l.query)).length;
    await ledger.close();
    expect(stored).toBeGreaterThan(10);
    const page = await open_(url);
    const token = url.slice(url.indexOf("#token=") + "#token=".length);
    // Read the stream in the page as the console does: all facts from 0, then from the 5th again;
    // each read until the pending set and `expected` facts came, or a deadline passed.
    const read = (after: string, expected: number) =>
      page.evaluate(
        async ({ token, after, expected }) => {
          const res = await fetch("/api/events", {
            headers: { authorization: `Bearer ${token}`, "last-event-id": after },
          });
          const reader = (res.body as ReadableStream<Uint8Array>).getReader();
          const decoder = new TextDecoder();
          let text = "";
          const facts = () => text.split("\n\n").filter((b) => b.includes("event: fact"));
          const deadline = Date.now() + 20_000;
          while (!text.includes("event: pending") || facts().length < expected) {
            const left = deadline - Date.now();
            if (left <= 0) break;
            const chunk = await Promise.race([
              reader.read(),
              new Promise<{ value?: undefined; done?: undefined }>((r) =>
                setTimeout(() => r({}), left),
              ),
            ]);
            if (chunk.value !== undefined) text += decoder.decode(chunk.value, { stream: true });
            if (chunk.done === true) break;
          }
          await reader.cancel();
          return facts().map((block) => /^id: (\d+)/m.exec(block)?.[1] ?? "?");
        },
        { token, after, expected },
      );
    const all = await read("0", stored);
    expect(all).toHaveLength(stored);
    expect(all.map(Number)).toEqual([...all.map(Number)].sort((a, b) => a - b));
    const rest = await read(all[4] as string, stored - 5);
    expect(rest).toEqual(all.slice(5));
    await page.close();
  });
});

describe.skipIf(!haveBrowser)("the console's event stream and its views", () => {
  it("a fact appended while the page's event stream connects is shown without a reload", async () => {
    const cwd = tempDir();
    const file = path.join(cwd, "ledger.db");
    const q = "query:late-stream";
    const store = openSqliteLedgerStore(file);
    const ledger = new LoopLedger(store);
    const ref = (n: number) => `passage:sha256:${String(n).padStart(43, "A")}`;
    const at = new Date();
    const append = async (command: LoopCommand) => {
      const d = await ledger.execute(q, command, at);
      expect(d.result === "refused" ? d.refusal : d.result).toBe("appended");
    };
    await append({
      op: "open",
      query: q,
      binding: "operator-task-local-binding:late",
      operator: "node-operator-binding:alice",
      layers: [
        {
          "max/passages": 10,
          "max/solver-passages": 10,
          "max/reviewer-passages": 10,
          "max/cycles": 1,
          "max/experiments": 1,
          "max/wall-time-ms": 86_400_000,
        },
      ],
    });
    await append({ op: "charge-passage", role: "implementer", agent: "agent:a1", passage: ref(1) });
    const { url } = await startServe(["--store", `sqlite:${file}`], cwd);
    const page = await browser.newPage();
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    // The page's event stream is held back until the test lets it through.
    let letThrough: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      letThrough = resolve;
    });
    await page.route("**/api/events", async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(url);
    await page.evaluate((query) => {
      (globalThis as unknown as { location: { hash: string } }).location.hash =
        `#/loop/${encodeURIComponent(query)}`;
    }, q);
    const rows = page.locator('[data-testid="fact-row"]');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);
    // Appended after the view read the loop and before the stream starts: the stream begins after
    // it, so only reading the loop again when the stream is ready shows it.
    await append({ op: "charge-passage", role: "reviewer", agent: "agent:a1", passage: ref(2) });
    letThrough();
    await expect.poll(() => page.locator('[data-testid="live"]').textContent()).toBe("live");
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(3);
    await store.close();
    await page.close();
  });
});

describe.skipIf(!haveBrowser)("a long loop in the console", () => {
  it("renders all 1 366 facts of the longest loop in chunks of at most 200 rows, never all at once", async () => {
    const cwd = tempDir();
    const file = path.join(cwd, "ledger.db");
    const q = "query:long-loop";
    const store = openSqliteLedgerStore(file);
    const ledger = new LoopLedger(store);
    const start = new Date();
    // The longest loop there is: 1 000 passages, 100 cycles each admitted and concluded, 64
    // renewals and a cancellation, after its opening: 1 366 facts.
    const ref = (prefix: string, n: number) => `${prefix}:sha256:${String(n).padStart(43, "A")}`;
    const commands: [LoopCommand, number][] = [
      [
        {
          op: "open",
          query: q,
          binding: "operator-task-local-binding:long",
          operator: "node-operator-binding:alice",
          layers: [
            {
              "max/passages": 1000,
              "max/solver-passages": 1000,
              "max/reviewer-passages": 1000,
              "max/cycles": 100,
              "max/experiments": 100,
              "max/wall-time-ms": 86_400_000,
            },
          ],
        },
        0,
      ],
    ];
    let passage = 0;
    for (let c = 1; c <= 100; c++) {
      for (let i = 0; i < 10; i++) {
        passage++;
        const role = i % 2 === 0 ? "implementer" : "reviewer";
        commands.push([
          { op: "charge-passage", role, agent: "agent:a1", passage: ref("passage", passage) },
          0,
        ]);
      }
      commands.push([{ op: "open-cycle", proposal: ref("corpus-experiment", c) }, 0]);
      commands.push([{ op: "admit-run", proposal: ref("corpus-experiment", c) }, 0]);
      commands.push([
        {
          op: "conclude",
          proposal: ref("corpus-experiment", c),
          execution: ref("corpus-task-pack-execution", c),
          outcome: "verification-failed",
        },
        0,
      ]);
    }
    for (let r = 1; r <= 64; r++) {
      const now = start.getTime() + r * 60_000;
      commands.push([
        {
          op: "renew",
          deadline: new Date(now + 86_400_000).toISOString(),
          operator: "node-operator-binding:alice",
        },
        r,
      ]);
    }
    commands.push([{ op: "cancel", operator: "node-operator-binding:alice" }, 65]);
    for (const [command, minute] of commands) {
      const d = await ledger.execute(q, command, new Date(start.getTime() + minute * 60_000));
      expect(d.result === "refused" ? d.refusal : d.result).toBe("appended");
    }
    expect((await store.readFacts(q)).length).toBe(1366);
    await store.close();
    const { url } = await startServe(["--store", `sqlite:${file}`], cwd);
    const page = await open_(url);
    // Count the rows each DOM mutation adds to the timeline, from before the page is shown.
    await page.evaluate(() => {
      const g = globalThis as unknown as {
        batches: number[];
        MutationObserver: new (
          cb: (records: { addedNodes: { length: number } }[]) => void,
        ) => { observe(target: unknown, o: unknown): void };
        document: { getElementById(id: string): unknown };
      };
      g.batches = [];
      new g.MutationObserver((records) => {
        for (const r of records) if (r.addedNodes.length > 0) g.batches.push(r.addedNodes.length);
      }).observe(g.document.getElementById("app"), { childList: true, subtree: true });
    });
    await page.evaluate((query) => {
      (globalThis as unknown as { location: { hash: string } }).location.hash =
        `#/loop/${encodeURIComponent(query)}`;
    }, q);
    await expect
      .poll(() => page.locator('[data-testid="fact-row"]').count(), { timeout: 30_000 })
      .toBe(1366);
    const batches = await page.evaluate(
      () => (globalThis as unknown as { batches: number[] }).batches,
    );
    expect(Math.max(...batches)).toBeLessThanOrEqual(200);
    expect(batches.filter((b) => b > 1).length).toBeGreaterThanOrEqual(7);
    await page.close();
  });
});

describe.skipIf(!haveBrowser || !pg.enabled)(
  "the console in a browser (PostgreSQL, a worker driving)",
  () => {
    it("shows the approval a worker waits for; Approve lets the worker finish the loop, live", async () => {
      const cwd = tempDir();
      const store = schemas.uri();
      const { url } = await startServe(["--store", store], cwd);
      const page = await open_(url);
      await expect.poll(() => page.locator('[data-testid="live"]').textContent()).toBe("live");
      const dispatched = await runCli(
        ["run", demoPack, ...models, "--store", store, "--dispatch", "--json"],
        { cwd },
      );
      expect(dispatched.code, dispatched.stderr).toBe(0);
      const { query } = JSON.parse(dispatched.stdout) as { query: string };
      const worker = spawn(process.execPath, [cliPath, "worker", "--store", store], {
        cwd,
        env: { ...process.env, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(worker);
      const card = page.locator(`[data-testid="pending-approval"][data-query="${query}"]`);
      await card.waitFor({ timeout: 40_000 });
      await expect
        .poll(() => card.locator("pre.diff").textContent(), { timeout: 10_000 })
        .toContain("slugify");
      await card.locator('[data-testid="approve"]').click();
      await expect
        .poll(() => row(page, query).locator('[data-testid="loop-state"]').textContent(), {
          timeout: 40_000,
        })
        .toBe("succeeded");
      expect(await notReloaded(page)).toBe(true);
      worker.kill("SIGTERM");
      await page.close();
    });

    it("refreshes the loops list while facts keep coming, not only once they stop", async () => {
      const cwd = tempDir();
      const uri = schemas.uri();
      const { url } = await startServe(["--store", uri], cwd);
      const page = await open_(url);
      await expect.poll(() => page.locator('[data-testid="live"]').textContent()).toBe("live");
      const store = await openStore(uri);
      const ledger = new LoopLedger(store);
      const rows = page.locator('[data-testid="loop-row"]');
      const LOOPS = 40;
      // One loop opened every 60 ms: PostgreSQL tells the server of each at once, so the page
      // hears of a fact far more often than every 250 ms for as long as this lasts.
      let opened = 0;
      let streaming = true;
      const stream = (async () => {
        try {
          for (let i = 0; i < LOOPS; i++) {
            const q = `query:stream-${i}`;
            const d = await ledger.execute(
              q,
              {
                op: "open",
                query: q,
                binding: "operator-task-local-binding:stream",
                operator: "node-operator-binding:alice",
                layers: [
                  {
                    "max/passages": 1,
                    "max/solver-passages": 1,
                    "max/reviewer-passages": 1,
                    "max/cycles": 1,
                    "max/experiments": 1,
                    "max/wall-time-ms": 86_400_000,
                  },
                ],
              },
              new Date(),
            );
            expect(d.result === "refused" ? d.refusal : d.result).toBe("appended");
            opened++;
            await new Promise((r) => setTimeout(r, 60));
          }
        } finally {
          streaming = false;
        }
      })();
      // What the page showed while the stream still ran.
      const shownMidStream: number[] = [];
      while (streaming) {
        const n = await rows.count();
        if (opened < LOOPS) shownMidStream.push(n);
        await new Promise((r) => setTimeout(r, 100));
      }
      await stream;
      expect(shownMidStream.some((n) => n > 0 && n < LOOPS)).toBe(true);
      await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(LOOPS);
      expect(await notReloaded(page)).toBe(true);
      await store.close();
      await page.close();
    });
  },
);
