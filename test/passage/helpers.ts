// Builders for passage tests: an `add` tool, its in-memory host, and turns that use it; the request
// digest rule computed from scratch.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import type { ConversationEntry, ModelRequest } from "../../src/core/ports/model-provider.js";
import { type ToolHost, toolAnswer, toolFailure } from "../../src/core/ports/tool-host.js";
import {
  createToolRegistry,
  type ToolRegistry,
  type ToolSpec,
} from "../../src/core/turn/tool-registry.js";

export const ADD: ToolSpec = {
  name: "math.add",
  description: "Add two integers",
  inputSchema: {
    type: "object",
    properties: { a: { type: "integer" }, b: { type: "integer" } },
    required: ["a", "b"],
    additionalProperties: false,
  },
  effect: "observation",
};

export function addRegistry(): ToolRegistry {
  const r = createToolRegistry([ADD]);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

export interface RecordingHost extends ToolHost {
  readonly calls: { name: string; args: Record<string, unknown> }[];
}

export function addHost(): RecordingHost {
  const calls: { name: string; args: Record<string, unknown> }[] = [];
  return {
    calls,
    specs: () => [ADD],
    async call(name, args) {
      calls.push({ name, args });
      if (name !== ADD.name) return toolFailure("tool/unknown", `no tool named ${name}`);
      return toolAnswer(String((args.a as number) + (args.b as number)));
    },
  };
}

export function addTurn(a: number, b: number): Record<string, unknown> {
  return {
    kind: "tool_calls",
    summary: `add ${a} and ${b}`,
    tool_calls: [{ name: ADD.name, arguments_json: JSON.stringify({ a, b }) }],
    message: null,
  };
}

export function findingTurn(claim = "the sum is right"): Record<string, unknown> {
  return {
    kind: "message",
    summary: "done",
    tool_calls: [],
    message: {
      type: "Finding",
      payload_json: JSON.stringify({ severity: "info", claim, evidence: [] }),
      paper_ref: null,
    },
  };
}

export const LIMITS = { maxTurns: 20, maxTokens: 1_000_000 } as const;

/** Request k's digest as the rule states it, over each request's whole appended part. */
export function referenceDigests(requests: readonly ModelRequest[]): string[] {
  const sha = (t: string) => `sha256:${createHash("sha256").update(t).digest("base64url")}`;
  const first = requests[0] as ModelRequest;
  let head = sha(
    canonicalize({
      "warrant.passage.request": {
        system: first.system,
        tools: first.tools,
        messageTypes: first.messageTypes,
      },
    }) as string,
  );
  let seen = 0;
  return requests.map((r) => {
    const entries = r.conversation
      .slice(seen, r.length)
      .map((e: ConversationEntry) =>
        e.kind === "model" ? { kind: "model", raw: e.response.raw } : e,
      );
    seen = r.length;
    head = sha(
      `${head}\n${canonicalize({ entries, length: r.length, maxOutputTokens: r.maxOutputTokens })}`,
    );
    return head;
  });
}
