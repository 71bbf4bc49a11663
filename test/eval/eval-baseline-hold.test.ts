// An eval driving its cells here pins each task's workspace once: every cell's run is laid over the
// same copy, and the copy is gone once the eval ends.
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { probeSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import type { Sandbox } from "../../src/core/ports/sandbox.js";
import { createWarrant } from "../../src/index.js";
import { repoRoot } from "../helpers/cli.js";

const EXAMPLE = path.join(repoRoot, "examples/evals");
const dir = mkdtempSync(path.join(tmpdir(), "warrant-eval-hold-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// Contained commands may run as another uid: it must reach the environments' directory.
const made = mkdtempSync(path.join(dir, "t-"));
chmodSync(dir, 0o711);
chmodSync(made, 0o711);
const bwrap = createBwrapSandbox({ tempRoot: made });
const why = await probeSandbox(bwrap);

const scripted = (agent: string) =>
  Object.fromEntries(
    ["implementer", "reviewer", "summarizer"].map((r) => [
      r,
      `scripted:${path.join(EXAMPLE, "scripts", agent, "{task}", `${r}.jsonl`)}`,
    ]),
  );

const pins = () => readdirSync(made).filter((n) => n.startsWith("warrant-base-"));

describe.skipIf(why !== undefined)("an eval's baselines", () => {
  it("pins each task once for all its cells, and gives the pins back at the end", async () => {
    // The real sandbox, told of every environment made: which pins were there at that moment.
    const seen: string[][] = [];
    const sandbox: Sandbox = {
      ...bwrap,
      createEnvironment: async (baseline, opts) => {
        const env = await bwrap.createEnvironment(baseline, opts);
        seen.push(pins());
        return env;
      },
    };
    const set = path.join(dir, "set.json");
    writeFileSync(
      set,
      JSON.stringify({
        schema: "warrant-eval-set.v1",
        name: "held",
        approval: "auto",
        epochs: 2,
        tasks: [{ id: "clamp", pack: path.join(EXAMPLE, "tasks/clamp/task-pack.json") }],
        agents: [
          { id: "fixer", models: scripted("fixer") },
          { id: "wrong-fixer", models: scripted("wrong-fixer") },
        ],
      }),
    );
    const warrant = await createWarrant({
      store: `sqlite:${path.join(dir, "ledger.db")}`,
      sandbox,
    });
    try {
      const report = await warrant.evals.run(set, { concurrency: 1 }).result;
      expect(report.cells.map((c) => c.outcome).sort()).toEqual([
        "failed",
        "failed",
        "passed",
        "passed",
      ]);
      // Four runs, each over the one pin of the task, made before the first of them.
      expect(seen.length).toBeGreaterThanOrEqual(4);
      const first = seen[0] as string[];
      expect(first).toHaveLength(1);
      for (const s of seen) expect(s).toEqual(first);
      expect(pins()).toEqual([]);
    } finally {
      await warrant.close();
    }
  });
});
