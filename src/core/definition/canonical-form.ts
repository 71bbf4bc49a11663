// The stored form of a definition (docs/spec/definitions.md): optional properties whose value is null removed, and
// `graph.nodes` / `graph.edges` filled with [] when a graph omits them. Free-form values (extensions,
// middleware config, tool input schemas, framework packages) are data and are kept exactly.
import type { AgentDefinition } from "./types.js";

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Property names, per struct, whose values are free-form data rather than schema structs. */
const OPAQUE = new Set(["extensions", "config", "inputSchema", "packages"]);

function strip(v: unknown, opaque: boolean): unknown {
  if (opaque || v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map((x) => strip(x, false));
  const out: Obj = {};
  for (const key of Object.keys(v)) {
    const x = (v as Obj)[key];
    if (x === null) continue;
    const value = strip(x, OPAQUE.has(key));
    if (key === "__proto__") {
      Object.defineProperty(out, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[key] = value;
    }
  }
  return out;
}

function fillGraphs(def: Obj, depth: number): void {
  const graph = def.graph;
  if (isObject(graph)) {
    if (!("nodes" in graph)) graph.nodes = [];
    if (!("edges" in graph)) graph.edges = [];
  }
  if (Array.isArray(def.subAgents) && depth < 64) {
    for (const sub of def.subAgents) if (isObject(sub)) fillGraphs(sub, depth + 1);
  }
}

/**
 * The stored form of an already spelling-normalised definition. Returns a new tree; the input is
 * not changed. Applied twice it gives the same result.
 */
export function canonicalForm(def: Readonly<Obj> | AgentDefinition): AgentDefinition {
  const out = strip(def, false) as Obj;
  fillGraphs(out, 0);
  return out as unknown as AgentDefinition;
}
