// warrant.evals as a library user drives it, on the real sandbox and the example tasks: the fixing
// agent passes every cell and the wrong-fix agent none, with the report's statistics; running again
// opens no loop; an interrupted cell is driven on from its ledger; an unreachable model endpoint
// ends `error`, is retried, and leaves the pass rate alone; the set's limits stop new cells.
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { toQueryId } from "../../src/core/ids.js";
import type { Role } from "../../src/core/loop/types.js";
import {
  createWarrant,
  type EvalEvent,
  type EvalReport,
  type ModelProvider,
  type ModelResolver,
  type Warrant,
} from "../../src/index.js";
import { modelFromUri } from "../../src/library/uri-models.js";
import { repoRoot } from "../helpers/cli.js";

const EXAMPLE = path.join(repoRoot, "examples/evals");
const dir = mkdtempSync(path.join(tmpdir(), "warrant-evals-run-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROLES = ["implementer", "reviewer", "summarizer"] as const;
const scripted = (agent: string) =>
  Object.fromEntries(
    ROLES.map((r) => [
      r,
      `scripted:${path.join(EXAMPLE, "scripts", agent, "{task}", `${r}.jsonl`)}`,
    ]),
  );
const task = (id: string) => ({
  id,
  pack: path.join(EXAMPLE, "tasks", id, "task-pack.json"),
  oracle: path.join(EXAMPLE, "tasks", id, "fix.diff"),
});

function writeSet(name: string, doc: Record<string, unknown>): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({ schema: "warrant-eval-set.v1", name, approval: "auto", ...doc }),
  );
  return file;
}

async function drain(handle: AsyncIterable<EvalEvent>): Promise<EvalEvent[]> {
  const seen: EvalEvent[] = [];
  for await (const e of handle) seen.push(e);
  return seen;
}

let counter = 0;
async function warrantOn(options: { models?: ModelResolver } = {}): Promise<Warrant> {
  counter++;
  return createWarrant({ store: `sqlite:${path.join(dir, `ledger-${counter}.db`)}`, ...options });
}

