// What providers are sent: the normalised copy of the seed model-turn schema, the strict-subset
// check, and the reversible tool name encoding.
import { modelTurnSchema } from "../contracts/schemas.js";
import { pointerToken } from "../result.js";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Keywords whose value is a single subschema. */
const SUBSCHEMA_KEYWORDS = ["items", "additionalProperties", "not", "contains"] as const;
/** Keywords whose value is a map of subschemas. */
const SUBSCHEMA_MAPS = ["properties", "$defs", "definitions", "patternProperties"] as const;
/** Keywords whose value is a list of subschemas. */
const SUBSCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"] as const;

/**
 * Normalise a JSON Schema for providers' strict modes without changing what it accepts:
 * `$schema` and `$id` removed; an `enum` of strings gains `type: "string"`; a nullable object or
 * array (`type: [T, "null"]` with T's keywords) becomes `anyOf: [{T…}, {type: "null"}]`.
 */
export function normaliseSchema(schema: unknown): Json {
  if (!isJsonObject(schema)) return schema as Json;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$schema" || key === "$id") continue;
    if ((SUBSCHEMA_KEYWORDS as readonly string[]).includes(key)) {
      out[key] = normaliseSchema(value);
    } else if ((SUBSCHEMA_MAPS as readonly string[]).includes(key) && isJsonObject(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, normaliseSchema(v)] as const),
      );
    } else if ((SUBSCHEMA_LISTS as readonly string[]).includes(key) && Array.isArray(value)) {
      out[key] = value.map(normaliseSchema);
    } else {
      out[key] = value;
    }
  }
  if (
    out.type === undefined &&
    Array.isArray(out.enum) &&
    out.enum.length > 0 &&
    out.enum.every((v) => typeof v === "string")
  ) {
    out.type = "string";
  }
  const type = out.type;
  if (Array.isArray(type) && type.length === 2 && type.includes("null")) {
    const other = type.find((t) => t !== "null");
    if (other === "object" || other === "array") {
      const { type: _type, description, title, ...rest } = out;
      const wrapped: JsonObject = { anyOf: [{ type: other, ...rest }, { type: "null" }] };
      if (description !== undefined) wrapped.description = description;
      if (title !== undefined) wrapped.title = title;
      return wrapped;
    }
  }
  return out;
}

/**
 * The normalised seed schema. With `messageTypes`, the message's `type` enum is narrowed to them
 * (what a role may emit); without, it accepts exactly what the seed accepts.
 */
export function providerTurnSchema(messageTypes?: readonly string[]): JsonObject {
  const schema = normaliseSchema(modelTurnSchema) as JsonObject;
  if (messageTypes === undefined) return schema;
  const message = (schema.properties as JsonObject).message as { anyOf: JsonObject[] };
  const objectBranch = message.anyOf[0] as { properties: { type: JsonObject } };
  objectBranch.properties.type = { type: "string", enum: [...messageTypes] };
  return schema;
}

const STRICT_KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "const",
  "description",
  "title",
  "anyOf",
  "$defs",
  "$ref",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
]);

/**
 * Why a schema does not fit the providers' strict subset, or undefined when it fits: every object
 * closed (`additionalProperties: false`) with every property required, only the supported
 * keywords, and an object root. `at` is the JSON Pointer of the offending node in the schema.
 */
export function strictObstacle(
  schema: unknown,
  at = "",
): { readonly at: string; readonly reason: string } | undefined {
  const no = (where: string, reason: string) => ({ at: where, reason });
  if (!isJsonObject(schema)) return no(at, "not a schema object");
  if (at === "" && schema.type !== "object") return no(at, "the root is not an object");
  for (const key of Object.keys(schema)) {
    if (!STRICT_KEYWORDS.has(key)) return no(at, `keyword ${key} is outside the strict subset`);
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("object") || schema.properties !== undefined) {
    if (schema.additionalProperties !== false) {
      return no(at, "an object open to other properties");
    }
    const props = isJsonObject(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required : [];
    const names = Object.keys(props);
    if (names.length !== required.length || !names.every((n) => required.includes(n))) {
      return no(at, "an object with optional properties");
    }
    for (const [name, p] of Object.entries(props)) {
      const inner = strictObstacle(p, `${at}/properties/${pointerToken(name)}`);
      if (inner !== undefined) return inner;
    }
  } else if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
    return no(at, "additionalProperties other than false");
  }
  if (schema.items !== undefined) {
    const inner = strictObstacle(schema.items, `${at}/items`);
    if (inner !== undefined) return inner;
  }
  if (Array.isArray(schema.anyOf)) {
    for (const [i, s] of schema.anyOf.entries()) {
      const inner = strictObstacle(s, `${at}/anyOf/${i}`);
      if (inner !== undefined) return inner;
    }
  }
  if (isJsonObject(schema.$defs)) {
    for (const [name, s] of Object.entries(schema.$defs)) {
      const inner = strictObstacle(s, `${at}/$defs/${pointerToken(name)}`);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

/**
 * Whether a schema fits the providers' strict subset (see `strictObstacle`). A tool whose schema
 * does not fit is sent non-strict; its arguments are validated by the host either way.
 */
export function isStrictCompatible(schema: unknown): boolean {
  return strictObstacle(schema) === undefined;
}

const REGISTRY_NAME = /^[a-z][a-z0-9_.-]+$/;

/**
 * Providers accept tool names matching `^[a-zA-Z0-9_-]{1,64}$`; registry names may hold dots.
 * Encoding: `.` → `__`; a literal `_` followed by `_` or `.` → `_U` (registry names are lower
 * case, so `U` never follows an underscore otherwise). Every registry name has exactly one
 * encoding and `decodeToolName` inverts it.
 */
export function encodeToolName(name: string): string {
  let out = "";
  for (let i = 0; i < name.length; i++) {
    const c = name[i] as string;
    if (c === ".") out += "__";
    else if (c === "_" && (name[i + 1] === "_" || name[i + 1] === ".")) out += "_U";
    else out += c;
  }
  return out;
}

/** The registry name of an encoded tool name, or undefined when it is no encoding of any name. */
export function decodeToolName(encoded: string): string | undefined {
  let out = "";
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded[i] as string;
    if (c !== "_") {
      out += c;
      continue;
    }
    const next = encoded[i + 1];
    if (next === "_") {
      out += ".";
      i++;
    } else if (next === "U") {
      out += "_";
      i++;
    } else {
      out += "_";
    }
  }
  return REGISTRY_NAME.test(out) && encodeToolName(out) === encoded ? out : undefined;
}
