// A task pack whose check writes only to stderr until src/a.txt says `fixed`, and the scripted
// answers that fail it once (a stale diff that does not apply) before fixing it: for the tests of
// what failures say.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./cli.js";

/** What the check writes to stderr while the file is not fixed. */
export const STDERR = "FAIL: src/a.txt says broken\nexpected: fixed";

/**
 * Writes the workspace and the pack under `dir`; returns the pack file. `hil: "each-mutation"`
 * makes each mutation wait for an operator's approval.
 */
export function writeFailingPack(
  dir: string,
  o: { readonly hil?: "none" | "each-mutation" } = {},
): string {
  const ws = path.join(dir, "workspace");
  mkdirSync(path.join(ws, "src"), { recursive: true });
  writeFileSync(path.join(ws, "src/a.txt"), "broken\n");
  const agents = path.join(repoRoot, "examples/agents");
  const file = path.join(dir, "task-pack.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "warrant/task-pack.v1",
      name: "reasons",
      task: "Make src/a.txt say fixed.",
      workspace: ws,
      agents: {
        implementer: path.join(agents, "implementer.json"),
        reviewer: path.join(agents, "reviewer.json"),
        summarizer: path.join(agents, "summarizer.json"),
      },
      commands: {
        "run-tests": {
          effect: "observation",
          // Writes only to stderr, as `python -m unittest` does.
          argv: [
            "sh",
            "-c",
            `grep -q fixed src/a.txt || { printf '%s\\n' '${STDERR}' >&2; exit 1; }`,
          ],
          args: { type: "object", additionalProperties: false, properties: {} },
          timeoutMs: 10000,
          maxOutputBytes: 65536,
        },
      },
      patchPolicy: { allow: ["src/**"], maxBytes: 4096 },
      verifier: { timeoutMs: 30000, checks: [{ name: "tests-pass", command: "run-tests" }] },
      hil: o.hil ?? "none",
      admission: "auto",
      limits: {
        "max/passages": 12,
        "max/cycles": 4,
        "max/experiments": 3,
        "max/wall-time-ms": 600000,
      },
    }),
  );
  return file;
}

function turn(type: string, payload: unknown): Record<string, unknown> {
  return {
    kind: "message",
    summary: type,
    tool_calls: [],
    message: { type, payload_json: JSON.stringify(payload), paper_ref: null },
  };
}

/** The implementer's first plan: its diff does not apply (the file does not say `wrong`). */
export const STALE_PLAN = turn("Plan", {
  hypothesis: "The file says broken; rewrite its line.",
  steps: [
    { id: "run-tests", action: "observe", profile: "run-tests" },
    {
      id: "stale-diff",
      action: "patch",
      path: "src/a.txt",
      diff: "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-wrong\n+fixed\n",
    },
  ],
  expected_checks: ["tests-pass"],
});

/** The implementer's second plan: the fix. */
export const FIX_PLAN = turn("Plan", {
  hypothesis: "Write the line it must say.",
  steps: [
    { id: "run-tests", action: "observe", profile: "run-tests" },
    { id: "fix", action: "patch", path: "src/a.txt", content: "fixed\n" },
  ],
  expected_checks: ["tests-pass"],
});

export const ACCEPT = turn("Verdict", { decision: "accept", findings: [] });
export const RESULT = turn("Result", { summary: "done", outcome: "verified", evidence: [] });

/** The first plan with its diff's git headers (`diff --git`, `index`) before `---`/`+++`. */
export const STALE_PLAN_GIT_HEADERS = turn("Plan", {
  hypothesis: "The file says broken; rewrite its line.",
  steps: [
    { id: "run-tests", action: "observe", profile: "run-tests" },
    {
      id: "stale-diff",
      action: "patch",
      path: "src/a.txt",
      diff:
        "diff --git a/src/a.txt b/src/a.txt\nindex 1111111..2222222 100644\n" +
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-wrong\n+fixed\n",
    },
  ],
  expected_checks: ["tests-pass"],
});

/**
 * The scripts as files under `dir`, and the `--model` flags naming them; `gitHeaders`: the first
 * plan's diff carries git's headers.
 */
export function writeFailingScripts(
  dir: string,
  o: { readonly gitHeaders?: boolean } = {},
): string[] {
  const scripts: Record<string, unknown[]> = {
    implementer: [o.gitHeaders === true ? STALE_PLAN_GIT_HEADERS : STALE_PLAN, FIX_PLAN],
    reviewer: [ACCEPT, ACCEPT],
    summarizer: [RESULT],
  };
  return Object.entries(scripts).flatMap(([role, turns]) => {
    const file = path.join(dir, `${role}.jsonl`);
    writeFileSync(file, `${turns.map((t) => JSON.stringify(t)).join("\n")}\n`);
    return ["--model", `${role}=scripted:${file}`];
  });
}
