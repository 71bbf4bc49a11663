// Each semantic rule of docs/spec/definitions.md (and the schema/spelling refusals) broken alone: exactly that code.
import { describe, expect, it } from "vitest";
import { validateDefinition, validateDefinitionValue } from "../../src/core/definition/validate.js";
import {
  type Doc,
  full,
  HEX64,
  type Json,
  MEMORY_CID,
  minimal,
  PROMPT_CID,
  text,
} from "./fixtures.js";

type Obj = { [k: string]: Json };
const at = (d: Doc, ...keys: Array<string | number>): Obj =>
  keys.reduce<Json>((v, k) => (v as Record<string | number, Json>)[k] as Json, d) as Obj;

function codes(doc: Doc): string[] {
  const r = validateDefinition(text(doc));
  return r.ok ? [] : r.errors.map((e) => e.code);
}

function onlyCode(doc: Doc, code: string): void {
  const r = validateDefinition(text(doc));
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.errors.map((e) => e.code)).toEqual(r.errors.map(() => code));
  for (const e of r.errors) {
    expect(typeof e.path).toBe("string");
    expect(e.message.length).toBeGreaterThan(0);
    expect(e.line).toBeGreaterThan(0);
  }
}

interface Case {
  readonly what: string;
  readonly code: string;
  readonly path?: string;
  readonly mutate: (d: Doc) => void;
}

// A blob CID the bafkr4i regex admits whose digest length is wrong: the 8th character carries the
// top bits of the length byte, which must be 0x20.
const REGEX_ONLY_CID = `bafkr4iz${"a".repeat(50)}a`;

