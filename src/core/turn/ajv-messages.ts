// Ajv errors as sentences a model can act on: each names the JSON Pointer of the offending value and
// the property or value at fault (`/steps/0: unknown property "bogus"`). Values are quoted in short
// previews, so a hostile document cannot blow up the text that quotes it.
import type { ErrorObject } from "../contracts/ajv.js";

const PREVIEW_CHARS = 60;

/** A pointer as printed: the root is `(root)`. */
export function showPointer(pointer: string): string {
  return pointer === "" ? "(root)" : pointer;
}

function clip(text: string): string {
  return text.length <= PREVIEW_CHARS ? text : `${text.slice(0, PREVIEW_CHARS)}…`;
}

/** A name (a property, a format) quoted and cut to a readable length. */
function quoted(name: string): string {
  return JSON.stringify(clip(name));
}

/** A short rendering of a value: scalars as JSON (strings cut), containers by their size. */
export function preview(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") return quoted(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === "object" && value !== null) return "an object";
  if (typeof value === "number" || typeof value === "boolean" || value === null) {
    return clip(String(JSON.stringify(value)));
  }
  // Not a JSON value (validateTurn is also handed parsed values from code): name its type.
  return `a ${typeof value}`;
}

/** The JSON type of a value, in the schema's words. */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** The value a JSON Pointer names inside `data`, or undefined where it names nothing. */
export function valueAt(data: unknown, pointer: string): unknown {
  if (pointer === "") return data;
  let node: unknown = data;
  for (const raw of pointer.slice(1).split("/")) {
    const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}

function list(values: readonly unknown[]): string {
  return values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ");
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** What is wrong, without the pointer; `value` is the offending value at the error's pointer. */
function fault(e: ErrorObject, value: unknown): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "additionalProperties":
      return `unknown property ${quoted(String(p.additionalProperty))}`;
    case "unevaluatedProperties":
      return `unknown property ${quoted(String(p.unevaluatedProperty))}`;
    case "required":
      return `missing required property ${quoted(String(p.missingProperty))}`;
    case "dependentRequired":
    case "dependencies":
      return `missing property ${quoted(String(p.missingProperty))}, required when ${quoted(String(p.property))} is present`;
    case "type": {
      const wanted = Array.isArray(p.type)
        ? p.type.join(" or ")
        : String(p.type).split(",").join(" or ");
      return `expected ${wanted}, got ${jsonType(value)}${typeof value === "object" && value !== null ? "" : ` ${preview(value)}`}`;
    }
    case "enum":
      return `${preview(value)} is not one of ${list(p.allowedValues as unknown[])}`;
    case "const":
      return `must be ${clip(JSON.stringify(p.allowedValue))}, not ${preview(value)}`;
    case "pattern":
      return `${preview(value)} does not match the pattern ${clip(String(p.pattern))}`;
    case "format":
      return `${preview(value)} is not a valid ${String(p.format)}`;
    case "minLength":
      return `${preview(value)} is shorter than ${plural(Number(p.limit), "character")}`;
    case "maxLength":
      return `${preview(value)} is longer than ${plural(Number(p.limit), "character")}`;
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `${preview(value)} is not ${String(p.comparison)} ${String(p.limit)}`;
    case "multipleOf":
      return `${preview(value)} is not a multiple of ${String(p.multipleOf)}`;
    case "minItems":
      return `has ${plural(Array.isArray(value) ? value.length : 0, "item")}, fewer than the ${Number(p.limit)} required`;
    case "maxItems":
      return `has ${plural(Array.isArray(value) ? value.length : 0, "item")}, more than the ${Number(p.limit)} allowed`;
    case "minProperties":
      return `has fewer than ${plural(Number(p.limit), "property")}`;
    case "maxProperties":
      return `has more than ${plural(Number(p.limit), "property")}`;
    case "uniqueItems":
      return `items ${String(p.j)} and ${String(p.i)} are equal; items must be unique`;
    case "anyOf":
      return `${preview(value)} matches none of the allowed forms`;
    case "oneOf":
      return p.passingSchemas === null
        ? `${preview(value)} matches none of the allowed forms`
        : `${preview(value)} matches more than one of the allowed forms (${list(p.passingSchemas as unknown[])})`;
    case "propertyNames":
      return `property name ${quoted(String(p.propertyName))} is not allowed`;
    case "not":
      return `${preview(value)} matches a form that is not allowed`;
    case "false schema":
      return "no value is allowed here";
    default:
      return e.message ?? `fails ${e.keyword}`;
  }
}

/** `POINTER: what is wrong`, the pointer relative to the document validated (`data`). */
export function describeAjvError(e: ErrorObject, data: unknown): string {
  return `${showPointer(e.instancePath)}: ${fault(e, valueAt(data, e.instancePath))}`;
}
