// Tool input schemas of the plainest shape (an object of string, integer, number and boolean
// properties, some required, extra properties allowed or not) checked without Ajv: most tools'
// schemas are this shape, and loading Ajv to compile them costs a process several megabytes. The
// check decides exactly as the Ajv validator of the same schema (tolerant profile, draft 2020-12 or
// draft-07, which agree on these keywords) and reads the arguments the same way (`data[key]`,
// `for … in`); only when it refuses do the arguments go to that validator, compiled then, so the
// errors a model reads are Ajv's own. Any other schema is compiled by Ajv at registration as before.
import type { ValidateFunction } from "../contracts/ajv-factory.js";

type Scalar = "string" | "integer" | "number" | "boolean";

/** The keywords a simple schema may use besides its own: annotations, which check nothing. */
const ANNOTATIONS: ReadonlySet<string> = new Set(["description", "title"]);
const ROOT_KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  ...ANNOTATIONS,
]);
const SCALARS: ReadonlySet<string> = new Set(["string", "integer", "number", "boolean"]);

interface SimpleSchema {
  readonly properties: ReadonlyMap<string, Scalar>;
  readonly required: readonly string[];
  readonly closed: boolean;
}

function isPlainObject(x: unknown): x is Readonly<Record<string, unknown>> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Whether the annotation keywords present are strings (the meta-schema's demand). */
function annotationsValid(schema: Readonly<Record<string, unknown>>): boolean {
  for (const a of ANNOTATIONS) {
    if (a in schema && typeof schema[a] !== "string") return false;
  }
  return true;
}

/**
 * The schema as a simple one (its root `$id` and `$schema` already removed), or undefined when it
 * uses anything else, or anything the meta-schema would refuse.
 */
export function simpleSchemaOf(
  schema: Readonly<Record<string, unknown>>,
): SimpleSchema | undefined {
  if (schema.type !== "object") return undefined;
  for (const key of Object.keys(schema)) if (!ROOT_KEYWORDS.has(key)) return undefined;
  if (!annotationsValid(schema)) return undefined;
  const properties = new Map<string, Scalar>();
  if ("properties" in schema) {
    const props = schema.properties;
    if (!isPlainObject(props)) return undefined;
    for (const [name, sub] of Object.entries(props)) {
      if (!isPlainObject(sub)) return undefined;
      for (const key of Object.keys(sub)) {
        if (key !== "type" && !ANNOTATIONS.has(key)) return undefined;
      }
      if (!annotationsValid(sub)) return undefined;
      if (typeof sub.type !== "string" || !SCALARS.has(sub.type)) return undefined;
      properties.set(name, sub.type as Scalar);
    }
  }
  let required: readonly string[] = [];
  if ("required" in schema) {
    const r = schema.required;
    if (!Array.isArray(r) || !r.every((n) => typeof n === "string")) return undefined;
    if (new Set(r).size !== r.length) return undefined;
    required = r as string[];
  }
  let closed = false;
  if ("additionalProperties" in schema) {
    if (typeof schema.additionalProperties !== "boolean") return undefined;
    closed = !schema.additionalProperties;
  }
  return { properties, required, closed };
}

/** Ajv's own tests of each type (`integer`: a finite number without a fraction). */
function hasType(value: unknown, type: Scalar): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return (
        typeof value === "number" && !(value % 1) && !Number.isNaN(value) && Number.isFinite(value)
      );
  }
}

function accepts(s: SimpleSchema, data: unknown): boolean {
  if (!isPlainObject(data)) return false;
  const record = data as Record<string, unknown>;
  for (const name of s.required) if (record[name] === undefined) return false;
  for (const [name, type] of s.properties) {
    const value = record[name];
    if (value !== undefined && !hasType(value, type)) return false;
  }
  if (s.closed) {
    for (const key in record) if (!s.properties.has(key)) return false;
  }
  return true;
}

/**
 * A validator for a simple schema that decides alone what it accepts and asks `compile` (called
 * once, on the first refusal) for the verdict and the errors of what it refuses.
 */
export function simpleValidator(
  s: SimpleSchema,
  compile: () => ValidateFunction,
): ValidateFunction {
  let full: ValidateFunction | undefined;
  const validate = ((data: unknown): boolean => {
    if (accepts(s, data)) {
      validate.errors = null;
      return true;
    }
    full ??= compile();
    const verdict = full(data) as boolean;
    validate.errors = full.errors ?? null;
    return verdict;
  }) as ValidateFunction;
  validate.errors = null;
  return validate;
}