const cases: Case[] = [
  // 1
  {
    what: "a prompt with both content and contentCid",
    code: "definition/prompt-source",
    path: "/prompts/0",
    mutate: (d) => {
      at(d, "prompts", 0).contentCid = PROMPT_CID;
    },
  },
  {
    what: "a prompt with neither content nor contentCid",
    code: "definition/prompt-source",
    path: "/prompts/1",
    mutate: (d) => {
      delete at(d, "prompts", 1).contentCid;
    },
  },
  // 2
  {
    what: "prompt content over 16 384 UTF-8 bytes but under 16 384 characters",
    code: "definition/too-long",
    path: "/prompts/0/content",
    mutate: (d) => {
      at(d, "prompts", 0).content = "ą".repeat(8193);
    },
  },
  {
    what: "prompt content over 16 384 characters",
    code: "definition/too-long",
    mutate: (d) => {
      at(d, "prompts", 0).content = "a".repeat(16385);
    },
  },
  {
    what: "a framework name of 64 characters but 128 bytes",
    code: "definition/too-long",
    path: "/framework/name",
    mutate: (d) => {
      at(d, "framework").name = "ł".repeat(64);
    },
  },
  {
    what: "a version over 64 bytes",
    code: "definition/too-long",
    path: "/version",
    mutate: (d) => {
      d.version = "v".repeat(65);
    },
  },
  {
    what: "an MCP server name over 64 bytes",
    code: "definition/too-long",
    mutate: (d) => {
      at(d, "mcpServers", 0).name = "€".repeat(22);
    },
  },
  {
    what: "a memory backend over 64 bytes",
    code: "definition/too-long",
    mutate: (d) => {
      at(d, "memory", 0).backend = "b".repeat(65);
    },
  },
  {
    what: "a beta over 64 bytes",
    code: "definition/too-long",
    mutate: (d) => {
      at(d, "models", 0, "settings").betas = ["a".repeat(65)];
    },
  },
  // 3
  {
    what: "a blank description (U+0085 and U+3000 are white space in Rust)",
    code: "definition/blank",
    path: "/description",
    mutate: (d) => {
      d.description = "\u0085\u3000 \t";
    },
  },
  {
    what: "an empty version",
    code: "definition/blank",
    path: "/version",
    mutate: (d) => {
      d.version = "";
    },
  },
  {
    what: "a blank tool name",
    code: "definition/blank",
    mutate: (d) => {
      at(d, "tools", 0).name = "\u2028";
    },
  },
  {
    what: "a blank guardrail",
    code: "definition/blank",
    mutate: (d) => {
      d.guardrails = ["\u00a0"];
    },
  },
  // 4
  {
    what: "read-only memory without a cid",
    code: "definition/memory-cid",
    path: "/memory/0",
    mutate: (d) => {
      delete at(d, "memory", 0).cid;
    },
  },
  {
    what: "read-only memory with a scope",
    code: "definition/memory-cid",
    mutate: (d) => {
      at(d, "memory", 0).scope = { kind: "shared" };
    },
  },
  {
    what: "writable memory without a scope",
    code: "definition/memory-cid",
    mutate: (d) => {
      delete at(d, "memory", 2).scope;
    },
  },
  {
    what: "writable memory with a cid",
    code: "definition/memory-cid",
    mutate: (d) => {
      at(d, "memory", 2).cid = MEMORY_CID;
    },
  },
  // 5
  {
    what: "a sourceHash on a thread scope",
    code: "definition/memory-source-hash",
    path: "/memory/2/scope/sourceHash",
    mutate: (d) => {
      at(d, "memory", 2, "scope").sourceHash = `sha256:${HEX64}`;
    },
  },
  // 6
  {
    what: "the same model twice",
    code: "definition/duplicate-model",
    path: "/models/3",
    mutate: (d) => {
      (d.models as Json[]).push(structuredClone((d.models as Json[])[0] as Json));
    },
  },
  {
    what: "the same model twice with settings in another key order",
    code: "definition/duplicate-model",
    mutate: (d) => {
      (d.models as Json[]).push({
        settings: { thinking: { type: "adaptive" } },
        model: "fallback",
        provider: "scripted",
      });
    },
  },
  // 7
  {
    what: "a model reference past the end of models",
    code: "definition/model-ref",
    path: "/middleware/0/config/fallbacks/1/@model",
    mutate: (d) => {
      at(d, "middleware", 0, "config", "fallbacks", 1)["@model"] = 3;
    },
  },
  {
    what: "a model reference with a second key",
    code: "definition/model-ref",
    mutate: (d) => {
      at(d, "middleware", 1, "config", "model").name = "x";
    },
  },
  {
    what: "a negative, fractional or string model reference",
    code: "definition/model-ref",
    mutate: (d) => {
      at(d, "middleware", 0, "config", "fallbacks", 0)["@model"] = -1;
      at(d, "middleware", 0, "config", "fallbacks", 1)["@model"] = 0.5;
      at(d, "middleware", 1, "config", "model")["@model"] = "0";
    },
  },
  {
    what: "a sub-agent's model reference counts the sub-agent's own models",
    code: "definition/model-ref",
    path: "/subAgents/0/middleware/0/config/model/@model",
    mutate: (d) => {
      at(d, "subAgents", 0, "middleware", 0, "config", "model")["@model"] = 1;
    },
  },
  // 8
  {
    what: "betas out of order",
    code: "definition/betas-order",
    path: "/models/0/settings/betas/1",
    mutate: (d) => {
      at(d, "models", 0, "settings").betas = ["zeta", "alpha"];
    },
  },
  {
    what: "a duplicate beta",
    code: "definition/betas-order",
    mutate: (d) => {
      at(d, "models", 0, "settings").betas = ["alpha", "alpha"];
    },
  },
  // 9
  {
    what: "an unknown thinking type",
    code: "definition/thinking",
    path: "/models/0/settings/thinking/type",
    mutate: (d) => {
      at(d, "models", 0, "settings", "thinking").type = "on";
    },
  },
  {
    what: "budgetTokens with adaptive thinking",
    code: "definition/thinking",
    path: "/models/2/settings/thinking/budgetTokens",
    mutate: (d) => {
      at(d, "models", 2, "settings", "thinking").budgetTokens = 100;
    },
  },
  // 10
  {
    what: "stdio without a command",
    code: "definition/mcp-transport",
    mutate: (d) => {
      delete at(d, "mcpServers", 0).command;
    },
  },
  {
    what: "stdio with a url",
    code: "definition/mcp-transport",
    path: "/mcpServers/0/url",
    mutate: (d) => {
      at(d, "mcpServers", 0).url = "https://example.com/";
    },
  },
  {
    what: "sse without a url",
    code: "definition/mcp-transport",
    mutate: (d) => {
      delete at(d, "mcpServers", 1).url;
    },
  },
  {
    what: "streamable_http with a command",
    code: "definition/mcp-transport",
    mutate: (d) => {
      at(d, "mcpServers", 2).command = "node";
    },
  },
  {
    what: "sse with args",
    code: "definition/mcp-transport",
    mutate: (d) => {
      at(d, "mcpServers", 1).args = ["--x"];
    },
  },
  // 11
  {
    what: "a port above 65535 (the schema pattern admits it)",
    code: "definition/url",
    path: "/mcpServers/2/url",
    mutate: (d) => {
      at(d, "mcpServers", 2).url = "http://127.0.0.1:70000/mcp";
    },
  },
  {
    what: "a host the WHATWG parser refuses",
    code: "definition/url",
    mutate: (d) => {
      at(d, "mcpServers", 2).url = "http://exa%mple.com/";
    },
  },
  // 12
  {
    what: "an api_key query parameter",
    code: "definition/credential",
    path: "/mcpServers/1/url",
    mutate: (d) => {
      at(d, "mcpServers", 1).url = "https://mcp.example.com/sse?API_KEY=abc";
    },
  },
  {
    what: "a query parameter ending _token",
    code: "definition/credential",
    mutate: (d) => {
      at(d, "mcpServers", 1).url = "https://mcp.example.com/sse?refresh_token=abc&max_tokens=1";
    },
  },
  {
    what: "user-info in a url",
    code: "definition/credential",
    mutate: (d) => {
      at(d, "mcpServers", 1).url = "https://alice:s3cret@mcp.example.com/sse";
    },
  },
  {
    what: "user-info in an MCP argument",
    code: "definition/credential",
    path: "/mcpServers/0/args/1",
    mutate: (d) => {
      at(d, "mcpServers", 0).args = ["--db", "postgres://app:hunter2@db.internal/app"];
    },
  },
  {
    what: "a secret query parameter in an MCP command",
    code: "definition/credential",
    path: "/mcpServers/0/command",
    mutate: (d) => {
      at(d, "mcpServers", 0).command = "curl https://x.example/?client_secret=1";
    },
  },
  // 14
  {
    what: "a tool inputSchema that does not compile",
    code: "definition/input-schema",
    path: "/tools/0/inputSchema",
    mutate: (d) => {
      at(d, "tools", 0).inputSchema = { type: "object", properties: { x: { type: "strng" } } };
    },
  },
  {
    what: "a tool inputSchema with an unresolvable $ref",
    code: "definition/input-schema",
    mutate: (d) => {
      at(d, "tools", 0).inputSchema = { $ref: "#/$defs/missing" };
    },
  },
  {
    what: "a tool inputSchema whose root is not an object",
    code: "definition/input-schema",
    mutate: (d) => {
      at(d, "tools", 1).inputSchema = { type: "string" };
    },
  },
  // 15
  {
    what: "an edge to an undeclared node",
    code: "definition/graph-edge",
    path: "/graph/edges/1/1",
    mutate: (d) => {
      (at(d, "graph").edges as Json[][])[1] = ["plan", "nowhere", true];
    },
  },
  {
    what: "an edge in a graph without nodes",
    code: "definition/graph-edge",
    mutate: (d) => {
      d.graph = { edges: [["__start__", "x", false]] };
    },
  },
  // 16
  {
    what: "two tools with one name",
    code: "definition/duplicate-name",
    path: "/tools/1/name",
    mutate: (d) => {
      at(d, "tools", 1).name = "read_file";
    },
  },
  {
    what: "two skills with one name",
    code: "definition/duplicate-name",
    mutate: (d) => {
      (d.skills as Json[]).push(structuredClone((d.skills as Json[])[0] as Json));
    },
  },
  {
    what: "two MCP servers with one name",
    code: "definition/duplicate-name",
    mutate: (d) => {
      at(d, "mcpServers", 2).name = "files";
    },
  },
  {
    what: "two sub-agents with one name",
    code: "definition/duplicate-name",
    path: "/subAgents/1/name",
    mutate: (d) => {
      (d.subAgents as Json[]).push({ ...minimal(), name: "helper" });
    },
  },
  // 17
  {
    what: "a contentCid the regex admits but that does not decode",
    code: "definition/cid",
    path: "/prompts/1/contentCid",
    mutate: (d) => {
      at(d, "prompts", 1).contentCid = REGEX_ONLY_CID;
    },
  },
];

