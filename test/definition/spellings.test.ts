// Alternate spellings (docs/spec/definitions.md): one-key-map enums and required-field arrays read as the usual form.
import { describe, expect, it } from "vitest";
import {
  ARRAY_SPELLINGS,
  listItemSpelling,
  MAX_SUBAGENT_DEPTH,
  SPELLED_OBJECT,
} from "../../src/core/definition/spellings.js";
import { validateDefinition } from "../../src/core/definition/validate.js";
import {
  type Doc,
  full,
  type Json,
  MEMORY_CID,
  minimal,
  PROMPT_CID,
  SKILL_CID,
  text,
} from "./fixtures.js";

function ok(doc: Doc) {
  const r = validateDefinition(text(doc));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

function alternate(): Doc {
  return {
    schema: "viper/agent-definition/v1",
    name: "alt",
    framework: ["warrant"],
    models: [
      ["scripted", "a"],
      { provider: "anthropic", model: "b", settings: { thinking: ["disabled"] } },
    ],
    prompts: [[{ system: null }], { role: { developer: null }, content: "x" }],
    skills: [["s", SKILL_CID]],
    sources: [["a.py", "0".repeat(64)]],
    tools: [["t", "d", { type: "object" }]],
    mcpServers: [["m", { stdio: null }]],
    memory: [
      ["/m", "filesystem", false],
      { path: "/w", backend: "store", writable: true, scope: [{ namespace: null }] },
      { path: "/v", backend: "store", writable: true, scope: { kind: { thread: null } } },
    ],
    subAgents: [{ ...minimal(), framework: ["inner"], models: [["scripted", "c"]] }],
  };
}

function usual(): Doc {
  return {
    schema: "viper/agent-definition/v1",
    name: "alt",
    framework: { name: "warrant" },
    models: [
      { provider: "scripted", model: "a" },
      { provider: "anthropic", model: "b", settings: { thinking: { type: "disabled" } } },
    ],
    prompts: [{ role: "system" }, { role: "developer", content: "x" }],
    skills: [{ name: "s", cid: SKILL_CID }],
    sources: [{ path: "a.py", sha256: "0".repeat(64) }],
    tools: [{ name: "t", description: "d", inputSchema: { type: "object" } }],
    mcpServers: [{ name: "m", transport: "stdio" }],
    memory: [
      { path: "/m", backend: "filesystem", writable: false },
      { path: "/w", backend: "store", writable: true, scope: { kind: "namespace" } },
      { path: "/v", backend: "store", writable: true, scope: { kind: "thread" } },
    ],
    subAgents: [
      {
        ...minimal(),
        framework: { name: "inner" },
        models: [{ provider: "scripted", model: "c" }],
      },
    ],
  };
}

describe("alternate spellings", () => {
  it("are stored in the usual spelling and get the usual form's ID", () => {
    // The array spelling holds only required fields, so prompt, server and memory stay incomplete:
    // refused by their rules, at the author's pointers, proving the rewrite ran first.
    const r = validateDefinition(text(alternate()));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["definition/prompt-source", "/prompts/0"],
      ["definition/mcp-transport", "/mcpServers/0"],
      ["definition/memory-cid", "/memory/0"],
    ]);
  });

  it("give one ID for two spellings of the same definition", () => {
    const u = usual();
    (u.prompts as Json[])[0] = { role: "system", contentCid: PROMPT_CID };
    (u.mcpServers as Json[])[0] = { name: "m", transport: { stdio: null }, command: "node" };
    (u.memory as Json[])[0] = {
      path: "/m",
      backend: "filesystem",
      writable: false,
      cid: MEMORY_CID,
    };
    const a = alternate();
    (a.prompts as Json[])[0] = { role: { system: null }, contentCid: PROMPT_CID };
    (a.mcpServers as Json[])[0] = { name: "m", transport: { stdio: null }, command: "node" };
    (a.memory as Json[])[0] = {
      path: "/m",
      backend: "filesystem",
      writable: false,
      cid: MEMORY_CID,
    };
    const x = ok(u);
    const y = ok(a);
    expect(y.id).toBe(x.id);
    expect(y.definition).toEqual(x.definition);
    expect(y.definition.models[0] as object).toEqual({ provider: "scripted", model: "a" });
    expect(y.definition.memory?.[1]?.scope).toEqual({ kind: "namespace" });
  });

  it.each([
    [
      "a Model array with one field",
      (d: Doc) => {
        (d.models as Json[])[0] = ["scripted"];
      },
      "/models/0",
    ],
    [
      "a Model array with an optional field",
      (d: Doc) => {
        (d.models as Json[])[0] = ["scripted", "a", {}];
      },
      "/models/0",
    ],
    [
      "a Framework array with two fields",
      (d: Doc) => {
        d.framework = ["a", {}];
      },
      "/framework",
    ],
    [
      "a Prompt array with content",
      (d: Doc) => {
        d.prompts = [["system", "hello"]];
      },
      "/prompts/0",
    ],
    [
      "a Tool array in another length",
      (d: Doc) => {
        d.tools = [["t", "d"]];
      },
      "/tools/0",
    ],
    [
      "Memory with a cid as an array",
      (d: Doc) => {
        d.memory = [["/m", "fs", false, MEMORY_CID]];
      },
      "/memory/0",
    ],
    [
      "settings as an array",
      (d: Doc) => {
        (d.models as Json[])[0] = { provider: "p", model: "m", settings: [] };
      },
      "/models/0/settings",
    ],
    [
      "reasoning as an array",
      (d: Doc) => {
        (d.models as Json[])[0] = { provider: "p", model: "m", settings: { reasoning: ["low"] } };
      },
      "/models/0/settings/reasoning",
    ],
    [
      "middleware as an array",
      (d: Doc) => {
        d.middleware = [["retry"]];
      },
      "/middleware/0",
    ],
    [
      "a graph as an array",
      (d: Doc) => {
        d.graph = [[], []];
      },
      "/graph",
    ],
    [
      "a sub-agent as an array",
      (d: Doc) => {
        d.subAgents = [["x"]];
      },
      "/subAgents/0",
    ],
    [
      "a sub-agent's Model array with one field",
      (d: Doc) => {
        d.subAgents = [{ ...minimal(), models: [["p"]] }];
      },
      "/subAgents/0/models/0",
    ],
  ])("refuse %s as definition/ambiguous-array", (_what, mutate, path) => {
    const d = minimal();
    mutate(d);
    const r = validateDefinition(text(d));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["definition/ambiguous-array", path],
    ]);
  });

  it("leave a one-key map that is not an enum spelling to the schema", () => {
    const d = full();
    ((d.mcpServers as Json[])[0] as { [k: string]: Json }).transport = { stdio: 1 };
    const r = validateDefinition(text(d));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["definition/schema", "/mcpServers/0/transport"],
    ]);
  });

  it("map an enum spelling's unknown value to a schema error on the value", () => {
    const d = minimal();
    d.prompts = [{ role: { user: null }, content: "x" }];
    const r = validateDefinition(text(d));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["definition/schema", "/prompts/0/role"],
    ]);
  });
});

