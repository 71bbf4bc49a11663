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
  return stripObject(v);
}

function stripObject(v: object): Obj {
  const out: Obj = {};
  for (const [key, x] of Object.entries(v)) {
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

/** `strip` made in place: null properties deleted, nothing copied. */
function stripInPlace(v: unknown, opaque: boolean): void {
  if (opaque || v === null || typeof v !== "object") return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) stripInPlace(v[i], false);
    return;
  }
  const o = v as Obj;
  for (const key of Object.keys(o)) {
    const x = o[key];
    if (x === null) delete o[key];
    else stripInPlace(x, OPAQUE.has(key));
  }
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
 * The stored form of any JSON object: nulls of optional properties removed, graph lists filled.
 * Returns a new tree; the input is not changed. Applied twice it gives the same result.
 */
export function storedForm(def: Readonly<Obj> | AgentDefinition): Obj {
  const out = stripObject(def);
  fillGraphs(out, 0);
  return out;
}

/**
 * Whether a stored form has the properties every definition has (the seed schema's required
 * ones): true for any document the schema accepted.
 */
export function isAgentDefinition(v: Readonly<Obj>): v is Obj & AgentDefinition {
  return (
    v.schema === "viper/agent-definition/v1" &&
    typeof v.name === "string" &&
    isObject(v.framework) &&
    typeof v.framework.name === "string" &&
    Array.isArray(v.models)
  );
}

/**
 * The stored form of an already spelling-normalised definition the seed schema accepted. Returns
 * a new tree; the input is not changed. Applied twice it gives the same result. Throws when the
 * input lacks a property every definition has (a caller that skipped the schema check).
 */
export function canonicalForm(def: Readonly<Obj> | AgentDefinition): AgentDefinition {
  const out = storedForm(def);
  if (!isAgentDefinition(out))
    throw new TypeError("canonicalForm: not a definition the seed schema accepts");
  return out;
}

/**
 * `canonicalForm` made in place, for a tree the caller owns (the reader's, or a private copy): the
 * same stored form, without a second copy of a large definition. Returns the tree itself.
 */
export function canonicalFormInPlace(def: Obj): AgentDefinition {
  stripInPlace(def, false);
  fillGraphs(def, 0);
  if (!isAgentDefinition(def))
    throw new TypeError("canonicalFormInPlace: not a definition the seed schema accepts");
  return def;
}
