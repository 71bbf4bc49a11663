// A valid task pack document and a valid plan for it, as fresh copies to mutate per test.

import type { TaskPack } from "../../src/core/taskpack/task-pack.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";

// biome-ignore lint/suspicious/noExplicitAny: tests reach into and mutate the documents freely.
type Doc = Record<string, any>;

export function packDoc(): Doc {
  return {
    schema: "warrant/task-pack.v1",
    name: "fix-failing-test",
    task: "Make the failing test pass without touching the tests.",
    workspace: "workspace",
    agents: {
      implementer: "agents/implementer.json",
      reviewer: "agents/reviewer.json",
      summarizer: "agents/summarizer.json",
    },
    commands: {
      "run-tests": {
        effect: "observation",
        argv: ["node", "--test", "test/"],
        args: { type: "object", additionalProperties: false, properties: {} },
        timeoutMs: 20000,
        maxOutputBytes: 65536,
      },
      "show-file": {
        effect: "observation",
        argv: ["cat", "{file}"],
        args: {
          type: "object",
          required: ["file"],
          properties: { file: { type: "string" } },
          additionalProperties: false,
        },
        timeoutMs: 5000,
        maxOutputBytes: 65536,
      },
      "npm-install": {
        effect: "mutation",
        argv: ["npm", "install", "{pkg}"],
        args: {
          type: "object",
          required: ["pkg"],
          properties: { pkg: { type: "string", pattern: "^[a-z-]+$" } },
          additionalProperties: false,
        },
        timeoutMs: 60000,
        maxOutputBytes: 65536,
      },
      "probe-network": {
        effect: "observation",
        argv: ["node", "probe.js"],
        args: { type: "object", additionalProperties: false, properties: {} },
        timeoutMs: 5000,
        maxOutputBytes: 4096,
      },
    },
    patchPolicy: { allow: ["src/**"], maxBytes: 4096 },
    verifier: {
      timeoutMs: 60000,
      checks: [
        { name: "tests-pass", command: "run-tests" },
        { name: "tests-unchanged", unchanged: ["test/**"] },
        { name: "only-allowed-changed", onlyAllowedChanged: true },
        { name: "network-unreachable", command: "probe-network" },
      ],
    },
    hil: "each-mutation",
    admission: "auto",
    limits: {
      "max/passages": 12,
      "max/cycles": 4,
      "max/experiments": 3,
      "max/wall-time-ms": 600000,
    },
    passage: { maxTurns: 8, maxTokens: 32000, repairs: 2 },
  };
}

export function validPack(doc: Record<string, unknown> = packDoc()): TaskPack {
  const r = validateTaskPack(doc);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

export const SLUGIFY_DIFF = [
  "--- a/src/slugify.js",
  "+++ b/src/slugify.js",
  "@@ -1,3 +1,3 @@",
  " export function slugify(s) {",
  "-  return s.toLowerCase();",
  "+  return s.toLowerCase().replaceAll(' ', '-');",
  " }",
  "",
].join("\n");

export function planDoc(): Doc {
  return {
    hypothesis: "slugify does not replace spaces",
    steps: [
      { id: "s1", action: "observe", profile: "run-tests" },
      { id: "s2", action: "observe", read: ["src/slugify.js"] },
      { id: "s3", action: "patch", path: "src/slugify.js", diff: SLUGIFY_DIFF },
      { id: "s4", action: "command", profile: "npm-install", args: { pkg: "left-pad" } },
      { id: "s5", action: "observe", profile: "show-file", args: { file: "src/slugify.js" } },
    ],
    expected_checks: ["tests-pass"],
  };
}