describe("semantic rules: each broken alone yields exactly its code", () => {
  it("the base documents are valid", () => {
    expect(codes(full())).toEqual([]);
    expect(codes(minimal())).toEqual([]);
  });

  it.each(cases)("$code: $what", ({ code, path, mutate }) => {
    const d = full();
    mutate(d);
    onlyCode(d, code);
    if (path !== undefined) {
      const r = validateDefinition(text(d));
      expect(r.ok ? [] : r.errors.map((e) => e.path)).toContain(path);
    }
  });

  it("every rule of docs/spec/definitions.md has a case", () => {
    const ruleCodes = [
      "prompt-source",
      "too-long",
      "blank",
      "memory-cid",
      "memory-source-hash",
      "duplicate-model",
      "model-ref",
      "betas-order",
      "thinking",
      "mcp-transport",
      "url",
      "credential",
      "input-schema",
      "graph-edge",
      "duplicate-name",
      "cid",
    ].map((c) => `definition/${c}`);
    const covered = new Set(cases.map((c) => c.code));
    for (const c of ruleCodes) expect(covered.has(c)).toBe(true);
  });

  it("definition/safe-integer: an unsafe integer in extensions of a value built in code", () => {
    const d = full() as Record<string, unknown>;
    d.extensions = { x: { counter: 2 ** 60 } };
    const r = validateDefinitionValue(d);
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["definition/safe-integer", "/extensions/x/counter"],
    ]);
  });

  it("definition/safe-integer: in middleware config and tool input schemas too", () => {
    const d = full() as Record<string, unknown>;
    (d.middleware as Array<Record<string, unknown>>)[2] = {
      name: "limit",
      config: { max: -(2 ** 54) },
    };
    (d.tools as Array<Record<string, unknown>>)[1] = {
      name: "noop",
      description: "",
      inputSchema: { type: "object", properties: { n: { maximum: 2 ** 53 } } },
    };
    const r = validateDefinitionValue(d);
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["definition/safe-integer", "/middleware/2/config/max"],
      ["definition/safe-integer", "/tools/1/inputSchema/properties/n/maximum"],
    ]);
  });

  it("a value built in code is refused an unsafe integral number outside the free-form areas", () => {
    const d = full() as Record<string, unknown>;
    const models = d.models as Array<{ settings: Record<string, unknown> }>;
    (models[0] as { settings: Record<string, unknown> }).settings.temperature = 1e300;
    const r = validateDefinitionValue(d);
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["definition/unsafe-integer", "/models/0/settings/temperature"],
    ]);
    // Read from text the same number is refused by the reader.
    const t = validateDefinition(JSON.stringify(d));
    expect(t.ok ? [] : t.errors.map((e) => e.code)).toEqual(["definition/unsafe-integer"]);
  });

  it("a value built in code with NaN, a function or a lone surrogate is refused", () => {
    const withNaN = { ...full(), extensions: { x: Number.NaN } };
    expect(validateDefinitionValue(withNaN).ok).toBe(false);
    const withFn = { ...full(), extensions: { f: () => 1 } };
    expect(validateDefinitionValue(withFn)).toMatchObject({
      ok: false,
      errors: [{ code: "definition/json" }],
    });
    const lone = { ...full(), description: "a\ud800" };
    expect(validateDefinitionValue(lone)).toMatchObject({
      ok: false,
      errors: [{ code: "definition/lone-surrogate", path: "/description" }],
    });
  });

  it("definition/depth: sub-agents nest at most 8 deep", () => {
    const nest = (levels: number): Doc => {
      const root = minimal();
      let cur = root;
      for (let i = 1; i <= levels; i++) {
        const sub = { ...minimal(), name: `level-${i}` };
        cur.subAgents = [sub];
        cur = sub;
      }
      return root;
    };
    expect(codes(nest(8))).toEqual([]);
    onlyCode(nest(9), "definition/depth");
    const r = validateDefinition(text(nest(9)));
    expect(r.ok ? "" : r.errors[0]?.path).toBe(`${"/subAgents/0".repeat(9)}`);
  });

  it("rules apply to each sub-agent on its own", () => {
    const d = full();
    at(d, "subAgents", 0, "subAgents", 0).prompts = [{ role: "system" }];
    const r = validateDefinition(text(d));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["definition/prompt-source", "/subAgents/0/subAgents/0/prompts/0"],
    ]);
  });

  it("U+FEFF and U+200B are not white space in Rust's sense: not blank", () => {
    const d = full();
    d.description = "\ufeff";
    at(d, "tools", 0).name = "\u200b";
    expect(codes(d)).toEqual([]);
  });

  it("names that merely contain key or token are not secrets", () => {
    const d = full();
    at(d, "mcpServers", 1).url =
      "https://x.example/?max_tokens=1&top_k=2&author=a&keyboard=b&monkey=c";
    at(d, "mcpServers", 0).args = ["https://x.example/?tokens=1", "not a url: token=abc"];
    expect(codes(d)).toEqual([]);
  });

  it("one error per violation, at the second duplicate only", () => {
    const d = full();
    at(d, "tools", 1).name = "read_file";
    (d.tools as Json[]).push({ name: "read_file", description: "", inputSchema: {} });
    const r = validateDefinition(text(d));
    expect(r.ok ? [] : r.errors.map((e) => e.path)).toEqual(["/tools/1/name", "/tools/2/name"]);
  });
});

