// What providers are sent: the normalised copy of the seed model-turn schema, the reversible tool
// name encoding, and the synthetic message tool that carries a typed message as a tool call.
import { modelTurnSchema } from "../contracts/schemas.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

function isObject(value: unknown): value is JsonObject {
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
  if (!isObject(schema)) return schema as Json;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$schema" || key === "$id") continue;
    if ((SUBSCHEMA_KEYWORDS as readonly string[]).includes(key)) {
      out[key] = normaliseSchema(value);
    } else if ((SUBSCHEMA_MAPS as readonly string[]).includes(key) && isObject(value)) {
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
 * Whether a schema fits the providers' strict subset: every object closed
 * (`additionalProperties: false`) with every property required, only the supported keywords, and
 * an object root. A tool whose schema does not fit is sent non-strict; its arguments are
 * validated by the host either way.
 */
export function isStrictCompatible(schema: unknown, root = true): boolean {
  if (!isObject(schema)) return false;
  if (root && schema.type !== "object") return false;
  for (const key of Object.keys(schema)) if (!STRICT_KEYWORDS.has(key)) return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("object") || schema.properties !== undefined) {
    if (schema.additionalProperties !== false) return false;
    const props = isObject(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required : [];
    const names = Object.keys(props);
    if (names.length !== required.length || !names.every((n) => required.includes(n))) {
      return false;
    }
    if (!Object.values(props).every((p) => isStrictCompatible(p, false))) return false;
  } else if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
    return false;
  }
  if (schema.items !== undefined && !isStrictCompatible(schema.items, false)) return false;
  if (Array.isArray(schema.anyOf) && !schema.anyOf.every((s) => isStrictCompatible(s, false))) {
    return false;
  }
  if (
    isObject(schema.$defs) &&
    !Object.values(schema.$defs).every((s) => isStrictCompatible(s, false))
  ) {
    return false;
  }
  return true;
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

/**
 * The synthetic tool a model calls to emit its typed message. Registry names start with a lower
 * case letter and their encodings too, so this name can never collide with a registered tool.
 */
export const MESSAGE_TOOL_NAME = "EmitMessage";

export const MESSAGE_TOOL_DESCRIPTION =
  "Emit the passage's typed message and end the passage. `type` is the message type, " +
  "`payload_json` the payload as JSON text, `paper_ref` a reference to a case document or null. " +
  "Call it alone, never together with another tool.";

/** The message tool's input schema, its `type` limited to the role's message types. */
export function messageToolSchema(messageTypes: readonly string[]): JsonObject {
  return {
    type: "object",
    additionalProperties: false,
    required: ["type", "payload_json", "paper_ref"],
    properties: {
      type: { type: "string", enum: [...messageTypes] },
      payload_json: { type: "string", description: "The message payload, as JSON text." },
      paper_ref: { type: ["string", "null"] },
    },
  };
}

/** One native tool call as a provider returned it: its (encoded) name and argument JSON text. */
export interface NativeCall {
  readonly name: string;
  readonly argumentsJson: string;
}

/**
 * The candidate wire turn a tool-calling answer stands for. A lone message-tool call becomes a
 * `message` turn; other calls become `tool_calls` with their names decoded. A mix, or several
 * message calls, is kept as it is so that validation names the fault (never resolved here).
 * An answer without calls is its text, to be parsed as a turn.
 */
export function candidateFromCalls(text: string, calls: readonly NativeCall[]): unknown {
  if (calls.length === 0) return text;
  const toolCalls: JsonObject[] = [];
  let message: Json = null;
  let messages = 0;
  for (const call of calls) {
    if (call.name === MESSAGE_TOOL_NAME && messages === 0) {
      messages++;
      message = parseOrText(call.argumentsJson);
      continue;
    }
    const name = call.name === MESSAGE_TOOL_NAME ? call.name : decodeToolName(call.name);
    toolCalls.push({ name: name ?? call.name, arguments_json: call.argumentsJson });
  }
  return {
    kind: messages > 0 && toolCalls.length === 0 ? "message" : "tool_calls",
    summary: text,
    tool_calls: toolCalls,
    message,
  };
}

function parseOrText(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}
