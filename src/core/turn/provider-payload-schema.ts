// The payload schemas as providers are sent them: self-contained (every `$ref` inlined, no `$defs`,
// `$id` or `$schema`), enums typed, and narrowed where the host accepts less than the contract (a
// Plan step's `action`). Plus the strict form (every property required, optional ones nullable) and
// the way back from it: the nulls it introduced are dropped before the payload is validated.
import { WarrantError } from "../result.js";
import { PAYLOAD_SCHEMA_IDS, PAYLOAD_SCHEMAS } from "./payload-schemas.js";
import { isJsonObject, type Json, type JsonObject, normaliseSchema } from "./provider-schema.js";
import { MESSAGE_TYPES, type MessageType } from "./types.js";

/** The step kinds a host admits (`plan/unknown-action-kind` refuses any other). */
export const PLAN_STEP_ACTIONS = ["observe", "patch", "command"] as const;

const BY_ID: ReadonlyMap<string, MessageType> = new Map(
  MESSAGE_TYPES.map((t) => [PAYLOAD_SCHEMA_IDS[t], t] as const),
);

/** Replaces every `$ref` (local `#/$defs/…` or another payload's `urn:warrant:…`) by its target. */
function inline(node: Json, root: JsonObject): Json {
  if (Array.isArray(node)) return node.map((n) => inline(n, root));
  if (!isJsonObject(node)) return node;
  const ref = node.$ref;
  if (typeof ref === "string") {
    const { $ref: _ref, ...siblings } = node;
    return { ...(inline(resolve(ref, root), root) as JsonObject), ...siblings };
  }
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$defs") continue;
    out[key] =
      key === "properties" || key === "enum" || key === "const"
        ? inlineMap(key, value, root)
        : inline(value, root);
  }
  return out;
}

/** `properties` maps names to schemas; `enum` and `const` hold data, never schemas. */
function inlineMap(key: string, value: Json, root: JsonObject): Json {
  if (key !== "properties" || !isJsonObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v, root)] as const));
}

function resolve(ref: string, root: JsonObject): Json {
  if (ref.startsWith("#/$defs/")) {
    const defs = root.$defs;
    const target = isJsonObject(defs) ? defs[ref.slice("#/$defs/".length)] : undefined;
    if (target !== undefined) return target;
  }
  const type = BY_ID.get(ref);
  if (type !== undefined) {
    const other = normaliseSchema(PAYLOAD_SCHEMAS[type]) as JsonObject;
    return inline(withoutHeader(other), other);
  }
  // Payload schemas are ours and reference only each other: an unknown ref is a broken contract.
  throw new WarrantError("internal/payload-schema", `unresolvable $ref ${ref} in a payload schema`);
}

/** The root's `title` and `description` speak to schema readers; a tool says what it is for. */
function withoutHeader(schema: JsonObject): JsonObject {
  const { title: _t, description: _d, ...rest } = schema;
  return rest;
}

/** Narrowings: the provider copy asks for no more than the host will admit. */
function narrow(type: MessageType, schema: JsonObject): JsonObject {
  if (type !== "Plan") return schema;
  const steps = (schema.properties as JsonObject).steps as JsonObject;
  const step = steps.items as JsonObject;
  const props = step.properties as JsonObject;
  const { minLength: _min, ...action } = props.action as JsonObject;
  return {
    ...schema,
    properties: {
      ...(schema.properties as JsonObject),
      steps: {
        ...steps,
        items: {
          ...step,
          properties: { ...props, action: { ...action, enum: [...PLAN_STEP_ACTIONS] } },
        },
      },
    },
  };
}

/**
 * The payload schema of a message type as sent to providers: what the contract accepts, narrowed
 * where the host is narrower, with every reference inlined (no provider resolves `urn:` refs, and
 * local servers' grammar compilers handle inline schemas best). A fresh object per call.
 */
export function providerPayloadSchema(type: MessageType): JsonObject {
  return narrow(type, inlinedPayloadSchema(type));
}

/** The payload schema, self-contained, accepting exactly what the contract accepts. */
export function inlinedPayloadSchema(type: MessageType): JsonObject {
  const normalised = normaliseSchema(PAYLOAD_SCHEMAS[type]) as JsonObject;
  return inline(withoutHeader(normalised), normalised) as JsonObject;
}

function nullable(schema: Json): Json {
  if (!isJsonObject(schema)) return schema;
  const t = schema.type;
  if (
    typeof t === "string" &&
    t !== "object" &&
    t !== "array" &&
    schema.enum === undefined &&
    schema.const === undefined
  ) {
    return { ...schema, type: [t, "null"] };
  }
  // The description says what the property is, whichever branch the value takes.
  const { description, ...rest } = schema;
  const wrapped: JsonObject = { anyOf: [rest, { type: "null" }] };
  if (description !== undefined) wrapped.description = description;
  return wrapped;
}

/**
 * The strict form of a schema: every object lists all its properties as required, and a property
 * that was optional accepts null instead (OpenAI's strict subset has no optional properties). An
 * answer in this form goes back through `dropIntroducedNulls` before validation.
 */
export function strictForm(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(strictForm);
  if (!isJsonObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "items") out.items = strictForm(value);
    else if (key === "anyOf" && Array.isArray(value)) out.anyOf = value.map(strictForm);
    else out[key] = value;
  }
  const props = schema.properties;
  if (isJsonObject(props)) {
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    out.properties = Object.fromEntries(
      Object.entries(props).map(([name, p]) => {
        const strict = strictForm(p);
        return [name, required.has(name) ? strict : nullable(strict)] as const;
      }),
    );
    out.required = Object.keys(props);
  }
  return out;
}

function acceptsNull(schema: Json | undefined): boolean {
  if (!isJsonObject(schema)) return true;
  const t = schema.type;
  if (t === "null" || (Array.isArray(t) && t.includes("null"))) return true;
  if (Array.isArray(schema.anyOf)) return schema.anyOf.some(acceptsNull);
  return t === undefined && schema.enum === undefined && schema.const === undefined;
}

/**
 * A payload written against `strictForm(schema)` read back against `schema`: a null given for a
 * property the schema leaves optional (and that does not itself accept null) means "absent" and is
 * dropped, at any depth. Anything else is kept as written, for validation to judge.
 */
export function dropIntroducedNulls(value: unknown, schema: Json): unknown {
  if (!isJsonObject(schema)) return value;
  if (Array.isArray(value)) {
    return schema.items === undefined
      ? value
      : value.map((v) => dropIntroducedNulls(v, schema.items as Json));
  }
  if (typeof value !== "object" || value === null) return value;
  const props = isJsonObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as Json[]) : [];
  const kept: [string, unknown][] = [];
  for (const [key, v] of Object.entries(value)) {
    const sub = Object.hasOwn(props, key) ? props[key] : undefined;
    if (v === null && sub !== undefined && !required.includes(key) && !acceptsNull(sub)) continue;
    kept.push([key, sub === undefined ? v : dropIntroducedNulls(v, sub)]);
  }
  // fromEntries defines own properties: a `__proto__` key the model wrote stays a property, for
  // validation to refuse, instead of becoming the object's prototype.
  return Object.fromEntries(kept);
}