describe("schema refusals", () => {
  it("reports one definition/schema error per violation with its path and keyword", () => {
    const d = minimal();
    d.unknown = 1;
    delete d.framework;
    at(d, "models", 0).provider = 7;
    const r = validateDefinition(text(d));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // In document order: the root first, then as written.
    expect(r.errors.map((e) => [e.code, e.path, e.detail?.keyword])).toEqual([
      ["definition/schema", "", "required"],
      ["definition/schema", "/models/0/provider", "type"],
      ["definition/schema", "/unknown", "additionalProperties"],
    ]);
  });

  it("an enum outside its values is one error listing the allowed ones", () => {
    const d = full();
    at(d, "memory", 1, "scope").kind = "global";
    const r = validateDefinition(text(d));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path, e.message])).toEqual([
      [
        "definition/schema",
        "/memory/1/scope/kind",
        'must be one of "shared", "namespace", "thread" (oneOf)',
      ],
    ]);
  });

  it("a nullable struct that is neither reports the struct's own violation once", () => {
    const d = full();
    at(d, "memory", 1).scope = 5;
    at(d, "models", 0, "settings").thinking = { budgetTokens: 1 };
    const r = validateDefinition(text(d));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path, e.detail?.keyword])).toEqual([
      ["definition/schema", "/models/0/settings/thinking", "required"],
      ["definition/schema", "/memory/1/scope", "type"],
    ]);
  });

  it("a CID that fails the schema pattern is a schema error", () => {
    const d = full();
    at(d, "skills", 0).cid = "bafkqabc";
    expect(codes(d)).toEqual(["definition/schema"]);
  });

  it("a url the schema pattern refuses is explained by the URL rules when they can", () => {
    const d = full();
    at(d, "mcpServers", 1).url = "ftp://example.com/";
    expect(codes(d)).toEqual(["definition/url"]);
    at(d, "mcpServers", 1).url = "https://user:pw@example.com/";
    expect(codes(d)).toEqual(["definition/credential"]);
    at(d, "mcpServers", 1).url = "https://exa mple.com/";
    expect(codes(d)).toEqual(["definition/url"]);
    at(d, "mcpServers", 1).url = "https://example.com/\u0085";
    expect(codes(d)).toEqual(["definition/schema"]);
  });

  it("semantic rules wait until the schema is satisfied", () => {
    const d = full();
    d.name = "Bad Name";
    at(d, "prompts", 0).contentCid = PROMPT_CID;
    expect(codes(d)).toEqual(["definition/schema"]);
  });
});

