// Shared builders for turn tests: a small registry and turn constructors.
import {
  createToolRegistry,
  type ToolRegistry,
  type ToolSpec,
} from "../../src/core/turn/tool-registry.js";

export const READ_FILE: ToolSpec = {
  name: "workspace.read_file",
  description: "Read a file",
  inputSchema: {
    type: "object",
    properties: { path: { type: "string", minLength: 1 } },
    required: ["path"],
    additionalProperties: false,
  },
  effect: "observation",
};

export const WRITE_FILE: ToolSpec = {
  name: "workspace.write_file",
  description: "Write a file",
  inputSchema: {
    type: "object",
    properties: { path: { type: "string" }, content: { type: "string" } },
    required: ["path", "content"],
  },
  effect: "mutation",
};

export function registry(specs: readonly ToolSpec[] = [READ_FILE, WRITE_FILE]): ToolRegistry {
  const r = createToolRegistry(specs);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

export function callTurn(calls: { name: string; args: unknown }[]): Record<string, unknown> {
  return {
    kind: "tool_calls",
    summary: "look around",
    tool_calls: calls.map((c) => ({
      name: c.name,
      arguments_json: typeof c.args === "string" ? c.args : JSON.stringify(c.args),
    })),
    message: null,
  };
}

export function messageTurn(
  type: string,
  payload: unknown,
  paperRef: string | null = null,
): Record<string, unknown> {
  return {
    kind: "message",
    summary: `a ${type}`,
    tool_calls: [],
    message: {
      type,
      payload_json: typeof payload === "string" ? payload : JSON.stringify(payload),
      paper_ref: paperRef,
    },
  };
}

export const PAYLOADS = {
  Plan: {
    hypothesis: "slugify drops the trailing dash",
    steps: [
      { id: "s1", action: "observe", read: ["src/slugify.js"] },
      { id: "s2", action: "patch", path: "src/slugify.js", diff: "--- a\n+++ b\n" },
      { id: "s3", action: "command", profile: "npm-test", args: { filter: "slugify" } },
    ],
    expected_checks: ["unit-tests"],
  },
  Question: { question: "Which branch?", options: ["main", "dev"] },
  Result: { summary: "fixed", outcome: "verified", evidence: ["corpus-task-pack-execution:x"] },
  Verdict: {
    decision: "accept",
    findings: [{ severity: "low", claim: "minor style", evidence: ["line 3"] }],
  },
  Finding: { severity: "high", claim: "patch breaks unicode", evidence: [] },
  DeadEnd: { reason: "cannot reproduce", tried: ["ran the tests"] },
} as const;
