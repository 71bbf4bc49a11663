// The alternate spellings the reference parser admits (docs/spec/definitions.md), rewritten in place to the usual one
// before validation, storage and hashing: an enum as a one-key map `{"stdio": null}`, and a struct as
// an array holding exactly its required fields in `required` order. Any other array where a struct is
// expected is ambiguous and refused. Sub-agents are rewritten the same way, at most MAX_DEPTH deep.
import { type Problem, pointer } from "../result.js";
import type { SourcePositions } from "./source-positions.js";

/** Sub-agents nest at most this deep (the root is depth 0). */
export const MAX_SUBAGENT_DEPTH = 8;

/** The structs that may be written as arrays, with their `required` lists in schema order. */
export const ARRAY_SPELLINGS = {
  Model: ["provider", "model"],
  Framework: ["name"],
  Skill: ["name", "cid"],
  Source: ["path", "sha256"],
  Tool: ["name", "description", "inputSchema"],
  McpServer: ["name", "transport"],
  Memory: ["path", "backend", "writable"],
  Prompt: ["role"],
  Thinking: ["type"],
  MemoryScope: ["kind"],
} as const satisfies Record<string, readonly string[]>;

type Spelled = keyof typeof ARRAY_SPELLINGS;
type Obj = Record<string, unknown>;

/**
 * Each spelling's object from the fields at `v[at…]`, built by a literal with the fields in
 * `ARRAY_SPELLINGS` order: V8 gives a literal exactly its properties' room, where an object filled
 * key by key from `{}` has room for four (a long list of models would carry 16 more bytes a model).
 */
export const SPELLED_OBJECT: {
  readonly [K in Spelled]: (v: readonly unknown[], at: number) => Obj;
} = {
  Model: (v, at) => ({ provider: v[at], model: v[at + 1] }),
  Framework: (v, at) => ({ name: v[at] }),
  Skill: (v, at) => ({ name: v[at], cid: v[at + 1] }),
  Source: (v, at) => ({ path: v[at], sha256: v[at + 1] }),
  Tool: (v, at) => ({ name: v[at], description: v[at + 1], inputSchema: v[at + 2] }),
  McpServer: (v, at) => ({ name: v[at], transport: v[at + 1] }),
  Memory: (v, at) => ({ path: v[at], backend: v[at + 1], writable: v[at + 2] }),
  Prompt: (v, at) => ({ role: v[at] }),
  Thinking: (v, at) => ({ type: v[at] }),
  MemoryScope: (v, at) => ({ kind: v[at] }),
};

/** A struct's array spelling: its fields in element order, and how its object is made. */
export interface Spelling {
  readonly keys: readonly string[];
  make(v: readonly unknown[], at: number): Obj;
}

/** An agent's lists of structs, by key, and the struct each item is. */
const ITEM_LISTS: ReadonlyMap<string, Spelling> = new Map(
  (
    [
      ["models", "Model"],
      ["prompts", "Prompt"],
      ["skills", "Skill"],
      ["sources", "Source"],
      ["tools", "Tool"],
      ["mcpServers", "McpServer"],
      ["memory", "Memory"],
    ] as const
  ).map(([list, what]) => [list, { keys: ARRAY_SPELLINGS[what], make: SPELLED_OBJECT[what] }]),
);

/**
 * For the reader: the spelling of an array of `count` elements read at `path` when the rewriter
 * would make it an object — an item of one of an agent's struct lists (the root's, or a
 * sub-agent's at most MAX_SUBAGENT_DEPTH deep) with exactly its struct's fields. Made as the array
 * is read, a long list of spelled items never holds the arrays themselves.
 */
export function listItemSpelling(
  path: readonly (string | number)[],
  count: number,
): Spelling | undefined {
  const n = path.length;
  if (n < 2 || n % 2 !== 0 || typeof path[n - 1] !== "number") return undefined;
  const list = path[n - 2];
  const spelling = typeof list === "string" ? ITEM_LISTS.get(list) : undefined;
  if (spelling === undefined || spelling.keys.length !== count) return undefined;
  if ((n - 2) / 2 > MAX_SUBAGENT_DEPTH) return undefined;
  for (let i = 0; i < n - 2; i += 2) {
    if (path[i] !== "subAgents" || typeof path[i + 1] !== "number") return undefined;
  }
  return spelling;
}

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

class Rewriter {
  readonly problems: Problem[] = [];
  constructor(readonly positions: SourcePositions | undefined) {}

  ambiguous(path: string, what: string, arr: readonly unknown[]): void {
    const spelled = (ARRAY_SPELLINGS as Record<string, readonly string[]>)[what];
    const message =
      spelled === undefined
        ? `${what} must be written as an object, not an array`
        : `${what} written as an array must hold exactly [${spelled.join(", ")}] (${spelled.length} items, got ${arr.length}); write it as an object`;
    this.problems.push({ code: "definition/ambiguous-array", path, message });
  }

