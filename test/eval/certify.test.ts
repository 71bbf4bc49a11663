// warrant.evals.certify on the real sandbox: a task whose oracle fixes it is certified, one whose
// oracle is wrong (or does not parse) is a broken oracle, one whose tests already pass passes without
// change; a set that requires certified tasks scores only those and reports the rest quarantined.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createWarrant } from "../../src/index.js";
import { certificationStatus, splitOracle } from "../../src/library/evals/certify.js";
import { repoRoot } from "../helpers/cli.js";

const EXAMPLE = path.join(repoRoot, "examples/evals");
const dir = mkdtempSync(path.join(tmpdir(), "warrant-eval-certify-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The diff the wrong-fix agent proposes for a task: applies cleanly, fixes nothing. */
function wrongDiff(task: string): string {
  const line = readFileSync(
    path.join(EXAMPLE, "scripts/wrong-fixer", task, "implementer.jsonl"),
    "utf8",
  );
  const plan = JSON.parse(JSON.parse(line).message.payload_json);
  return plan.steps[1].diff as string;
}

describe("certificationStatus", () => {
  it("needs a baseline that always fails and an oracle that always passes", () => {
    const r = (passed: number, runs = 3) => ({ passed, runs });
    expect(certificationStatus(r(0), r(3))).toBe("certified");
    expect(certificationStatus(r(3), r(3))).toBe("passes-without-change");
    expect(certificationStatus(r(0), r(0))).toBe("broken-oracle");
    expect(certificationStatus(r(1), r(3))).toBe("flaky");
    expect(certificationStatus(r(0), r(2))).toBe("flaky");
  });

  it("splits a diff of several files and refuses text that is not one", () => {
    const two = `${readFileSync(path.join(EXAMPLE, "tasks/median/fix.diff"), "utf8")}${readFileSync(path.join(EXAMPLE, "tasks/clamp/fix.diff"), "utf8")}`;
    const split = splitOracle(two);
    expect(typeof split === "string" ? split : split.map((p) => p.path)).toEqual([
      "src/median.js",
      "src/clamp.js",
    ]);
    expect(splitOracle("not a diff")).toMatch(/not a unified diff/);
  });
});

describe("warrant.evals.certify", () => {
  it("certifies, finds broken oracles and tasks that pass unchanged; requireCertified quarantines", async () => {
    writeFileSync(path.join(dir, "wrong.diff"), wrongDiff("clamp"));
    writeFileSync(
      path.join(dir, "garbled.diff"),
      "--- a/src/clamp.js\n+++ b/src/clamp.js\n@@ -1,2 +1,2 @@\n nonsense\n",
    );
    const solved = path.join(dir, "solved");
    cpSync(path.join(EXAMPLE, "tasks/median"), solved, { recursive: true });
    const fixedMedian = `// The median of a non-empty list of numbers.
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 0 ? (sorted[mid - 1] + sorted[mid]) / 2 : sorted[mid];
}
`;
    writeFileSync(path.join(solved, "workspace/src/median.js"), fixedMedian);
    // The copied pack names its agents relative to where it was: point them back.
    const packFile = path.join(solved, "task-pack.json");
    const pack = JSON.parse(readFileSync(packFile, "utf8"));
    for (const role of Object.keys(pack.agents))
      pack.agents[role] = path.join(repoRoot, "examples/agents", `${role}.json`);
    writeFileSync(packFile, JSON.stringify(pack));
    const models = Object.fromEntries(
      ["implementer", "reviewer", "summarizer"].map((r) => [
        r,
        `scripted:${path.join(EXAMPLE, "scripts/fixer/{task}", `${r}.jsonl`)}`,
      ]),
    );
    const doc = {
      schema: "warrant-eval-set.v1",
      name: "certify",
      tasks: [
        {
          id: "median",
          pack: path.join(EXAMPLE, "tasks/median/task-pack.json"),
          oracle: path.join(EXAMPLE, "tasks/median/fix.diff"),
        },
        {
          id: "clamp",
          pack: path.join(EXAMPLE, "tasks/clamp/task-pack.json"),
          oracle: "wrong.diff",
        },
        {
          id: "fizzbuzz",
          pack: path.join(EXAMPLE, "tasks/fizzbuzz/task-pack.json"),
          oracle: "garbled.diff",
        },
        { id: "chunks", pack: packFile, oracle: path.join(EXAMPLE, "tasks/median/fix.diff") },
      ],
      agents: [{ id: "fixer", models }],
      approval: "auto",
    };
    const setFile = path.join(dir, "set.json");
    writeFileSync(setFile, JSON.stringify(doc));
    const warrant = await createWarrant({ store: `sqlite:${path.join(dir, "ledger.db")}` });
    try {
      const r = await warrant.evals.certify(setFile, { epochs: 2 });
      const by = Object.fromEntries(r.tasks.map((t) => [t.task, t]));
      expect(by.median).toMatchObject({
        status: "certified",
        baseline: { passed: 0, runs: 2 },
        oracle: { passed: 2, runs: 2 },
      });
      expect(by.clamp).toMatchObject({
        status: "broken-oracle",
        baseline: { passed: 0, runs: 2 },
        oracle: { passed: 0, runs: 2 },
      });
      expect(by.fizzbuzz?.status).toBe("broken-oracle");
      expect(by.fizzbuzz?.detail).toBeDefined();
      expect(by.chunks).toMatchObject({
        status: "passes-without-change",
        baseline: { passed: 2, runs: 2 },
      });
      expect((await warrant.loops()).length).toBe(0);

      // The certifications are signed records of the store; a set that requires them scores only
      // the certified task.
      const certs = (await warrant.store.listRecords("query:warrant-evals")).filter(
        (rec) => rec.kind === "evalCertification",
      );
      expect(certs).toHaveLength(4);
      for (const c of certs) expect((c.body as { signature?: unknown }).signature).toBeDefined();
      writeFileSync(setFile, JSON.stringify({ ...doc, requireCertified: true }));
      const handle = warrant.evals.run(setFile);
      const report = await handle.result;
      expect(report.tasks).toEqual([
        { task: "median", certified: true, quarantined: false, certification: "certified" },
        { task: "clamp", certified: false, quarantined: true, certification: "broken-oracle" },
        { task: "fizzbuzz", certified: false, quarantined: true, certification: "broken-oracle" },
        {
          task: "chunks",
          certified: false,
          quarantined: true,
          certification: "passes-without-change",
        },
      ]);
      expect(report.cells.map((c) => [c.task, c.outcome])).toEqual([
        ["median", "passed"],
        ["clamp", "quarantined"],
        ["fizzbuzz", "quarantined"],
        ["chunks", "quarantined"],
      ]);
      expect(report.agents[0]).toMatchObject({ scored: 1, passed: 1 });
      expect(report.status).toBe("complete");
      expect((await warrant.loops()).length).toBe(1);
    } finally {
      await warrant.close();
    }
  }, 180_000);
});
