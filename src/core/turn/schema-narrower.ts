// Whether a tool implementation's input schema is provably no wider than the schema an agent
// definition declares for it: every value the implementation accepts, the declaration accepts too.
// The proof is structural and conservative (false whenever it cannot tell): JSON Schema keywords
// are conjunctive, so an implementation may add constraints, but every constraint the declaration
// states must be present in the implementation, equal or tighter, keyword by keyword.
import { canonicalJson } from "../records/canonical.js";

type Schema = Readonly<Record<string, unknown>> | boolean;

/** Keywords that do not constrain (annotations). */
const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$comment",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
]);

const LOWER_BOUNDS = new Set([
  "minimum",
  "exclusiveMinimum",
  "minLength",
  "minItems",
  "minProperties",
]);
const UPPER_BOUNDS = new Set([
  "maximum",
  "exclusiveMaximum",
  "maxLength",
  "maxItems",
  "maxProperties",
]);

const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);

function isObject(x: unknown): x is Readonly<Record<string, unknown>> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function constraints(s: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(s).filter((k) => !ANNOTATIONS.has(k));
}

/** The types a schema admits (undefined: any). */
function typesOf(s: Readonly<Record<string, unknown>>): Set<string> | undefined {
  const t = s.type;
  if (t === undefined) return undefined;
  const list = Array.isArray(t) ? t : [t];
  const out = new Set(list.map(String));
  // "integer" values are "number" values.
  if (out.has("number")) out.add("integer");
  return out;
}

function subset<T>(a: readonly T[], b: readonly T[]): boolean {
  const keys = new Set(b.map((x) => canonicalJson(x)));
  return a.every((x) => keys.has(canonicalJson(x)));
}

/** An object-valued property map of a schema (empty when absent). */
function props(s: Readonly<Record<string, unknown>>): Readonly<Record<string, Schema>> {
  return isObject(s.properties) ? (s.properties as Record<string, Schema>) : {};
}

/** Where the declaration constrains names and values of properties, the implementation does too. */
function propertiesNoWider(
  impl: Readonly<Record<string, unknown>>,
  declared: Readonly<Record<string, unknown>>,
): boolean {
  if (impl.patternProperties !== undefined || declared.patternProperties !== undefined) {
    return (
      same(impl.patternProperties, declared.patternProperties) &&
      same(impl.properties, declared.properties) &&
      same(impl.additionalProperties, declared.additionalProperties)
    );
  }
  const ip = props(impl);
  const dp = props(declared);
  const dAdditional = (declared.additionalProperties ?? true) as Schema;
  const iAdditional = (impl.additionalProperties ?? true) as Schema;
  // A property the implementation names must be accepted where the declaration puts it.
  for (const [name, schema] of Object.entries(ip)) {
    const target = Object.hasOwn(dp, name) ? (dp[name] as Schema) : dAdditional;
    if (!noWider(schema, target)) return false;
  }
  // A name only the declaration knows, or any other name, reaches the implementation's
  // additionalProperties: it must be accepted there by the declaration too.
  if (iAdditional !== false) {
    for (const [name, schema] of Object.entries(dp)) {
      if (!Object.hasOwn(ip, name) && !noWider(iAdditional, schema)) return false;
    }
    if (!noWider(iAdditional, dAdditional)) return false;
  }
  return true;
}

/** `impl` accepts no value that `declared` refuses (as far as can be shown). */
export function noWider(impl: Schema, declared: Schema): boolean {
  if (declared === true) return true;
  if (impl === false) return true;
  if (declared === false) return false;
  if (impl === true) return constraints(declared).length === 0;
  if (same(impl, declared)) return true;
  for (const key of constraints(declared)) {
    const d = declared[key];
    const i = impl[key];
    switch (key) {
      case "type": {
        const it = typesOf(impl);
        const dt = typesOf(declared) as Set<string>;
        if (it === undefined || ![...it].every((t) => dt.has(t))) return false;
        break;
      }
      case "enum":
        if (
          Array.isArray(i)
            ? !subset(i, d as unknown[])
            : !(impl.const !== undefined && subset([impl.const], d as unknown[]))
        )
          return false;
        break;
      case "required":
        if (!Array.isArray(i) || !subset(d as unknown[], i)) return false;
        break;
      case "properties":
      case "additionalProperties":
      case "patternProperties":
        if (!propertiesNoWider(impl, declared)) return false;
        break;
      case "items":
        if (i === undefined || !isObject(d) || !noWider(i as Schema, d)) {
          if (!same(i, d)) return false;
        }
        break;
      default:
        if (LOWER_BOUNDS.has(key)) {
          if (typeof i !== "number" || typeof d !== "number" || i < d) return false;
        } else if (UPPER_BOUNDS.has(key)) {
          if (typeof i !== "number" || typeof d !== "number" || i > d) return false;
        } else if (!same(i, d)) {
          // pattern, format, const, uniqueItems, $ref, allOf, … : only the same constraint proves it.
          return false;
        }
    }
  }
  return true;
}