  /**
   * The usual spelling of a struct at `holder[key]`: an array of exactly the required fields becomes
   * an object; any other array is refused. Returns the object, or undefined when it is not one.
   */
  struct(
    holder: Obj | unknown[],
    key: string | number,
    path: string,
    what: string,
  ): Obj | undefined {
    const v = (holder as Record<string | number, unknown>)[key];
    if (Array.isArray(v)) {
      const fields = (ARRAY_SPELLINGS as Record<string, readonly string[]>)[what];
      if (fields === undefined || v.length !== fields.length) {
        this.ambiguous(path, what, v);
        return undefined;
      }
      const obj = SPELLED_OBJECT[what as Spelled](v, 0);
      this.positions?.recordRewrite(holder, key, obj, fields);
      (holder as Record<string | number, unknown>)[key] = obj;
      return obj;
    }
    return isObject(v) ? v : undefined;
  }

  /** `{"stdio": null}` → `"stdio"`. */
  enumValue(obj: Obj, key: string): void {
    const v = obj[key];
    if (!isObject(v)) return;
    const keys = Object.keys(v);
    if (keys.length === 1 && v[keys[0] as string] === null) obj[key] = keys[0];
  }

  items(
    obj: Obj,
    key: string,
    path: string,
    what: Spelled,
    then?: (item: Obj, path: string) => void,
  ): void {
    const list = obj[key];
    if (!Array.isArray(list)) return;
    for (let i = 0; i < list.length; i++) {
      const v = list[i];
      // Most items are neither rewritten nor looked into: no pointer is built for them (a
      // million-element array would otherwise make a million strings).
      if (!Array.isArray(v) && (then === undefined || !isObject(v))) continue;
      const p = `${path}/${key}/${i}`;
      const item = this.struct(list, i, p, what);
      if (item !== undefined && then !== undefined) then(item, p);
    }
  }

  /** A struct that has no array spelling: an array here is always ambiguous. */
  objectOnly(holder: Obj, key: string, path: string, what: string): Obj | undefined {
    const v = holder[key];
    if (Array.isArray(v)) {
      this.ambiguous(`${path}/${key}`, what, v);
      return undefined;
    }
    return isObject(v) ? v : undefined;
  }

  agent(def: Obj, path: string, depth: number): void {
    this.struct(def, "framework", `${path}/framework`, "Framework");
    this.items(def, "models", path, "Model", (model, p) => {
      const settings = this.objectOnly(model, "settings", p, "ModelSettings");
      if (settings === undefined) return;
      this.struct(settings, "thinking", `${p}/settings/thinking`, "Thinking");
      this.objectOnly(settings, "reasoning", `${p}/settings`, "Reasoning");
    });
    this.items(def, "prompts", path, "Prompt", (prompt) => this.enumValue(prompt, "role"));
    this.items(def, "skills", path, "Skill");
    this.items(def, "sources", path, "Source");
    this.items(def, "tools", path, "Tool");
    this.items(def, "mcpServers", path, "McpServer", (server) =>
      this.enumValue(server, "transport"),
    );
    this.items(def, "memory", path, "Memory", (memory, p) => {
      const scope = this.struct(memory, "scope", `${p}/scope`, "MemoryScope");
      if (scope !== undefined) this.enumValue(scope, "kind");
    });
    const middleware = def.middleware;
    if (Array.isArray(middleware)) {
      // A middleware has no array spelling: an array in the list is always ambiguous.
      middleware.forEach((m: unknown, i) => {
        if (Array.isArray(m)) this.ambiguous(`${path}/middleware/${i}`, "Middleware", m);
      });
    }
    this.objectOnly(def, "graph", path, "Graph");
    const subAgents = def.subAgents;
    if (!Array.isArray(subAgents)) return;
    for (let i = 0; i < subAgents.length; i++) {
      const p = `${path}/subAgents/${i}`;
      const sub = subAgents[i];
      if (Array.isArray(sub)) {
        this.ambiguous(p, "a sub-agent", sub);
        continue;
      }
      if (!isObject(sub)) continue;
      if (depth + 1 > MAX_SUBAGENT_DEPTH) {
        this.problems.push({
          code: "definition/depth",
          path: p,
          message: `sub-agents nest at most ${MAX_SUBAGENT_DEPTH} deep; this one is at depth ${depth + 1}`,
        });
        continue;
      }
      this.agent(sub, p, depth + 1);
    }
  }
}

/**
 * Rewrites alternate spellings in place (the tree must be the caller's own) and checks sub-agent
 * depth. Returns the problems found (`definition/ambiguous-array`, `definition/depth`).
 */
export function normaliseSpellings(def: Obj, positions?: SourcePositions): Problem[] {
  const r = new Rewriter(positions);
  r.agent(def, pointer(), 0);
  return r.problems;
}
