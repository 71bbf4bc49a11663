// Tool input schemas of the plainest shape (an object of string, integer, number and boolean
// properties, strings perhaps limited to a list of values or a length, some properties required,
// extra properties allowed or not) checked without Ajv: most tools' schemas are this shape, and
// loading Ajv to compile them costs a process several megabytes. The check decides exactly as the
// Ajv validator of the same schema (tolerant profile, draft 2020-12 or draft-07, which agree on
// these keywords; or the strict contract profile, for task packs' argument schemas) and reads the
// arguments the same way (`data[key]`, `for … in`); only when it refuses do the arguments go to
// that validator, compiled then, so the errors a model reads are Ajv's own. Any other schema is
// compiled by Ajv at registration as before.
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

/** A property's checks: its type and, for a string, the values it may take and its length. */
interface Property {
  readonly type: Scalar;
  readonly enum?: readonly string[];
  readonly minLength?: number;
  readonly maxLength?: number;
}

/** The string keywords a simple property may use. */
const STRING_KEYWORDS: ReadonlySet<string> = new Set(["enum", "minLength", "maxLength"]);

interface SimpleSchema {
  readonly properties: ReadonlyMap<string, Property>;
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
  const properties = new Map<string, Property>();
  if ("properties" in schema) {
    const props = schema.properties;
    if (!isPlainObject(props)) return undefined;
    for (const [name, sub] of Object.entries(props)) {
      const property = isPlainObject(sub) ? propertyOf(sub) : undefined;
      if (property === undefined) return undefined;
      properties.set(name, property);
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

/** A length keyword's value as the meta-schema has it (a non-negative integer), or undefined. */
function lengthOf(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/**
 * A property schema as a simple one, or undefined: a scalar `type`, annotations, and for a string
 * a non-empty `enum` of strings (Ajv refuses to compile an empty one), `minLength`, `maxLength`.
 */
function propertyOf(sub: Readonly<Record<string, unknown>>): Property | undefined {
  const type = sub.type;
  if (typeof type !== "string" || !SCALARS.has(type)) return undefined;
  if (!annotationsValid(sub)) return undefined;
  for (const key of Object.keys(sub)) {
    if (key === "type" || ANNOTATIONS.has(key)) continue;
    if (type !== "string" || !STRING_KEYWORDS.has(key)) return undefined;
  }
  if (type !== "string") return { type: type as Scalar };
  let values: readonly string[] | undefined;
  if ("enum" in sub) {
    const e = sub.enum;
    if (!Array.isArray(e) || e.length === 0 || !e.every((v) => typeof v === "string")) {
      return undefined;
    }
    values = e as string[];
  }
  const minLength = "minLength" in sub ? lengthOf(sub.minLength) : 0;
  const maxLength = "maxLength" in sub ? lengthOf(sub.maxLength) : Number.POSITIVE_INFINITY;
  if (minLength === undefined || maxLength === undefined) return undefined;
  return {
    type: "string",
    ...(values === undefined ? {} : { enum: values }),
    ...(minLength > 0 ? { minLength } : {}),
    ...(maxLength < Number.POSITIVE_INFINITY ? { maxLength } : {}),
  };
}

/** A string's length as Ajv counts it (`ucs2length`): a surrogate pair is one character. */
function lengthOfString(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Whether a present value passes the property's checks. */
function passes(value: unknown, p: Property): boolean {
  if (!hasType(value, p.type)) return false;
  if (p.type !== "string") return true;
  const text = value as string;
  if (p.enum !== undefined && !p.enum.includes(text)) return false;
  if (p.minLength === undefined && p.maxLength === undefined) return true;
  const length = lengthOfString(text);
  return length >= (p.minLength ?? 0) && length <= (p.maxLength ?? Number.POSITIVE_INFINITY);
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
  for (const [name, property] of s.properties) {
    const value = record[name];
    if (value !== undefined && !passes(value, property)) return false;
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
