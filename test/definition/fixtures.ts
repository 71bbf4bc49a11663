// Definitions the tests start from: a minimal valid one and one that exercises every field.
import { blobCid } from "../../src/core/cid/cid.js";
import { collectionCid } from "../../src/core/cid/collection.js";

const enc = new TextEncoder();

export const PROMPT_CID = blobCid(enc.encode("You fix failing tests."));
export const SKILL_CID = collectionCid([
  { name: "SKILL.md", bytes: enc.encode("# Skill\n") },
  { name: ".hidden", bytes: enc.encode("x") },
]);
export const MEMORY_CID = collectionCid([{ name: "notes.md", bytes: enc.encode("notes") }]);
export const HEX64 = "0123456789abcdef".repeat(4);

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Doc = { [k: string]: Json };

export function minimal(): Doc {
  return {
    schema: "viper/agent-definition/v1",
    name: "minimal",
    framework: { name: "warrant" },
    models: [{ provider: "scripted", model: "demo/minimal" }],
  };
}

/** A valid definition that uses every field of the schema, a sub-agent included. */
export function full(): Doc {
  return {
    schema: "viper/agent-definition/v1",
    name: "full-agent",
    version: "1.2.3",
    description: "Exercises every field.",
    framework: { name: "langgraph", packages: { langgraph: "0.2.1", "langchain-core": "0.3.0" } },
    models: [
      {
        provider: "anthropic",
        model: "claude-sonnet",
        settings: {
          betas: ["context-1m-2025-08-07", "interleaved-thinking-2025-05-14"],
          maxTokens: 4096,
          temperature: 0.2,
          topK: 40,
          topP: 0.9,
          stop: ["END"],
          thinking: { type: "enabled", budgetTokens: 2048 },
        },
      },
      {
        provider: "openai",
        model: "gpt-5",
        settings: {
          effort: "low",
          frequencyPenalty: 0.1,
          presencePenalty: -0.1,
          maxCompletionTokens: 1000,
          reasoning: { effort: "medium", summary: "auto" },
          reasoningEffort: "medium",
          seed: -42,
          serviceTier: "default",
          thinking: null,
        },
      },
      { provider: "scripted", model: "fallback", settings: { thinking: { type: "adaptive" } } },
    ],
    prompts: [
      { role: "system", content: "You are careful.", contentCid: null },
      { role: "developer", contentCid: PROMPT_CID },
    ],
    tools: [
      {
        name: "read_file",
        description: "Read a workspace file.",
        inputSchema: {
          type: "object",
          properties: { path: { type: "string" }, limit: { type: "integer", maximum: 1000 } },
          required: ["path"],
          additionalProperties: false,
        },
        sourceHash: `sha256:${HEX64}`,
      },
      { name: "noop", description: "", inputSchema: {} },
    ],
    mcpServers: [
      { name: "files", transport: "stdio", command: "npx", args: ["-y", "server-files", "/srv"] },
      {
        name: "search",
        transport: "sse",
        url: "https://mcp.example.com/sse?max_tokens=5&top_k=3&author=x",
      },
      {
        name: "http",
        transport: "streamable_http",
        url: "http://127.0.0.1:8080/mcp",
        command: null,
      },
    ],
    memory: [
      { path: "/memories/AGENTS.md", backend: "filesystem", writable: false, cid: MEMORY_CID },
      {
        path: "/memories/user/",
        backend: "store",
        writable: true,
        scope: { kind: "namespace", sourceHash: `sha256:${HEX64}` },
      },
      {
        path: "/state/notes",
        backend: "state",
        writable: true,
        scope: { kind: "thread" },
        cid: null,
      },
      {
        path: "/shared/",
        backend: "store",
        writable: true,
        scope: { kind: "shared", sourceHash: null },
      },
    ],
    skills: [{ name: "fix-tests", cid: SKILL_CID }],
    sources: [{ path: "agent.py", sha256: HEX64 }],
    middleware: [
      {
        name: "model-fallback",
        config: {
          fallbacks: [{ "@model": 1 }, { "@model": 2 }],
          retries: 2,
          big: 9007199254740991,
        },
        sourceHash: `sha256:${HEX64}`,
      },
      { name: "summarize", config: { model: { "@model": 0 }, template: "Summarise: {x}" } },
      { name: "plain", sourceHash: null },
    ],
    graph: {
      nodes: ["plan", "act"],
      edges: [
        ["__start__", "plan", false],
        ["plan", "act", true],
        ["act", "__end__", false],
      ],
    },
    guardrails: ["no-secrets"],
    permissions: ["fs:read"],
    extensions: { langgraph: { recursionLimit: 25, nested: [1, 2.5, null, { deep: true }] } },
    subAgents: [
      {
        schema: "viper/agent-definition/v1",
        name: "helper",
        description: "Researches for the parent.",
        framework: { name: "langgraph" },
        models: [{ provider: "openai", model: "gpt-5-mini" }],
        middleware: [{ name: "retry", config: { model: { "@model": 0 } } }],
        tools: [
          {
            name: "read_file",
            description: "Same name, other agent.",
            inputSchema: { type: "object" },
          },
        ],
        graph: { nodes: ["only"] },
        subAgents: [
          {
            schema: "viper/agent-definition/v1",
            name: "leaf",
            framework: { name: "langgraph" },
            models: [{ provider: "openai", model: "gpt-5-nano" }],
          },
        ],
      },
    ],
  };
}

export function text(doc: unknown): string {
  return JSON.stringify(doc, null, 2);
}
