// `warrant eval` as a user runs it on the example set (examples/evals: six small JS and Python
// tasks, a fixing and a wrong-fix scripted agent, three epochs): the report's JSON, the exit codes,
// a second run that opens no loop, the comparison that flags the wrong-fix agent (and exits 1 with
// --fail-on-regression), a zero comparison of an agent with itself, and the self-contained HTML.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Comparison, EvalReport } from "../../src/index.js";
import { cliPath, repoRoot, runCli } from "../helpers/cli.js";

const SET = path.join(repoRoot, "examples/evals/eval-set.json");
const dir = mkdtempSync(path.join(tmpdir(), "warrant-eval-e2e-"));
const store = `sqlite:${path.join(dir, "ledger.db")}`;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let report: EvalReport;
const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

describe("warrant eval", () => {
  beforeAll(async () => {
    const r = await runCli(["eval", "run", SET, "--store", store, "--json"], {
      cwd: dir,
      timeoutMs: 240_000,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    report = JSON.parse(r.stdout) as EvalReport;
  }, 250_000);

  it("run --json prints the report: the fixing agent passes every cell, the wrong-fix agent none", () => {
    expect(report.schema).toBe("warrant-eval-report.v1");
    expect(report.eval).toMatch(/^eval:small-bugs-[A-Za-z0-9_-]{16}$/);
    expect(report.set.name).toBe("small-bugs");
    expect(report.set.digest).toMatch(/^sha256:/);
    expect(report.status).toBe("complete");
    expect(report.cells).toHaveLength(36);
    const tasks = new Set(report.cells.map((c) => c.task));
    expect([...tasks].sort()).toEqual([
      "chunks",
      "clamp",
      "fizzbuzz",
      "median",
      "palindrome",
      "word-count",
    ]);
    for (const c of report.cells) {
      expect(Object.keys(c)).toEqual(
        expect.arrayContaining([
          "task",
          "agent",
          "epoch",
          "query",
          "outcome",
          "stop",
          "tokens",
          "modelCalls",
          "passages",
          "runs",
          "wallMs",
          "costUsd",
        ]),
      );
      expect(c.outcome).toBe(c.agent === "fixer" ? "passed" : "failed");
    }
    const fixer = report.agents.find((a) => a.agent === "fixer");
    const wrong = report.agents.find((a) => a.agent === "wrong-fixer");
    expect(fixer).toMatchObject({ scored: 18, passed: 18, failed: 0, errors: 0, passRate: 1 });
    expect(fixer?.passAtK).toEqual({ "1": 1, "3": 1 });
    // Wilson for 18 of 18: [18 / (18 + z²), 1].
    const z2 = 1.959963984540054 ** 2;
    expect(fixer?.ci95[0]).toBeCloseTo(18 / (18 + z2), 10);
    expect(fixer?.ci95[1]).toBe(1);
    expect(wrong).toMatchObject({ scored: 18, passed: 0, failed: 18, passRate: 0 });
    expect(wrong?.ci95[0]).toBe(0);
    expect(wrong?.ci95[1]).toBeCloseTo(z2 / (18 + z2), 10);
    expect(wrong?.passAtK).toEqual({ "1": 0, "3": 0 });
    expect(report.tasks).toHaveLength(6);
  });

  it("a second run opens no loop and prints the same cells", async () => {
    const loopsBefore = await runCli(["loops", "--store", store, "--json"], { cwd: dir });
    const r = await runCli(["eval", "run", SET, "--store", store, "--json"], { cwd: dir });
    expect(r.code).toBe(0);
    const again = JSON.parse(r.stdout) as EvalReport;
    expect(again.cells).toEqual(report.cells);
    const loopsAfter = await runCli(["loops", "--store", store, "--json"], { cwd: dir });
    expect(JSON.parse(loopsAfter.stdout)).toHaveLength(36);
    expect(loopsAfter.stdout).toBe(loopsBefore.stdout);
  });

  it("compare flags the wrong-fix agent as a regression and --fail-on-regression exits 1", async () => {
    const base = `${report.eval}:fixer`;
    const head = `${report.eval}:wrong-fixer`;
    const r = await runCli(["eval", "compare", base, head, "--store", store, "--json"], {
      cwd: dir,
    });
    expect(r.code).toBe(0);
    const c = JSON.parse(r.stdout) as Comparison;
    expect(c).toMatchObject({ delta: -1, ci95: [-1, -1], regression: true });
    expect(c.tasks).toHaveLength(6);
    expect(c.base).toEqual({ eval: report.eval, agent: "fixer" });
    const gate = await runCli(
      ["eval", "compare", base, head, "--store", store, "--fail-on-regression"],
      { cwd: dir },
    );
    expect(gate.code).toBe(1);
    expect(gate.stderr).toContain("eval/regression");
    expect(gate.stdout).toContain("REGRESSION");
  });

  it("compare of an agent with itself shows a zero difference and no regression (exit 0)", async () => {
    const side = `${report.eval}:fixer`;
    const r = await runCli(
      ["eval", "compare", side, side, "--store", store, "--json", "--fail-on-regression"],
      { cwd: dir },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ delta: 0, ci95: [0, 0], regression: false });
  });

  it("report by id equals the run's report, and --html writes a self-contained page", async () => {
    const html = path.join(dir, "report.html");
    const r = await runCli(
      ["eval", "report", report.eval, "--store", store, "--json", "--html", html],
      {
        cwd: dir,
      },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(report);
    const page = readFileSync(html, "utf8");
    expect(page.startsWith("<!doctype html>")).toBe(true);
    expect(page).not.toMatch(/<script|<link|src=|https?:\/\//);
    expect(page.match(/data-testid="eval-cell"/g)).toHaveLength(12);
    expect(page).toContain(">3/3</a>");
    expect(page).toContain(">0/3</a>");
    for (const c of report.cells) expect(page).toContain(c.query);
  });

  it("certify --json proves every example task real; the report then marks them certified", async () => {
    const r = await runCli(["eval", "certify", SET, "--store", store, "--json", "--epochs", "1"], {
      cwd: dir,
      timeoutMs: 120_000,
    });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { tasks: { task: string; status: string }[] };
    expect(out.tasks).toHaveLength(6);
    for (const t of out.tasks)
      expect(t).toEqual({
        task: t.task,
        status: "certified",
        baseline: { passed: 0, runs: 1 },
        oracle: { passed: 1, runs: 1 },
      });
    const rep = await runCli(["eval", "report", report.eval, "--store", store, "--json"], {
      cwd: dir,
    });
    const after = JSON.parse(rep.stdout) as EvalReport;
    expect(after.tasks.every((t) => t.certified && !t.quarantined)).toBe(true);
  }, 130_000);

  it.skipIf(!hasScript)(
    "on a terminal: one progress line (done/total, passed, tokens, cost, elapsed, eta)",
    async () => {
      const set = path.join(dir, "tty.json");
      const doc = JSON.parse(readFileSync(SET, "utf8"));
      writeFileSync(
        set,
        JSON.stringify({
          ...doc,
          name: "tty",
          epochs: 1,
          tasks: doc.tasks.slice(0, 2).map((t: { id: string; pack: string; oracle: string }) => ({
            ...t,
            pack: path.join(repoRoot, "examples/evals", t.pack),
            oracle: path.join(repoRoot, "examples/evals", t.oracle),
          })),
          agents: doc.agents.map((a: { id: string; models: Record<string, string> }) => ({
            ...a,
            models: Object.fromEntries(
              Object.entries(a.models).map(([r, u]) => [
                r,
                `scripted:${path.join(repoRoot, "examples/evals", u.slice("scripted:".length))}`,
              ]),
            ),
          })),
        }),
      );
      const q = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;
      const command = `exec ${[process.execPath, cliPath, "eval", "run", set, "--store", `sqlite:${path.join(dir, "tty.db")}`].map(q).join(" ")}`;
      const proc = spawn("script", ["-qefc", command, "/dev/null"], {
        cwd: dir,
        env: { ...process.env, NO_COLOR: "1", TERM: "xterm" },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let screen = "";
      proc.stdout.setEncoding("utf8").on("data", (d: string) => {
        screen += d;
      });
      const code = await new Promise<number | null>((resolve) => proc.on("close", resolve));
      expect(code, screen).toBe(0);
      // The line is redrawn in place (carriage return, erase line), never printed once per cell.
      expect(screen).toContain("\r\x1b[2Kcells 1/4  passed ");
      expect(screen).toMatch(
        /cells 4\/4 {2}passed 2 {2}tokens 0 {2}cost \$0\.0000 {2}elapsed \d+s/,
      );
      expect(screen).toMatch(/cells [123]\/4 .*eta \d+s/);
      expect(screen).not.toMatch(/median × fixer epoch 1: passed/);
      expect(screen).toContain("fixer        2       2");
    },
    120_000,
  );

  it("refuses an invalid set with exit 1, naming the pointer and line of each problem", async () => {
    const bad = path.join(dir, "bad.json");
    writeFileSync(
      bad,
      JSON.stringify(
        {
          schema: "warrant-eval-set.v1",
          name: "bad",
          tasks: [{ id: "x", pack: "missing/task-pack.json" }],
          agents: [{ id: "a", modles: {} }],
        },
        null,
        2,
      ),
    );
    const r = await runCli(["eval", "run", bad, "--store", store], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/bad\.json \/agents\/0 \d+:\d+: eval\/schema: .*modles.*models/);
  });

  it("refuses usage errors with exit 2 and an unknown eval with exit 1", async () => {
    const u = await runCli(["eval", "run", SET, "--store", store, "--concurrency", "0"], {
      cwd: dir,
    });
    expect(u.code).toBe(2);
    expect(u.stderr).toContain("--concurrency");
    const n = await runCli(["eval", "report", "eval:nothing-AAAAAAAAAAAAAAAA", "--store", store], {
      cwd: dir,
    });
    expect(n.code).toBe(1);
    expect(n.stderr).toContain("eval/not-found");
    const s = await runCli(["eval", "compare", "not-an-eval", report.eval, "--store", store], {
      cwd: dir,
    });
    expect(s.code).toBe(1);
    expect(s.stderr).toContain("eval/side-invalid");
  });
});