describe("duplicate models in long lists", () => {
  it("are found by provider, model and settings, wherever they are, and only they", () => {
    const models: Json[] = Array.from({ length: 20_000 }, (_, i) => ({
      provider: `p${i % 5}`,
      model: `m${i}`,
    }));
    models[19_990] = { provider: "p3", model: "m3" };
    models[10_000] = { model: "m8", provider: "p3" };
    // The same pair with other settings, and pairs whose joined text is the same, are not repeats.
    models[15_000] = { provider: "p4", model: "m4", settings: { seed: 1 } };
    models[15_001] = { provider: "p4", model: "m4", settings: { seed: 2 } };
    models[15_002] = { provider: "p4", model: "m4", settings: { seed: 1 } };
    models[16_000] = { provider: "ab", model: "c" };
    models[16_001] = { provider: "a", model: "bc" };
    models[16_002] = { provider: "ab\u0000", model: "c" };
    models[17_000] = { provider: "\u00e9", model: "\u{1F600}" };
    models[17_001] = { provider: "\u00e9", model: "\u{1F600}" };
    const r = validateDefinition(JSON.stringify({ ...minimal(), models }));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["definition/duplicate-model", "/models/10000"],
      ["definition/duplicate-model", "/models/15002"],
      ["definition/duplicate-model", "/models/17001"],
      ["definition/duplicate-model", "/models/19990"],
    ]);
  });
});