describe("spelled objects", () => {
  it("are built with their fields in ARRAY_SPELLINGS order, from any offset", () => {
    for (const [what, fields] of Object.entries(ARRAY_SPELLINGS)) {
      const make = SPELLED_OBJECT[what as keyof typeof ARRAY_SPELLINGS];
      const values = ["before", ...fields.map((f) => `v-${f}`), "after"];
      expect(Object.entries(make(values, 1)), what).toEqual(fields.map((f) => [f, `v-${f}`]));
    }
  });

  it("are made by the reader only for the items of an agent's struct lists, of their length", () => {
    const sub = (depth: number) => Array.from({ length: depth }, (_, i) => ["subAgents", i]).flat();
    expect(listItemSpelling(["models", 0], 2)?.keys).toEqual(["provider", "model"]);
    expect(listItemSpelling(["tools", 7], 3)?.keys).toEqual(["name", "description", "inputSchema"]);
    expect(listItemSpelling(["prompts", 0], 1)?.keys).toEqual(["role"]);
    expect(listItemSpelling([...sub(MAX_SUBAGENT_DEPTH), "memory", 1], 3)?.keys).toEqual([
      "path",
      "backend",
      "writable",
    ]);
    expect(listItemSpelling([...sub(MAX_SUBAGENT_DEPTH + 1), "models", 0], 2)).toBeUndefined();
    expect(listItemSpelling(["models", 0], 3)).toBeUndefined();
    expect(listItemSpelling(["models", 0, "settings"], 2)).toBeUndefined();
    expect(listItemSpelling(["framework"], 1)).toBeUndefined();
    expect(listItemSpelling(["extensions", "models", 0], 2)).toBeUndefined();
    expect(listItemSpelling(["subAgents", "x", "models", 0], 2)).toBeUndefined();
    expect(listItemSpelling(["middleware", 0], 1)).toBeUndefined();
    expect(listItemSpelling(["constructor", 0], 1)).toBeUndefined();
  });
});
