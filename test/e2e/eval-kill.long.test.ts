// `warrant eval run` killed at random moments (SIGKILL and SIGTERM, 20 trials, npm run test:long)
// and run again: the report has exactly the cells and outcomes of an uninterrupted run, no loop is
// opened twice for a cell that did not need a fresh one (only a loop the kill stopped `unknown`
// mid-step is followed by another), no passage is charged twice in any loop, every loop's ledger
// audits, and a further run after completion opens no loop.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seededRandom } from "../../src/core/eval/stats.js";
import { createWarrant, type EvalReport, toQueryId } from "../../src/index.js";
import { cliPath, repoRoot, runCli } from "../helpers/cli.js";

const TRIALS = 20;
const EXAMPLE = path.join(repoRoot, "examples/evals");
const dir = mkdtempSync(path.join(tmpdir(), "warrant-eval-kill-"));
const env = { WARRANT_LEASE_TTL_MS: "2000" };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const scripted = (agent: string) =>
  Object.fromEntries(
    ["implementer", "reviewer", "summarizer"].map((r) => [
      r,
      `scripted:${path.join(EXAMPLE, "scripts", agent, "{task}", `${r}.jsonl`)}`,
    ]),
  );
const SET = path.join(dir, "set.json");
const outcomes = (r: EvalReport) =>
  r.cells.map((c) => `${c.task} ${c.agent} ${c.epoch} ${c.key} ${c.outcome}`);

async function run(store: string): Promise<EvalReport> {
  const r = await runCli(["eval", "run", SET, "--store", store, "--json"], {
    cwd: dir,
    env,
    timeoutMs: 180_000,
  });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as EvalReport;
}

function killAfter(store: string, ms: number, signal: NodeJS.Signals): Promise<number | null> {
  const child: ChildProcess = spawn(
    process.execPath,
    [cliPath, "eval", "run", SET, "--store", store, "--json"],
    { cwd: dir, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: "ignore" },
  );
  const timer = setTimeout(() => child.kill(signal), ms);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve(code);
    }),
  );
}

let baseline: EvalReport;

describe("eval run killed and run again", () => {
  beforeAll(async () => {
    writeFileSync(
      SET,
      JSON.stringify({
        schema: "warrant-eval-set.v1",
        name: "killed",
        approval: "auto",
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
    baseline = await run(`sqlite:${path.join(dir, "baseline.db")}`);
    expect(baseline.status).toBe("complete");
  }, 200_000);

  const random = seededRandom(22);
  for (let trial = 0; trial < TRIALS; trial++) {
    const delay = 200 + Math.floor(random() * 6000);
    const signal: NodeJS.Signals = trial % 2 === 0 ? "SIGKILL" : "SIGTERM";
    it(`trial ${trial + 1}: ${signal} after ${delay} ms`, async () => {
      const store = `sqlite:${path.join(dir, `trial-${trial}.db`)}`;
      await killAfter(store, delay, signal);
      const report = await run(store);
      expect(outcomes(report)).toEqual(outcomes(baseline));
      expect(report.status).toBe("complete");

      const warrant = await createWarrant({ store, createStore: false });
      try {
        const loops = await warrant.loops();
        for (const l of loops) {
          const view = await warrant.show(l.query);
          const facts = view?.loop.facts ?? [];
          expect(facts.filter((f) => f.step.kind === "opened")).toHaveLength(1);
          const charged = facts.flatMap((f) =>
            f.step.kind === "passage-charged" ? [f.step["passage/ref"]] : [],
          );
          expect(new Set(charged).size).toBe(charged.length);
          const audit = await runCli(["loop", "check", "--store", store, l.query], {
            cwd: dir,
            env,
          });
          expect(audit.code, audit.stdout + audit.stderr).toBe(0);
        }
        // A cell has more than its first loop only when a kill stopped that loop mid-step.
        for (const c of report.cells) {
          const first = c.query.replace(/\.\d+$/, "");
          for (let a = 0; a < c.attempts - 1; a++) {
            const q = a === 0 ? first : `${first}.${a}`;
            const earlier = await warrant.show(toQueryId(q));
            expect(earlier?.loop.stop?.reason).toBe("unknown");
          }
        }
        const before = loops.length;
        const again = await run(store);
        expect(outcomes(again)).toEqual(outcomes(baseline));
        expect((await warrant.loops()).length).toBe(before);
      } finally {
        await warrant.close();
      }
    }, 300_000);
  }
});
