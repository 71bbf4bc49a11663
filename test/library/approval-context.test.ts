// What an approver sees and what a stopped loop comes to, from the library: the task and checks
// from the pack file (packProblem when it is gone, packChanged when it was edited), the failed
// checks of the latest earlier run (else its observations' output; nothing for a first run), each
// budget counter's remainder and the deadline; the summarizer's Result and who decided each step.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { approvalContext, createWarrant, loopConclusion } from "../../src/index.js";
import { fakeSandbox, memoryStore } from "../../src/testing.js";
import { answers, fixturePackCopy } from "../helpers/fixture-pack.js";
import { accept, plan, result, turn } from "../runtime/harness.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("approvalContext and loopConclusion", () => {
  it("a second run's approver sees the first run's failed check; a stopped loop gives its Result and approvers", async () => {
    const pack = fixturePackCopy(dirs, "warrant-context-");
    let testRuns = 0;
    const sandbox = fakeSandbox({
      // The first run's tests fail, writing to stderr only; the second's pass.
      exec: (argv) =>
        argv.includes("--test")
          ? ++testRuns <= 2
            ? { exitCode: 1, stderr: "not ok 1 - slugify\n# fail 1" }
            : { exitCode: 0, stdout: "ok" }
          : { exitCode: 0 },
    });
    const fix = turn("Plan", plan("good-fix"));
    const warrant = await createWarrant({
      store: memoryStore(),
      sandbox,
      signer: "none",
      approver: "auto",
      operator: "otto",
      models: {
        implementer: answers(fix, fix),
        reviewer: answers(accept, accept),
        summarizer: answers(result),
      },
    });
    const handle = warrant.run(pack);
    const outcome = await handle.result;
    const query = await handle.query;
    const runs = (await warrant.store.readFacts(query))
      .map((f) => f.fact.step)
      .flatMap((s) => (s.kind === "run-admitted" ? [s["proposal/ref"]] : []));
    expect(runs.length, JSON.stringify(outcome)).toBe(2);

    const now = new Date();
    const first = await approvalContext(warrant.store, query, now, runs[0]);
    expect(first).toMatchObject({
      query,
      run: runs[0],
      task: expect.stringContaining("slugify"),
      evidence: [],
      checks: [
        { name: "tests-pass", description: "command run-tests exits 0" },
        { name: "tests-unchanged", description: "files matching test/** stay byte-identical" },
        {
          name: "only-allowed-changed",
          description: "only files the patch policy allows change",
        },
        { name: "network-unreachable", description: "command probe-network exits 0" },
      ],
      state: "stopped",
    });
    expect(first?.packChanged).toBeUndefined();
    const second = await approvalContext(warrant.store, query, now, runs[1]);
    expect(second?.evidence).toEqual([
      {
        kind: "check",
        name: "tests-pass",
        run: runs[0],
        text: expect.stringContaining("not ok 1 - slugify"),
      },
    ]);
    const doc = (await warrant.show(query))?.loop;
    expect(second?.deadline).toBe(doc?.deadline);
    expect(second?.budget).toContainEqual({
      counter: "max/experiments",
      spent: 2,
      limit: doc?.limits["max/experiments"],
      left: (doc?.limits["max/experiments"] ?? 0) - 2,
    });

    const conclusion = await loopConclusion(warrant.store, query);
    expect(conclusion.result).toEqual({ outcome: "verified", summary: "done", evidence: [] });
    expect(conclusion.decisions.length).toBeGreaterThan(0);
    for (const d of conclusion.decisions)
      expect(d).toMatchObject({
        kind: "approve",
        operator: "otto",
        text: "approved automatically",
      });
    expect(new Set(conclusion.decisions.map((d) => d.run))).toEqual(new Set(runs));

    // The pack file edited: said; removed: why the task and checks are unknown.
    writeFileSync(pack, readFileSync(pack, "utf8").replace("slugify", "SLUGIFY"));
    expect(await approvalContext(warrant.store, query, now)).toMatchObject({
      packChanged: true,
      task: expect.stringContaining("SLUGIFY"),
    });
    rmSync(pack);
    const gone = await approvalContext(warrant.store, query, now);
    expect(gone?.task).toBeUndefined();
    expect(gone?.checks).toEqual([]);
    expect(gone?.packProblem).toContain("cannot be read (ENOENT)");
    expect(await approvalContext(warrant.store, "query:none", now)).toBeUndefined();
    await warrant.close();
  });
});
