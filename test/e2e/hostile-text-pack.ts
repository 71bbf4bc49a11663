// A task pack and scripted models whose text is hostile to a terminal: the plan's hypothesis, a
// file's new content, a step's name, a reviewer's finding and the Result hold escape sequences; a
// command prints them; another names a file with them. For the tests that read what the CLI prints.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { repoRoot } from "../helpers/cli.js";
import { turn } from "../runtime/harness.js";

/** Retitle the window (OSC … BEL), erase the line, a carriage return, an 8-bit CSI (C1). */
export const HOSTILE = "A\x1b]0;pwned\x07B\x1b[2KC\rD\x9bE";
/** The same text as a terminal-safe rendering shows it. */
export const SHOWN = "A\\x1b]0;pwned\\x07B\\x1b[2KC\\rD\\x9bE";

/** The name of the step whose name is hostile (a mutation command). */
export const HOSTILE_STEP = `rename${HOSTILE}`;

const js = (s: string) => JSON.stringify(s);

/** Writes the pack (and its workspace) under `dir`; returns the pack's file. */
export function hostilePack(dir: string): string {
  const workspace = path.join(dir, "workspace");
  mkdirSync(path.join(workspace, "src"), { recursive: true });
  writeFileSync(path.join(workspace, "src/a.txt"), "old\n");
  const agents = path.join(repoRoot, "examples/agents");
  const noArgs = { type: "object", additionalProperties: false, properties: {} };
  const profile = (effect: string, source: string) => ({
    effect,
    argv: ["node", "-e", source],
    args: noArgs,
    timeoutMs: 20000,
    maxOutputBytes: 4096,
  });
  const file = path.join(dir, "task-pack.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "warrant/task-pack.v1",
      name: "hostile-text",
      task: "Print and name things a terminal would act on.",
      workspace: "workspace",
      agents: {
        implementer: path.join(agents, "implementer.json"),
        reviewer: path.join(agents, "reviewer.json"),
        summarizer: path.join(agents, "summarizer.json"),
      },
      commands: {
        noisy: profile("observation", `process.stdout.write(${js(`out ${HOSTILE}\n`)})`),
        "odd-name": profile(
          "mutation",
          `require("fs").writeFileSync(${js(`src/odd-${HOSTILE}.txt`)}, "x\\n")`,
        ),
        shout: profile("observation", `process.stdout.write(${js(`check ${HOSTILE}\n`)})`),
      },
      patchPolicy: { allow: ["src/**"], maxBytes: 4096 },
      verifier: {
        timeoutMs: 60000,
        checks: [
          { name: "shout", command: "shout" },
          { name: "only-allowed-changed", onlyAllowedChanged: true },
        ],
      },
      hil: "each-mutation",
      admission: "auto",
      limits: {
        "max/passages": 6,
        "max/cycles": 2,
        "max/experiments": 2,
        "max/wall-time-ms": 600000,
      },
    }),
  );
  return file;
}

const plan = {
  hypothesis: `the file is old ${HOSTILE}\noutcome: forged`,
  steps: [
    { id: "look", action: "observe", profile: "noisy" },
    { id: "fix", action: "patch", path: "src/a.txt", content: `new ${HOSTILE}\n` },
    { id: HOSTILE_STEP, action: "command", profile: "odd-name" },
  ],
  expected_checks: ["shout"],
};

function script(dir: string, role: string, turns: readonly unknown[]): string[] {
  const file = path.join(dir, `${role}.jsonl`);
  writeFileSync(file, `${turns.map((t) => JSON.stringify(t)).join("\n")}\n`);
  return ["--model", `${role}=scripted:${file}`];
}

/** `--model` flags for the three roles, their scripts written under `dir`. */
export function hostileModels(dir: string): string[] {
  return [
    ...script(dir, "implementer", [turn("Plan", plan)]),
    ...script(dir, "reviewer", [
      turn("Verdict", {
        decision: "accept",
        findings: [{ severity: "info", claim: `fine ${HOSTILE}`, evidence: [] }],
      }),
    ]),
    ...script(dir, "summarizer", [
      turn("Result", { summary: `done ${HOSTILE}`, outcome: "verified", evidence: [] }),
    ]),
  ];
}

/**
 * Text the CLI printed holds none of the hostile sequences raw: no ESC, BEL, C1 or DEL at all, and
 * no carriage return (`allowed` lists the CLI's own sequences to take out first).
 */
export function expectNoRawControls(text: string, what: string, allowed: readonly string[] = []) {
  let rest = text;
  for (const a of allowed) rest = rest.replaceAll(a, "");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters.
  const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.exec(rest);
  expect(
    raw === null ? undefined : JSON.stringify(rest.slice(raw.index - 40, raw.index + 40)),
    what,
  ).toBeUndefined();
}
