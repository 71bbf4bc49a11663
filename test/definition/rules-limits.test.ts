// The semantic rules at their edges: each byte limit exactly at the limit and one byte past it,
// each alternative of a rule on its own (so that alternative alone decides), and the exact list of
// problems with their paths.
import { describe, expect, it } from "vitest";
import { PROMPT_CONTENT_MAX_BYTES, utf8Length } from "../../src/core/definition/rules.js";
import { validateDefinition, validateDefinitionValue } from "../../src/core/definition/validate.js";
import { type Doc, full, type Json, text } from "./fixtures.js";

type Obj = { [k: string]: Json };
const at = (d: Doc, ...keys: Array<string | number>): Obj =>
  keys.reduce<Json>((v, k) => (v as Record<string | number, Json>)[k] as Json, d) as Obj;

/** Every problem of a document as [code, path]. */
function problems(doc: Doc): [string, string][] {
  const r = validateDefinition(text(doc));
  return r.ok ? [] : r.errors.map((e) => [e.code, e.path]);
}

function edited(edit: (d: Doc) => void): [string, string][] {
  const d = full();
  edit(d);
  return problems(d);
}

describe("utf8Length", () => {
  it.each([
    ["ASCII up to U+007F", "a\u007f"],
    ["two bytes from U+0080 to U+07FF", "\u0080\u07ff"],
    ["three bytes from U+0800", "\u0800\ud7ff\ue000\uffff"],
    ["four bytes for a pair from U+D800", "\u{10000}"],
    ["four bytes for a pair up to U+DBFF", "\u{10ffff}"],
    ["a mix", "a\u0080€\u{1f600}z"],
    ["empty", ""],
  ])("counts %s as UTF-8 does", (_what, s) => {
    expect(utf8Length(s)).toBe(Buffer.byteLength(s, "utf8"));
  });
});

describe("byte limits: exactly at the limit is accepted, one byte more is refused", () => {
  // 64 bytes of each width: 1-byte, 2-byte (from U+0080), 3-byte (from U+0800), 4-byte pairs
  // (the first and the last high surrogate).
  const at64 = [
    "v".repeat(64),
    "\u0080".repeat(32),
    `${"\u0800".repeat(21)}a`,
    "\u{10000}".repeat(16),
  ];
  const over64 = [
    "v".repeat(65),
    "\u0080".repeat(33),
    "\u0800".repeat(22),
    `${"\u{10ffff}".repeat(16)}a`,
  ];

  const fields: { path: string; set: (d: Doc, v: string) => void; ascii?: boolean }[] = [
    {
      path: "/version",
      set: (d, v) => {
        d.version = v;
      },
    },
    {
      path: "/framework/name",
      set: (d, v) => {
        at(d, "framework").name = v;
      },
    },
    {
      path: "/models/0/settings/betas/0",
      set: (d, v) => {
        at(d, "models", 0, "settings").betas = [v];
      },
      // Its pattern admits lowercase ASCII only.
      ascii: true,
    },
    {
      path: "/mcpServers/0/name",
      set: (d, v) => {
        at(d, "mcpServers", 0).name = v;
      },
    },
    {
      path: "/memory/0/backend",
      set: (d, v) => {
        at(d, "memory", 0).backend = v;
      },
    },
  ];

  it.each(fields)("$path", ({ path, set, ascii }) => {
    for (const v of ascii ? at64.slice(0, 1) : at64) expect(edited((d) => set(d, v))).toEqual([]);
    for (const v of ascii ? over64.slice(0, 1) : over64)
      expect(edited((d) => set(d, v))).toEqual([["definition/too-long", path]]);
  });

  it("/prompts/0/content at 16 384 bytes", () => {
    expect(PROMPT_CONTENT_MAX_BYTES).toBe(16_384);
    const set = (v: string) =>
      edited((d) => {
        at(d, "prompts", 0).content = v;
      });
    expect(set("\u0080".repeat(8192))).toEqual([]);
    expect(set(`${"\u0080".repeat(8191)}ab`)).toEqual([]);
    expect(set(`${"\u0080".repeat(8192)}a`)).toEqual([
      ["definition/too-long", "/prompts/0/content"],
    ]);
  });
});

