// `warrant eval run --dispatch` on PostgreSQL with two `warrant worker`s gives the same report as the
// same set run locally: the same cells, keys, queries and outcomes.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { EvalReport } from "../../src/index.js";
import { cliPath, repoRoot, runCli } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";

const pg = await postgresForTests();
const EXAMPLE = path.join(repoRoot, "examples/evals");

const scripted = (agent: string) =>
  Object.fromEntries(
    ["implementer", "reviewer", "summarizer"].map((r) => [
      r,
      `scripted:${path.join(EXAMPLE, "scripts", agent, "{task}", `${r}.jsonl`)}`,
    ]),
  );

describe.skipIf(!pg.enabled)("warrant eval run --dispatch", () => {
  const schemas = new TestSchemas(pg.url, "evals");
  const cwd = mkdtempSync(path.join(tmpdir(), "warrant-eval-dispatch-"));
  const workers: ChildProcess[] = [];
  const made: string[] = [];
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill("SIGKILL");
    for (const uri of made)
      await schemas.sql(`DROP SCHEMA IF EXISTS "${TestSchemas.schemaOf(uri)}_jobs" CASCADE`);
    await schemas.dropAll();
    rmSync(cwd, { recursive: true, force: true });
  });

  it("two workers drive the cells to the report a local run gives", {
    timeout: 240_000,
  }, async () => {
    const set = path.join(cwd, "set.json");
    writeFileSync(
      set,
      JSON.stringify({
        schema: "warrant-eval-set.v1",
        name: "dispatched",
        approval: "auto",
        epochs: 2,
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
    const local = await runCli(
      ["eval", "run", set, "--store", `sqlite:${path.join(cwd, "local.db")}`, "--json"],
      { cwd, timeoutMs: 180_000 },
    );
    expect(local.code, local.stderr).toBe(0);
    const expected = JSON.parse(local.stdout) as EvalReport;

    const store = schemas.uri();
    made.push(store);
    for (let w = 0; w < 2; w++) {
      const child = spawn(process.execPath, [cliPath, "worker", "--store", store, "--yes"], {
        cwd,
        env: { ...process.env, NO_COLOR: "1" },
        stdio: "ignore",
      });
      workers.push(child);
    }
    const r = await runCli(["eval", "run", set, "--store", store, "--dispatch", "--json"], {
      cwd,
      timeoutMs: 180_000,
    });
    for (const w of workers) w.kill("SIGTERM");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("warrant worker --yes");
    const report = JSON.parse(r.stdout) as EvalReport;
    const shape = (rep: EvalReport) =>
      rep.cells.map((c) => ({
        task: c.task,
        agent: c.agent,
        epoch: c.epoch,
        key: c.key,
        query: c.query,
        outcome: c.outcome,
        stop: c.stop,
        closed: c.closed,
        passages: c.passages,
        runs: c.runs,
        modelCalls: c.modelCalls,
      }));
    expect(shape(report)).toEqual(shape(expected));
    expect(report.eval).toBe(expected.eval);
    expect(report.agents.map(({ wallMsMedian: _w, ...a }) => a)).toEqual(
      expected.agents.map(({ wallMsMedian: _w, ...a }) => a),
    );
    expect(report.status).toBe("complete");
  });
});
