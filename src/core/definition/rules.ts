// The semantic rules of docs/spec/definitions.md beyond the schema, each with its own code. They run on the stored
// form of a schema-valid definition, for the root and for each sub-agent on its own; every path is a
// JSON Pointer into that form. (`definition/blank` comes from the schema's patterns and
// `definition/depth` from the spelling pass, which bounds the walk.)
import { CODEC_BLAKE3_HASHSEQ, CODEC_RAW, decodeCid } from "../cid/cid.js";
import { canonicalJson } from "../records/canonical.js";
import { type Problem, pointer } from "../result.js";
import { inputSchemaProblem } from "./input-schema.js";
import type { AgentDefinition, Model, ModelSettings } from "./types.js";
import { checkUrl, credentialsInText } from "./url-check.js";

/** Prompt content is at most this many UTF-8 bytes. */
export const PROMPT_CONTENT_MAX_BYTES = 16_384;
/** Every other `maxLength` of the seed schema. */
const NAME_MAX_BYTES = 64;
const THINKING_TYPES = new Set(["enabled", "disabled", "adaptive"]);
const GRAPH_ENDPOINTS = new Set(["__start__", "__end__"]);

/** UTF-8 length of a well-formed string, without encoding it. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** FNV-1a over a model's provider, a separator and its model name. */
function pairHash(model: Model): number {
  let h = 0x811c9dc5;
  const { provider, model: name } = model;
  for (let i = 0; i < provider.length; i++) h = Math.imul(h ^ provider.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ 0xffff, 0x01000193);
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The models seen so far, by provider and model name: an open-addressing table of indices in one
 * typed array (four bytes a slot, fewer than three slots a model), rather than a key string and a list
 * for every model of a long list.
 */
class PairTable {
  readonly #slots: Int32Array;
  readonly #mask: number;
  constructor(readonly models: readonly Model[]) {
    let size = 8;
    while (size < models.length + (models.length >> 1)) size *= 2;
    this.#slots = new Int32Array(size);
    this.#mask = size - 1;
  }

  /**
   * Adds model `i`; true when `same(j)` holds for an earlier model j of the same provider and
   * model name (each such j is asked, in the order they were added, until one answers true).
   */
  add(i: number, same: (j: number) => boolean): boolean {
    const model = this.models[i] as Model;
    let at = pairHash(model) & this.#mask;
    let found = false;
    for (;;) {
      const slot = this.#slots[at] as number;
      if (slot === 0) break;
      const other = this.models[slot - 1] as Model;
      if (
        !found &&
        other.provider === model.provider &&
        other.model === model.model &&
        same(slot - 1)
      ) {
        found = true;
      }
      at = (at + 1) & this.#mask;
    }
    this.#slots[at] = i + 1;
    return found;
  }
}

class Rules {
  readonly problems: Problem[] = [];

  add(code: string, path: string, message: string): void {
    this.problems.push({ code, path, message });
  }

  maxBytes(value: string | undefined, max: number, path: string): void {
    if (value === undefined) return;
    const n = utf8Length(value);
    if (n > max)
      this.add("definition/too-long", path, `is ${n} UTF-8 bytes; at most ${max} allowed`);
  }

  cid(value: string | undefined, codec: number, path: string): void {
    if (value === undefined) return;
    const r = decodeCid(value, codec);
    if (!r.ok)
      for (const e of r.errors) this.add("definition/cid", path, `invalid CID: ${e.message}`);
  }

  uniqueNames(
    items: readonly { readonly name: string }[] | undefined,
    path: string,
    what: string,
  ): void {
    const seen = new Set<string>();
    items?.forEach((item, i) => {
      if (seen.has(item.name)) {
        this.add(
          "definition/duplicate-name",
          `${path}/${i}/name`,
          `${what} ${JSON.stringify(item.name)} is declared twice`,
        );
      }
      seen.add(item.name);
    });
  }

  /** `trail` is the pointer tokens below `path`; the pointer string is built only for a problem. */
  safeIntegers(value: unknown, path: string, trail: Array<string | number> = []): void {
    if (typeof value === "number") {
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        this.add(
          "definition/safe-integer",
          path + pointer(...trail),
          `integer ${value} is outside ±(2^53−1); write it as a string`,
        );
      }
      return;
    }
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        trail.push(i);
        this.safeIntegers(value[i], path, trail);
        trail.pop();
      }
      return;
    }
    for (const k of Object.keys(value)) {
      trail.push(k);
      this.safeIntegers((value as Record<string, unknown>)[k], path, trail);
      trail.pop();
    }
  }

  modelRefs(
    value: unknown,
    path: string,
    models: number,
    trail: Array<string | number> = [],
  ): void {
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        trail.push(i);
        this.modelRefs(value[i], path, models, trail);
        trail.pop();
      }
      return;
    }
    const obj = value as Record<string, unknown>;
    if (Object.hasOwn(obj, "@model")) {
      const here = path + pointer(...trail);
      const n = obj["@model"];
      const keys = Object.keys(obj).length;
      if (keys !== 1) {
        this.add(
          "definition/model-ref",
          here,
          `a model reference has exactly one key, "@model"; this one has ${keys}`,
        );
      } else if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n >= models) {
        this.add(
          "definition/model-ref",
          `${here}/@model`,
          `must be an integer index into models, 0 ≤ n < ${models}; got ${JSON.stringify(n)}`,
        );
      }
      return;
    }
    for (const k of Object.keys(obj)) {
      trail.push(k);
      this.modelRefs(obj[k], path, models, trail);
      trail.pop();
    }
  }

  /** One agent's rules, in the order of its fields, then each sub-agent's on its own. */
  agent(def: AgentDefinition, path: string): void {
    this.maxBytes(def.version, NAME_MAX_BYTES, `${path}/version`);
    this.maxBytes(def.framework.name, NAME_MAX_BYTES, `${path}/framework/name`);
    this.models(def, path);
    this.prompts(def, path);
    this.memory(def, path);
    def.skills?.forEach((skill, i) => {
      this.cid(skill.cid, CODEC_BLAKE3_HASHSEQ, `${path}/skills/${i}/cid`);
    });
    this.mcpServers(def, path);
    this.configs(def, path);
    this.tools(def, path);
    this.graph(def, path);

    this.uniqueNames(def.tools, `${path}/tools`, "tool");
    this.uniqueNames(def.skills, `${path}/skills`, "skill");
    this.uniqueNames(def.mcpServers, `${path}/mcpServers`, "MCP server");
    this.uniqueNames(def.subAgents, `${path}/subAgents`, "sub-agent");

    def.subAgents?.forEach((sub, i) => {
      this.agent(sub, `${path}/subAgents/${i}`);
    });
  }

  /** Each model listed once, with its settings' betas and thinking. */
  models(def: AgentDefinition, path: string): void {
    const models = def.models;
    const earlier = new PairTable(models);
    for (let i = 0; i < models.length; i++) {
      const model = models[i] as Model;
      // Canonical JSON only where provider and model collide: it is the costly part of the check.
      let key: string | undefined;
      const repeated = earlier.add(i, (j) => {
        key ??= canonicalJson(model);
        return canonicalJson(models[j]) === key;
      });
      if (repeated) {
        this.add(
          "definition/duplicate-model",
          `${path}/models/${i}`,
          "this model (provider, model and settings) is already listed; list it once",
        );
      }
      const s = model.settings;
      if (s !== undefined) this.modelSettings(s, `${path}/models/${i}`);
    }
  }

  /** A model's betas, sorted and each once, and its thinking type and budget. */
  modelSettings(s: ModelSettings, p: string): void {
    s.betas?.forEach((beta, j) => {
      this.maxBytes(beta, NAME_MAX_BYTES, `${p}/settings/betas/${j}`);
      const prev = s.betas?.[j - 1];
      if (prev !== undefined && !(prev < beta)) {
        this.add(
          "definition/betas-order",
          `${p}/settings/betas/${j}`,
          prev === beta
            ? `duplicate beta ${JSON.stringify(beta)}`
            : `betas must be sorted ascending: ${JSON.stringify(beta)} comes before ${JSON.stringify(prev)}`,
        );
      }
    });
    const t = s.thinking;
    if (t !== undefined) {
      if (!THINKING_TYPES.has(t.type)) {
        this.add(
          "definition/thinking",
          `${p}/settings/thinking/type`,
          `must be "enabled", "disabled" or "adaptive"`,
        );
      } else if (t.budgetTokens !== undefined && t.type !== "enabled") {
        this.add(
          "definition/thinking",
          `${p}/settings/thinking/budgetTokens`,
          `budgetTokens is only allowed when type is "enabled"`,
        );
      }
    }
  }

  /** Each prompt with exactly one source, its content bounded, its CID valid. */
  prompts(def: AgentDefinition, path: string): void {
    def.prompts?.forEach((prompt, i) => {
      const p = `${path}/prompts/${i}`;
      if ((prompt.content === undefined) === (prompt.contentCid === undefined)) {
        this.add(
          "definition/prompt-source",
          p,
          "a prompt has exactly one of content and contentCid",
        );
      }
      this.maxBytes(prompt.content, PROMPT_CONTENT_MAX_BYTES, `${p}/content`);
      this.cid(prompt.contentCid, CODEC_RAW, `${p}/contentCid`);
    });
  }

  /** Writable memory has a scope, read-only memory a CID; a source hash only for a namespace. */
  memory(def: AgentDefinition, path: string): void {
    def.memory?.forEach((memory, i) => {
      const p = `${path}/memory/${i}`;
      this.maxBytes(memory.backend, NAME_MAX_BYTES, `${p}/backend`);
      if (memory.writable && (memory.scope === undefined || memory.cid !== undefined)) {
        this.add("definition/memory-cid", p, "writable memory has a scope and no cid");
      } else if (!memory.writable && (memory.cid === undefined || memory.scope !== undefined)) {
        this.add("definition/memory-cid", p, "read-only memory has a cid and no scope");
      }
      this.cid(memory.cid, CODEC_BLAKE3_HASHSEQ, `${p}/cid`);
      const scope = memory.scope;
      if (scope?.sourceHash !== undefined && scope.kind !== "namespace") {
        this.add(
          "definition/memory-source-hash",
          `${p}/scope/sourceHash`,
          `sourceHash is only for scope kind "namespace"`,
        );
      }
    });
  }

  /** Each MCP server's fields fit its transport; no credentials in its url, command or args. */
  mcpServers(def: AgentDefinition, path: string): void {
    def.mcpServers?.forEach((server, i) => {
      const p = `${path}/mcpServers/${i}`;
      this.maxBytes(server.name, NAME_MAX_BYTES, `${p}/name`);
      if (server.transport === "stdio") {
        if (server.command === undefined)
          this.add("definition/mcp-transport", p, "a stdio server needs a command");
        if (server.url !== undefined)
          this.add("definition/mcp-transport", `${p}/url`, "a stdio server has no url");
      } else {
        if (server.url === undefined)
          this.add("definition/mcp-transport", p, `a ${server.transport} server needs a url`);
        if (server.command !== undefined)
          this.add(
            "definition/mcp-transport",
            `${p}/command`,
            `a ${server.transport} server has no command`,
          );
        if (server.args !== undefined)
          this.add(
            "definition/mcp-transport",
            `${p}/args`,
            `a ${server.transport} server has no args`,
          );
      }
      if (server.url !== undefined) this.problems.push(...checkUrl(server.url, `${p}/url`));
      if (server.command !== undefined)
        this.problems.push(...credentialsInText(server.command, `${p}/command`));
      server.args?.forEach((arg, j) => {
        this.problems.push(...credentialsInText(arg, `${p}/args/${j}`));
      });
    });
  }

  /** Middleware configs (model references, safe integers) and the extensions (safe integers). */
  configs(def: AgentDefinition, path: string): void {
    def.middleware?.forEach((m, i) => {
      if (m.config === undefined) return;
      const p = `${path}/middleware/${i}/config`;
      this.modelRefs(m.config, p, def.models.length);
      this.safeIntegers(m.config, p);
    });
    if (def.extensions !== undefined) this.safeIntegers(def.extensions, `${path}/extensions`);
  }

  /** Each tool's input schema: safe integers, and a schema the input check accepts. */
  tools(def: AgentDefinition, path: string): void {
    def.tools?.forEach((tool, i) => {
      const p = `${path}/tools/${i}/inputSchema`;
      this.safeIntegers(tool.inputSchema, p);
      const problem = inputSchemaProblem(tool.inputSchema);
      if (problem !== null) this.add("definition/input-schema", p, problem);
    });
  }

  /** Each graph edge joins declared nodes (or __start__ / __end__). */
  graph(def: AgentDefinition, path: string): void {
    if (def.graph !== undefined) {
      const nodes = new Set(def.graph.nodes);
      def.graph.edges.forEach((edge, i) => {
        for (const end of [0, 1] as const) {
          const name = edge[end];
          if (!nodes.has(name) && !GRAPH_ENDPOINTS.has(name)) {
            this.add(
              "definition/graph-edge",
              `${path}/graph/edges/${i}/${end}`,
              `${JSON.stringify(name)} is not a declared node (nor __start__ / __end__)`,
            );
          }
        }
      });
    }
  }
}

/** Every semantic-rule problem of a schema-valid definition in its stored form. */
export function semanticProblems(def: AgentDefinition): Problem[] {
  const r = new Rules();
  r.agent(def, "");
  return r.problems;
}