describe("warrant.evals.run", () => {
  it("scores the fixing agent 1 and the wrong-fix agent 0, and a second run opens no loop", async () => {
    const warrant = await warrantOn();
    try {
      const file = writeSet("two-by-two", {
        tasks: [task("median"), task("fizzbuzz")],
        agents: [
          { id: "fixer", models: scripted("fixer") },
          { id: "wrong-fixer", models: scripted("wrong-fixer") },
        ],
        epochs: 2,
      });
      const handle = warrant.evals.run(file, { concurrency: 2 });
      const events = await drain(handle);
      const report = await handle.result;
      expect(await handle.eval).toBe(report.eval);
      expect(events[0]?.kind).toBe("eval-start");
      expect(events.at(-1)?.kind).toBe("eval-end");
      expect(events.filter((e) => e.kind === "cell-start")).toHaveLength(8);
      expect(events.filter((e) => e.kind === "cell-end")).toHaveLength(8);

      expect(report.status).toBe("complete");
      expect(report.set.name).toBe("two-by-two");
      expect(report.cells).toHaveLength(8);
      for (const c of report.cells) {
        expect(c.outcome).toBe(c.agent === "fixer" ? "passed" : "failed");
        expect(c.stop).toBe(c.agent === "fixer" ? "succeeded" : "cancelled");
        expect(c.runs).toBe(1);
        expect(c.costUsd).toBe(0);
      }
      const wrong = report.cells.find((c) => c.agent === "wrong-fixer");
      expect(wrong?.closed).toMatchObject({ reason: "model", code: "model/script-exhausted" });
      const [fixer, wrongFixer] = report.agents;
      expect(fixer).toMatchObject({
        agent: "fixer",
        scored: 4,
        passed: 4,
        failed: 0,
        errors: 0,
        passRate: 1,
      });
      expect(fixer?.passAtK).toEqual({ "1": 1, "2": 1 });
      expect(fixer?.ci95[0]).toBeCloseTo(0.51009, 4);
      expect(fixer?.ci95[1]).toBe(1);
      expect(wrongFixer).toMatchObject({ scored: 4, passed: 0, failed: 4, passRate: 0 });
      expect(wrongFixer?.passAtK).toEqual({ "1": 0, "2": 0 });
      expect(report.tasks.map((t) => t.task)).toEqual(["median", "fizzbuzz"]);

      const loops = (await warrant.loops()).length;
      expect(loops).toBe(8);
      const again = warrant.evals.run(file);
      const second = await drain(again);
      expect(second.filter((e) => e.kind === "cell-start")).toHaveLength(0);
      expect((await warrant.loops()).length).toBe(loops);
      const rerun = await again.result;
      expect(rerun.cells.map((c) => [c.query, c.outcome])).toEqual(
        report.cells.map((c) => [c.query, c.outcome]),
      );
      // The report is the store's: by id or by the set's file.
      expect(await warrant.evals.report(report.eval)).toEqual(rerun);
      expect((await warrant.evals.report(file)).cells).toEqual(rerun.cells);

      // A comparison of the two agents flags the regression; an agent with itself shows none.
      const cmp = await warrant.evals.compare(`${report.eval}:fixer`, `${report.eval}:wrong-fixer`);
      expect(cmp.delta).toBe(-1);
      expect(cmp.ci95).toEqual([-1, -1]);
      expect(cmp.regression).toBe(true);
      const same = await warrant.evals.compare(`${report.eval}:fixer`, `${report.eval}:fixer`);
      expect(same).toMatchObject({ delta: 0, ci95: [0, 0], regression: false });
      await expect(warrant.evals.compare(report.eval, report.eval)).rejects.toMatchObject({
        code: "eval/agent-required",
      });
      await expect(
        warrant.evals.compare(`${report.eval}:nobody`, report.eval),
      ).rejects.toMatchObject({
        code: "eval/agent-unknown",
      });
      await expect(warrant.evals.report("eval:nothing-AAAAAAAAAAAAAAAA")).rejects.toMatchObject({
        code: "eval/not-found",
      });

      // Editing the set (one more epoch) reuses every unchanged cell: only the new ones run.
      const more = writeSet("two-by-two", {
        ...JSON.parse(readFileSync(file, "utf8")),
        epochs: 3,
      });
      const grown = warrant.evals.run(more);
      const grownEvents = await drain(grown);
      expect(grownEvents.filter((e) => e.kind === "cell-start")).toHaveLength(4);
      expect((await grown.result).cells).toHaveLength(12);
      expect((await grown.result).eval).not.toBe(report.eval);
    } finally {
      await warrant.close();
    }
  }, 120_000);

  it("drives on a cell whose loop was opened and never driven (an interrupted run)", async () => {
    const warrant = await warrantOn();
    try {
      const file = writeSet("interrupted", {
        tasks: [task("clamp")],
        agents: [{ id: "fixer", models: scripted("fixer") }],
      });
      const loaded = await warrant.evals.load(file);
      if (!loaded.ok) throw new Error("the set does not load");
      const cell = loaded.value.cells[0];
      if (cell === undefined) throw new Error("no cell");
      const pack = loaded.value.tasks[0]?.pack;
      if (pack === undefined) throw new Error("no pack");
      await warrant.open(pack, { query: cell.query, models: cell.config.models });
      const handle = warrant.evals.run(loaded.value);
      const events = await drain(handle);
      const start = events.find((e) => e.kind === "cell-start");
      expect(start).toMatchObject({ kind: "cell-start", query: cell.query, resumed: true });
      const report = await handle.result;
      expect(report.cells[0]).toMatchObject({ outcome: "passed", query: cell.query, attempts: 1 });
      expect((await warrant.loops()).length).toBe(1);
    } finally {
      await warrant.close();
    }
  }, 60_000);

  it("runs a configuration's own definition for a role from a pack written beside its task's", async () => {
    // A copy of a task (the configuration's pack is written beside its task's).
    const taskDir = path.join(dir, "defs-task");
    cpSync(path.join(EXAMPLE, "tasks/clamp"), taskDir, { recursive: true });
    const packFile = path.join(taskDir, "task-pack.json");
    const pack = JSON.parse(readFileSync(packFile, "utf8"));
    for (const role of Object.keys(pack.agents))
      pack.agents[role] = path.join(repoRoot, "examples/agents", `${role}.json`);
    writeFileSync(packFile, JSON.stringify(pack));
    const careful = JSON.parse(
      readFileSync(path.join(repoRoot, "examples/agents/reviewer.json"), "utf8"),
    );
    careful.description =
      "A careful reviewer: judges each proposed experiment before anything runs.";
    const carefulFile = path.join(dir, "careful-reviewer.json");
    writeFileSync(carefulFile, JSON.stringify(careful));
    const file = writeSet("definitions", {
      tasks: [{ id: "clamp", pack: packFile }],
      agents: [
        { id: "plain", models: scripted("fixer") },
        { id: "careful", models: scripted("fixer"), definitions: { reviewer: carefulFile } },
      ],
    });
    const warrant = await warrantOn();
    try {
      const loaded = await warrant.evals.load(file);
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
      const [plain, withDef] = loaded.value.cells;
      expect(plain?.key).not.toBe(withDef?.key);
      const reviewerId = withDef?.config.agents.reviewer?.id;
      expect(reviewerId).toMatch(/^agent:/);
      const handle = warrant.evals.run(loaded.value);
      const report = await handle.result;
      expect(report.cells.map((c) => c.outcome)).toEqual(["passed", "passed"]);
      const derived = readdirSync(taskDir).filter((f) => f.startsWith(".eval-"));
      expect(derived).toHaveLength(1);
      const view = await warrant.show(toQueryId(withDef?.query));
      const reviewers = (view?.loop.facts ?? []).flatMap((f) =>
        f.step.kind === "passage-charged" && f.step.role === "reviewer" ? [f.step["agent/id"]] : [],
      );
      expect(reviewers.length).toBeGreaterThan(0);
      for (const id of reviewers) expect(id).toBe(reviewerId);
      const plainView = await warrant.show(toQueryId(plain?.query));
      const plainReviewer = (plainView?.loop.facts ?? []).find(
        (f) => f.step.kind === "passage-charged" && f.step.role === "reviewer",
      );
      expect(plainReviewer?.step).not.toMatchObject({ "agent/id": reviewerId });
      // Running again opens nothing and finds the same cells.
      const again = await warrant.evals.run(loaded.value).result;
      expect(again.cells).toEqual(report.cells);
      expect((await warrant.loops()).length).toBe(2);
      expect(existsSync(path.join(taskDir, derived[0] as string))).toBe(true);
    } finally {
      await warrant.close();
    }
  }, 60_000);

  it("with approval operator, a cell's mutation waits for a person's approval", async () => {
    const warrant = await warrantOn();
    try {
      const file = path.join(dir, "operator.json");
      writeFileSync(
        file,
        JSON.stringify({
          schema: "warrant-eval-set.v1",
          name: "operator",
          approval: "operator",
          tasks: [task("clamp")],
          agents: [{ id: "fixer", models: scripted("fixer") }],
        }),
      );
      const handle = warrant.evals.run(file);
      let pending = await warrant.pending();
      while (pending.length === 0) {
        await new Promise((r) => setTimeout(r, 100));
        pending = await warrant.pending();
      }
      expect(pending[0]).toMatchObject({ kind: "mutation", step: "fix" });
      const act = await warrant.approve(pending[0]?.run as string, "fix");
      expect(act.ok).toBe(true);
      const report = await handle.result;
      expect(report.cells[0]).toMatchObject({ outcome: "passed", stop: "succeeded" });
    } finally {
      await warrant.close();
    }
  }, 60_000);

  it("ends a cell whose model endpoint is unreachable `error`, retries it, and leaves it unscored", async () => {
    const warrant = await warrantOn();
    try {
      const unreachable = "openai-compatible:http://127.0.0.1:9/v1#nothing";
      const file = writeSet("unreachable", {
        tasks: [task("clamp")],
        agents: [
          { id: "fixer", models: scripted("fixer") },
          { id: "offline", models: { ...scripted("fixer"), implementer: unreachable } },
        ],
      });
      const handle = warrant.evals.run(file, { retries: 1, backoffMs: 5 });
      const events = await drain(handle);
      const report = await handle.result;
      const retries = events.filter((e) => e.kind === "cell-retry");
      expect(retries).toHaveLength(1);
      expect(retries[0]).toMatchObject({
        agent: "offline",
        retry: 1,
        delayMs: 5,
        code: "model/unreachable",
      });
      const offline = report.cells.find((c) => c.agent === "offline");
      expect(offline).toMatchObject({ outcome: "error", error: { code: "model/unreachable" } });
      expect(report.agents.find((a) => a.agent === "offline")).toMatchObject({
        scored: 0,
        errors: 1,
        passRate: null,
        ci95: [0, 1],
      });
      expect(report.agents.find((a) => a.agent === "fixer")).toMatchObject({
        scored: 1,
        passRate: 1,
      });
      expect(report.errors).toEqual([
        expect.objectContaining({ task: "clamp", agent: "offline", code: "model/unreachable" }),
      ]);
      expect(report.status).toBe("incomplete");
    } finally {
      await warrant.close();
    }
  }, 120_000);

  it("prices each cell, and stops starting cells once the set's cost limit is reached", async () => {
    // A priced model stands in through the resolver: the fixing script, with token counts.
    let cells: { query: string; task: string }[] = [];
    const priced: ModelResolver = (role: Role, ctx) => {
      if (ctx.recorded !== "openai:gpt-4.1") return undefined;
      const cell = cells.find((c) => c.query === ctx.query);
      if (cell === undefined) return undefined;
      const inner = modelFromUri(
        `scripted:${path.join(EXAMPLE, "scripts/fixer", cell.task, `${role}.jsonl`)}`,
        ctx.priorCalls,
        {},
      );
      const model: ModelProvider = {
        ...inner,
        id: "openai:gpt-4.1",
        async complete(request, options) {
          const r = await inner.complete(request, options);
          return {
            ...r,
            usage: {
              inputTokens: 1000,
              outputTokens: 100,
              cachedInputTokens: 0,
              reasoningTokens: 0,
            },
          };
        },
      };
      return model;
    };
    const warrant = await warrantOn({ models: priced });
    try {
      const pricing = path.join(dir, "pricing.json");
      writeFileSync(
        pricing,
        JSON.stringify({ models: { "openai:gpt-4.1": { inputPerMTok: 2, outputPerMTok: 8 } } }),
      );
      const gpt = {
        implementer: "openai:gpt-4.1",
        reviewer: "openai:gpt-4.1",
        summarizer: "openai:gpt-4.1",
      };
      const file = writeSet("limited", {
        tasks: [task("median"), task("clamp"), task("chunks")],
        agents: [{ id: "gpt", models: gpt }],
        epochs: 2,
        limits: { costUsd: 0.01 },
        pricing,
      });
      const loaded = await warrant.evals.load(file);
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
      cells = loaded.value.cells.map((c) => ({ query: c.query, task: c.task }));
      const handle = warrant.evals.run(loaded.value, { concurrency: 1 });
      const events = await drain(handle);
      const report: EvalReport = await handle.result;
      expect(events.filter((e) => e.kind === "limit-reached")).toEqual([
        expect.objectContaining({ limit: "costUsd" }),
      ]);
      const ran = report.cells.filter((c) => c.outcome === "passed");
      expect(ran).toHaveLength(2);
      for (const c of ran) {
        expect(c.tokens).toEqual({ input: 3000, output: 300 });
        expect(c.costUsd).toBeCloseTo((3000 * 2 + 300 * 8) / 1e6, 12);
      }
      expect(report.cells.filter((c) => c.outcome === "not-run")).toHaveLength(4);
      expect(report.status).toBe("limit");
      expect(report.limits).toEqual({ costUsd: 0.01, reached: "costUsd" });
      expect(report.agents[0]?.costUsd).toBeCloseTo(2 * 0.0084, 12);
    } finally {
      await warrant.close();
    }
  }, 120_000);
});
