// A task pack around one mutation command (`work`) and an observation `ok` as its verifier, with
// scripted agents whose plan observes src/a.txt and runs the command: for end-to-end runs whose
// subject is what the command does to its environment.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../helpers/cli.js";
import { accept, result, turn } from "../runtime/harness.js";

export interface CommandPackOptions {
  readonly name?: string;
  readonly timeoutMs?: number;
  readonly resources?: Readonly<Record<string, number>>;
  readonly wallTimeMs?: number;
}

/** Writes the pack (and its workspace: src/a.txt) into `dir`; its file. */
export function commandPack(
  dir: string,
  argv: readonly string[],
  opts: CommandPackOptions = {},
): string {
  const workspace = path.join(dir, "workspace");
  mkdirSync(path.join(workspace, "src"), { recursive: true });
  writeFileSync(path.join(workspace, "src/a.txt"), "a\n");
  const agents = path.join(repoRoot, "examples/agents");
  const noArgs = { type: "object", additionalProperties: false, properties: {} };
  const timeoutMs = opts.timeoutMs ?? 60000;
  const file = path.join(dir, "task-pack.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "warrant/task-pack.v1",
      name: opts.name ?? "one-command",
      task: "Run one command.",
      workspace: "workspace",
      agents: {
        implementer: path.join(agents, "implementer.json"),
        reviewer: path.join(agents, "reviewer.json"),
        summarizer: path.join(agents, "summarizer.json"),
      },
      commands: {
        work: { effect: "mutation", argv, args: noArgs, timeoutMs, maxOutputBytes: 4096 },
        ok: {
          effect: "observation",
          argv: ["true"],
          args: noArgs,
          timeoutMs: 5000,
          maxOutputBytes: 1024,
        },
      },
      patchPolicy: { allow: ["src/**"], maxBytes: 4096 },
      verifier: { timeoutMs, checks: [{ name: "ok", command: "ok" }] },
      hil: "none",
      admission: "auto",
      limits: {
        "max/passages": 6,
        "max/cycles": 1,
        "max/experiments": 1,
        "max/wall-time-ms": opts.wallTimeMs ?? 300000,
      },
      ...(opts.resources === undefined ? {} : { resources: opts.resources }),
    }),
  );
  return file;
}

/** `--model` flags for scripted agents: a plan that observes src/a.txt, then runs `work`. */
export function commandModels(dir: string): string[] {
  const plan = {
    hypothesis: "one command does it",
    steps: [
      { id: "look", action: "observe", read: ["src/a.txt"] },
      { id: "work", action: "command", profile: "work" },
    ],
    expected_checks: ["ok"],
  };
  const out: string[] = [];
  for (const [role, turns] of [
    ["implementer", [turn("Plan", plan)]],
    ["reviewer", [accept]],
    ["summarizer", [result]],
  ] as const) {
    const file = path.join(dir, `${role}.jsonl`);
    writeFileSync(file, `${turns.map((t) => JSON.stringify(t)).join("\n")}\n`);
    out.push("--model", `${role}=scripted:${file}`);
  }
  return out;
}