describe("each alternative of a rule decides alone", () => {
  it("prompt-source: content alone and contentCid alone are accepted", () => {
    // The fixture has one of each; a prompt with neither or both is refused (rules.test.ts).
    expect(problems(full())).toEqual([]);
  });

  it("duplicate-model: the same provider and model with other settings is another model", () => {
    const base = { provider: "p", model: "m" };
    expect(
      edited((d) => {
        d.models = [base, { ...base, settings: { topK: 1 } }, { ...base, settings: { topK: 2 } }];
      }),
    ).toEqual([]);
    // The third equals the first, not the second, and the fourth all three: one problem each.
    expect(
      edited((d) => {
        d.models = [base, { ...base, settings: { topK: 1 } }, base, base];
        d.middleware = [];
      }),
    ).toEqual([
      ["definition/duplicate-model", "/models/2"],
      ["definition/duplicate-model", "/models/3"],
    ]);
    // The same model under another provider, and another model of the same provider.
    expect(
      edited((d) => {
        d.models = [base, { provider: "q", model: "m" }, { provider: "p", model: "n" }];
      }),
    ).toEqual([]);
  });

  it("betas-order: each beta is compared with the one before it", () => {
    const betas = (b: string[]) =>
      edited((d) => {
        at(d, "models", 0, "settings").betas = b;
      });
    expect(betas(["a", "b", "c"])).toEqual([]);
    expect(betas(["a", "c", "b"])).toEqual([
      ["definition/betas-order", "/models/0/settings/betas/2"],
    ]);
    expect(betas(["b", "a", "c"])).toEqual([
      ["definition/betas-order", "/models/0/settings/betas/1"],
    ]);
    expect(betas(["a", "b", "b"])).toEqual([
      ["definition/betas-order", "/models/0/settings/betas/2"],
    ]);
  });

  it("thinking: budgetTokens with each type but enabled is refused", () => {
    const thinking = (t: Json) =>
      edited((d) => {
        at(d, "models", 0, "settings").thinking = t;
      });
    expect(thinking({ type: "enabled", budgetTokens: 1 })).toEqual([]);
    expect(thinking({ type: "enabled" })).toEqual([]);
    expect(thinking({ type: "disabled" })).toEqual([]);
    expect(thinking({ type: "adaptive" })).toEqual([]);
    for (const type of ["disabled", "adaptive"])
      expect(thinking({ type, budgetTokens: 1 })).toEqual([
        ["definition/thinking", "/models/0/settings/thinking/budgetTokens"],
      ]);
    // An unknown type is one problem, at the type, even with a budget.
    expect(thinking({ type: "on", budgetTokens: 1 })).toEqual([
      ["definition/thinking", "/models/0/settings/thinking/type"],
    ]);
  });

  it("memory: a writable memory needs its scope, a read-only one its cid, each alone", () => {
    expect(edited((d) => delete at(d, "memory", 0).cid)).toEqual([
      ["definition/memory-cid", "/memory/0"],
    ]);
    expect(
      edited((d) => {
        at(d, "memory", 0).scope = { kind: "shared" };
      }),
    ).toEqual([["definition/memory-cid", "/memory/0"]]);
    expect(edited((d) => delete at(d, "memory", 2).scope)).toEqual([
      ["definition/memory-cid", "/memory/2"],
    ]);
    expect(
      edited((d) => {
        at(d, "memory", 2).cid = at(d, "memory", 0).cid as string;
      }),
    ).toEqual([["definition/memory-cid", "/memory/2"]]);
  });

  it("memory-source-hash: allowed on a namespace scope only", () => {
    const hash = at(full(), "memory", 1, "scope").sourceHash as string;
    expect(
      edited((d) => {
        at(d, "memory", 3, "scope").sourceHash = hash;
      }),
    ).toEqual([["definition/memory-source-hash", "/memory/3/scope/sourceHash"]]);
    expect(problems(full())).toEqual([]);
  });

  it("mcp-transport: each refusal at its own path", () => {
    expect(edited((d) => delete at(d, "mcpServers", 0).command)).toEqual([
      ["definition/mcp-transport", "/mcpServers/0"],
    ]);
    expect(
      edited((d) => {
        at(d, "mcpServers", 0).url = "https://example.com/";
      }),
    ).toEqual([["definition/mcp-transport", "/mcpServers/0/url"]]);
    expect(edited((d) => delete at(d, "mcpServers", 1).url)).toEqual([
      ["definition/mcp-transport", "/mcpServers/1"],
    ]);
    expect(
      edited((d) => {
        at(d, "mcpServers", 2).command = "node";
      }),
    ).toEqual([["definition/mcp-transport", "/mcpServers/2/command"]]);
    expect(
      edited((d) => {
        at(d, "mcpServers", 1).args = ["--x"];
      }),
    ).toEqual([["definition/mcp-transport", "/mcpServers/1/args"]]);
    // A stdio server's command and args, and any server's url, are checked for credentials.
    expect(
      edited((d) => {
        at(d, "mcpServers", 0).args = ["a", "https://u:p@x.example/"];
      }),
    ).toEqual([["definition/credential", "/mcpServers/0/args/1"]]);
    expect(
      edited((d) => {
        at(d, "mcpServers", 1).url = "https://x.example/?access_token=1";
      }),
    ).toEqual([["definition/credential", "/mcpServers/1/url"]]);
  });

  it("model-ref: each way a reference is wrong, alone", () => {
    const ref = (n: Json) =>
      edited((d) => {
        at(d, "middleware", 1, "config", "model")["@model"] = n;
      });
    expect(ref(0)).toEqual([]);
    expect(ref(2)).toEqual([]);
    for (const n of [3, -1, 0.5, "0", null])
      expect(ref(n)).toEqual([["definition/model-ref", "/middleware/1/config/model/@model"]]);
    expect(
      edited((d) => {
        at(d, "middleware", 1, "config", "model").x = 1;
      }),
    ).toEqual([["definition/model-ref", "/middleware/1/config/model"]]);
    // A reference inside an array inside the config.
    expect(
      edited((d) => {
        at(d, "middleware", 0, "config").fallbacks = [[{ "@model": 9 }]];
      }),
    ).toEqual([["definition/model-ref", "/middleware/0/config/fallbacks/0/0/@model"]]);
  });

  it("safe-integer: inside arrays, with the index in the path; fractions and safe values pass", () => {
    const d = full() as Record<string, unknown>;
    d.extensions = { x: [1, 2 ** 53, 2.5, null, [-(2 ** 60)]], y: Number.MAX_SAFE_INTEGER };
    const r = validateDefinitionValue(d);
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["definition/safe-integer", "/extensions/x/1"],
      ["definition/safe-integer", "/extensions/x/4/0"],
    ]);
  });

  it("graph-edge: each end of an edge is checked", () => {
    const edge = (e: Json[]) =>
      edited((d) => {
        (at(d, "graph").edges as Json[][])[1] = e;
      });
    expect(edge(["__start__", "__end__", false])).toEqual([]);
    expect(edge(["nowhere", "act", true])).toEqual([["definition/graph-edge", "/graph/edges/1/0"]]);
    expect(edge(["plan", "nowhere", true])).toEqual([
      ["definition/graph-edge", "/graph/edges/1/1"],
    ]);
    expect(edge(["x", "y", true])).toEqual([
      ["definition/graph-edge", "/graph/edges/1/0"],
      ["definition/graph-edge", "/graph/edges/1/1"],
    ]);
  });

  it("duplicate-name: at the second of each kind", () => {
    expect(
      edited((d) => {
        (d.skills as Json[]).push(structuredClone((d.skills as Json[])[0] as Json));
      }),
    ).toEqual([["definition/duplicate-name", "/skills/1/name"]]);
    expect(
      edited((d) => {
        at(d, "mcpServers", 2).name = "files";
      }),
    ).toEqual([["definition/duplicate-name", "/mcpServers/2/name"]]);
  });

  it("a null inside a middleware config is no model reference", () => {
    expect(
      edited((d) => {
        at(d, "middleware", 1, "config").extra = [null, { x: null }];
      }),
    ).toEqual([]);
  });

  it("duplicate-name: the message names the kind of thing declared twice", () => {
    const messages = (edit: (d: Doc) => void) => {
      const d = full();
      edit(d);
      const r = validateDefinition(text(d));
      return r.ok ? [] : r.errors.map((e) => e.message);
    };
    expect(
      messages((d) => {
        at(d, "tools", 1).name = "read_file";
      })[0],
    ).toMatch(/^tool /);
    expect(
      messages((d) => {
        (d.skills as Json[]).push(structuredClone((d.skills as Json[])[0] as Json));
      })[0],
    ).toMatch(/^skill /);
    expect(
      messages((d) => {
        at(d, "mcpServers", 2).name = "files";
      })[0],
    ).toMatch(/^MCP server /);
    expect(
      messages((d) => {
        (d.subAgents as Json[]).push({ ...((d.subAgents as Json[])[0] as Obj) });
      })[0],
    ).toMatch(/^sub-agent /);
  });

  it("input-schema and cid: at their paths", () => {
    expect(
      edited((d) => {
        at(d, "tools", 1).inputSchema = { type: "string" };
      }),
    ).toEqual([["definition/input-schema", "/tools/1/inputSchema"]]);
    const cid = `bafkr4iz${"a".repeat(50)}a`;
    expect(
      edited((d) => {
        at(d, "prompts", 1).contentCid = cid;
      }),
    ).toEqual([["definition/cid", "/prompts/1/contentCid"]]);
  });
});
