// A task pack whose one plan makes three mutations (src/a.txt, src/b.txt, src/c.txt each say
// `fixed`), each approved by the operator (`hil: each-mutation`), with a check that passes once all
// three do; its workspace is a git repository. For the tests of who approved what.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./cli.js";

export const STEPS = ["fix-a", "fix-b", "fix-c"] as const;
export const RESULT_SUMMARY = "Three files say fixed. Each was approved on its own.";

const IDENTITY = {
  GIT_AUTHOR_NAME: "Dev",
  GIT_AUTHOR_EMAIL: "dev@example.org",
  GIT_COMMITTER_NAME: "Dev",
  GIT_COMMITTER_EMAIL: "dev@example.org",
};

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, ...IDENTITY } });

function turn(type: string, payload: unknown): Record<string, unknown> {
  return {
    kind: "message",
    summary: type,
    tool_calls: [],
    message: { type, payload_json: JSON.stringify(payload), paper_ref: null },
  };
}

/**
 * Writes the workspace (a git repository with one commit), the pack and the scripted models under
 * `dir`; returns the pack file, the workspace and the `--model` flags.
 */
export function writeThreeStepPack(dir: string): {
  pack: string;
  workspace: string;
  models: string[];
} {
  const ws = path.join(dir, "workspace");
  mkdirSync(path.join(ws, "src"), { recursive: true });
  for (const f of ["a", "b", "c"]) writeFileSync(path.join(ws, `src/${f}.txt`), "broken\n");
  git(ws, "init", "-q", "-b", "main");
  git(ws, "add", "-A");
  git(ws, "commit", "-qm", "three broken files");
  const agents = path.join(repoRoot, "examples/agents");
  const pack = path.join(dir, "task-pack.json");
  writeFileSync(
    pack,
    JSON.stringify({
      schema: "warrant/task-pack.v1",
      name: "three-steps",
      task: "Make src/a.txt, src/b.txt and src/c.txt say fixed.",
      workspace: ws,
      agents: {
        implementer: path.join(agents, "implementer.json"),
        reviewer: path.join(agents, "reviewer.json"),
        summarizer: path.join(agents, "summarizer.json"),
      },
      commands: {
        "run-tests": {
          effect: "observation",
          argv: [
            "sh",
            "-c",
            "grep -q fixed src/a.txt && grep -q fixed src/b.txt && grep -q fixed src/c.txt",
          ],
          args: { type: "object", additionalProperties: false, properties: {} },
          timeoutMs: 10000,
          maxOutputBytes: 65536,
        },
      },
      patchPolicy: { allow: ["src/**"], maxBytes: 4096 },
      verifier: { timeoutMs: 30000, checks: [{ name: "all-fixed", command: "run-tests" }] },
      hil: "each-mutation",
      admission: "auto",
      limits: {
        "max/passages": 8,
        "max/cycles": 2,
        "max/experiments": 2,
        "max/wall-time-ms": 600000,
      },
    }),
  );
  const scripts: Record<string, unknown[]> = {
    implementer: [
      turn("Plan", {
        hypothesis: "Each file must say fixed.",
        steps: [
          { id: "look", action: "observe", profile: "run-tests" },
          ...STEPS.map((id, i) => ({
            id,
            action: "patch",
            path: `src/${"abc"[i]}.txt`,
            content: "fixed\n",
          })),
        ],
        expected_checks: ["all-fixed"],
      }),
    ],
    reviewer: [turn("Verdict", { decision: "accept", findings: [] })],
    summarizer: [
      turn("Result", { summary: RESULT_SUMMARY, outcome: "verified", evidence: ["all-fixed"] }),
    ],
  };
  const models = Object.entries(scripts).flatMap(([role, turns]) => {
    const file = path.join(dir, `${role}.jsonl`);
    writeFileSync(file, `${turns.map((t) => JSON.stringify(t)).join("\n")}\n`);
    return ["--model", `${role}=scripted:${file}`];
  });
  return { pack, workspace: ws, models };
}
