// `warrant run` on the demo pack through the built CLI: the implementer's passage is offered the
// pack's observation command profiles, runs `profile.run-tests` contained in the detected sandbox,
// and the failing test output is in its transcript before it plans.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import { repoRoot, runCli } from "../helpers/cli.js";
import { accept, plan, result, turn } from "../runtime/harness.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const demoPack = path.join(repoRoot, "examples/fix-failing-test/task-pack.json");
const runTests = {
  kind: "tool_calls",
  summary: "run the tests first",
  tool_calls: [{ name: "profile.run-tests", arguments_json: "{}" }],
  message: null,
};

/** Writes a role's scripted answers; the `--model` flags naming them. */
function script(dir: string, role: string, turns: readonly unknown[]): string[] {
  const file = path.join(dir, `${role}.jsonl`);
  writeFileSync(file, `${turns.map((t) => JSON.stringify(t)).join("\n")}\n`);
  return ["--model", `${role}=scripted:${file}`];
}

// Without a containment backend every run is refused and no profile is offered: nothing to see.
const detected = await detectSandbox();
const why = detected.ok ? "" : ` (skipped: no containment backend: ${detected.errors[0]?.message})`;

describe.skipIf(!detected.ok)(
  `warrant run: passages get the pack's observation profiles${why}`,
  () => {
    it("the implementer runs profile.run-tests, reads the failing tests, plans, and the loop succeeds", async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), "warrant-profile-run-"));
      dirs.push(cwd);
      const models = [
        ...script(cwd, "implementer", [runTests, turn("Plan", plan("good-fix"))]),
        ...script(cwd, "reviewer", [accept]),
        ...script(cwd, "summarizer", [result]),
      ];
      const r = await runCli(["run", demoPack, "--yes", ...models], { cwd });
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toContain("loop stopped: succeeded");
      const query = (r.stdout.trim().split("\n").at(-1) ?? "").slice("query: ".length);

      const store = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
      try {
        type Entry = {
          kind: string;
          name?: string;
          result?: { ok: boolean; isError: boolean; content: string };
        };
        const calls = (await store.listRecords(query))
          .filter((rec) => rec.kind === "transcript")
          .flatMap((t) => (t.body as { entries: Entry[] }).entries)
          .filter((e) => e.kind === "tool-call");
        expect(calls).toHaveLength(1);
        expect(calls[0]).toMatchObject({
          name: "profile.run-tests",
          result: { ok: true, isError: true },
        });
        expect(calls[0]?.result?.content).toContain("not ok 2 - collapses repeated separators");
      } finally {
        await store.close();
      }
    });
  },
);
