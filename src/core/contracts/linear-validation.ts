// Schema validation whose cost stays linear in the size of the value. Ajv in allErrors mode joins a
// referenced validator's errors with `vErrors.concat(…)` once per failing array element, copying
// every error gathered so far: an array of n invalid elements costs O(n²) (32 000 elements: 3 s;
// 1 M: about an hour). Here each array longer than SPLIT_LENGTH is taken out of the value and its
// elements are validated one by one against the items schema, each with errors of its own; the
// rest of the value is validated with that array emptied, and the array's own length keywords are
// checked from the schema. Errors are bounded (MAX_ERRORS): once that many are found, the elements
// left are not checked, and one more error says so.
import type { ErrorObject, Validator } from "./ajv.js";

/** Arrays longer than this are validated element by element. */
export const SPLIT_LENGTH = 256;
/** Validation of a split array stops once this many errors are found (one more error says so). */
export const MAX_ERRORS = 256;
/** Schema nesting followed when looking for long arrays (deeper ones are left to the validator). */
const MAX_WALK_DEPTH = 128;

export interface SchemaSource {
  /** The root schema document: local `$ref`s (`#…`) resolve in it. */
  readonly root: object;
  /** A validator for the subschema at `pointer` (a JSON Pointer into root), compiled once. */
  validatorAt(pointer: string): Validator;
}

export interface LinearOptions {
  /** Arrays longer than this are split (tests lower it to compare both paths on small values). */
  readonly splitLength?: number;
  readonly maxErrors?: number;
}

type Json = Readonly<Record<string, unknown>>;

/** Keywords that look at an array as a whole: checked here or, when present, not split at all. */
const LENGTH_KEYWORDS = new Set(["minItems", "maxItems"]);
const WHOLE_ARRAY_KEYWORDS = [
  "prefixItems",
  "contains",
  "uniqueItems",
  "unevaluatedItems",
  "minContains",
  "maxContains",
];
const COMBINATORS = ["allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"];
/** Keywords that do not constrain the value beside a `$ref`. */
const ANNOTATIONS = new Set(["$ref", "description", "title", "$comment", "examples", "default"]);

interface LongArray {
  /** Path of the array in the value, as tokens. */
  readonly path: readonly (string | number)[];
  readonly items: readonly unknown[];
  /** Pointer of the items schema in the root. */
  readonly itemsPointer: string;
  readonly minItems?: number;
  readonly maxItems?: number;
}

function isObject(x: unknown): x is Json {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function token(t: string | number): string {
  return String(t).replaceAll("~", "~0").replaceAll("/", "~1");
}

function schemaAt(root: object, pointer: string): unknown {
  let cur: unknown = root;
  if (pointer === "") return cur;
  for (const raw of pointer.slice(1).split("/")) {
    const t = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (!isObject(cur)) return undefined;
    cur = cur[t];
  }
  return cur;
}

/** The schema at `pointer` after local `$ref`s, or undefined when it cannot be followed safely. */
function resolve(root: object, pointer: string): { node: Json; pointer: string } | undefined {
  let p = pointer;
  for (let hops = 0; hops < 16; hops++) {
    const node = schemaAt(root, p);
    if (!isObject(node)) return undefined;
    const ref = node.$ref;
    if (ref === undefined) return { node, pointer: p };
    if (typeof ref !== "string" || !ref.startsWith("#")) return undefined;
    if (Object.keys(node).some((k) => !ANNOTATIONS.has(k))) return undefined;
    p = decodeURIComponent(ref.slice(1));
  }
  return undefined;
}

/** True when a combinator of `node` could look at property `key` (then nothing under it is split). */
function combinatorsMention(node: Json, key: string): boolean {
  const quoted = JSON.stringify(key);
  return COMBINATORS.some((c) => node[c] !== undefined && JSON.stringify(node[c]).includes(quoted));
}

/** One validation's settings and its memo of resolved schema pointers. */
interface Walk {
  readonly source: SchemaSource;
  readonly split: number;
  readonly max: number;
  readonly resolved: Map<string, { node: Json; pointer: string } | undefined>;
  /** Memo of combinatorsMention by schema pointer and property. */
  readonly mentioned: Map<string, boolean>;
}

function resolved(walk: Walk, pointer: string): { node: Json; pointer: string } | undefined {
  if (walk.resolved.has(pointer)) return walk.resolved.get(pointer);
  const at = resolve(walk.source.root, pointer);
  walk.resolved.set(pointer, at);
  return at;
}

function findLongArrays(
  walk: Walk,
  pointer: string,
  value: unknown,
  path: (string | number)[],
  out: LongArray[],
  depth: number,
): void {
  if (depth > MAX_WALK_DEPTH || typeof value !== "object" || value === null) return;
  const at = resolved(walk, pointer);
  if (at === undefined) return;
  const { node } = at;
  if (Array.isArray(value)) {
    if (!isObject(node.items)) return;
    if (WHOLE_ARRAY_KEYWORDS.some((k) => node[k] !== undefined)) return;
    if (COMBINATORS.some((c) => node[c] !== undefined)) return;
    const itemsPointer = `${at.pointer}/items`;
    if (value.length > walk.split) {
      out.push({
        path: [...path],
        items: value,
        itemsPointer,
        ...(typeof node.minItems === "number" ? { minItems: node.minItems } : {}),
        ...(typeof node.maxItems === "number" ? { maxItems: node.maxItems } : {}),
      });
      return;
    }
    value.forEach((element, i) => {
      path.push(i);
      findLongArrays(walk, itemsPointer, element, path, out, depth + 1);
      path.pop();
    });
    return;
  }
  if (!isObject(value) || !isObject(node.properties)) return;
  for (const key of Object.keys(node.properties)) {
    if (!Object.hasOwn(value, key)) continue;
    const memo = `${at.pointer}\u0000${key}`;
    let mentioned = walk.mentioned.get(memo);
    if (mentioned === undefined) {
      mentioned = combinatorsMention(node, key);
      walk.mentioned.set(memo, mentioned);
    }
    if (mentioned) continue;
    path.push(key);
    findLongArrays(
      walk,
      `${at.pointer}/properties/${token(key)}`,
      value[key],
      path,
      out,
      depth + 1,
    );
    path.pop();
  }
}

/** A copy of `value` with each long array emptied (only the containers on the way are copied). */
function withoutLongArrays(value: unknown, arrays: readonly LongArray[]): unknown {
  let copy = value;
  for (const a of arrays) copy = replaceAt(copy, a.path, 0, []);
  return copy;
}

function replaceAt(
  value: unknown,
  path: readonly (string | number)[],
  i: number,
  replacement: unknown,
): unknown {
  if (i === path.length) return replacement;
  const t = path[i] as string | number;
  if (Array.isArray(value)) {
    const copy = [...value];
    copy[t as number] = replaceAt(value[t as number], path, i + 1, replacement);
    return copy;
  }
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Json)) {
    Object.defineProperty(copy, k, {
      value: v,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  copy[t as string] = replaceAt((value as Json)[t as string], path, i + 1, replacement);
  return copy;
}

function lengthError(
  instancePath: string,
  keyword: "minItems" | "maxItems",
  limit: number,
): ErrorObject {
  return {
    instancePath,
    schemaPath: `#/${keyword}`,
    keyword,
    params: { limit },
    message:
      keyword === "maxItems"
        ? `must NOT have more than ${limit} items`
        : `must NOT have fewer than ${limit} items`,
  };
}

/**
 * Validate `value` against the schema at `pointer` of `source` (whose validator is `validate`):
 * null when valid, else its errors in Ajv's shape: the same errors as `validate` alone (in another
 * order) in time linear in the value, but no more than about `maxErrors` of them (then one error
 * per split array names the elements left unchecked).
 */
export function validateLinear(
  validate: Validator,
  source: SchemaSource,
  value: unknown,
  options: LinearOptions = {},
): ErrorObject[] | null {
  const walk: Walk = {
    source,
    split: options.splitLength ?? SPLIT_LENGTH,
    max: options.maxErrors ?? MAX_ERRORS,
    resolved: new Map(),
    mentioned: new Map(),
  };
  return validateAt(walk, validate, "", value);
}

function validateAt(
  walk: Walk,
  validate: Validator,
  pointer: string,
  value: unknown,
): ErrorObject[] | null {
  const { source, max } = walk;
  const long: LongArray[] = [];
  findLongArrays(walk, pointer, value, [], long, 0);
  if (long.length === 0) {
    return validate(value) ? null : [...(validate.errors ?? [])];
  }
  const errors: ErrorObject[] = [];
  const paths = new Set(long.map((a) => a.path.map((t) => `/${token(t)}`).join("")));
  if (!validate(withoutLongArrays(value, long))) {
    for (const e of validate.errors ?? []) {
      if (LENGTH_KEYWORDS.has(e.keyword) && paths.has(e.instancePath)) continue;
      if (errors.length < max) errors.push(e);
    }
  }
  for (const a of long) {
    const at = a.path.map((t) => `/${token(t)}`).join("");
    if (a.minItems !== undefined && a.items.length < a.minItems)
      errors.push(lengthError(at, "minItems", a.minItems));
    if (a.maxItems !== undefined && a.items.length > a.maxItems)
      errors.push(lengthError(at, "maxItems", a.maxItems));
    const element = source.validatorAt(a.itemsPointer);
    for (let i = 0; i < a.items.length; i++) {
      if (errors.length >= max) {
        // Validating on would only make garbage: the elements from here on are not checked.
        errors.push({
          instancePath: at,
          schemaPath: "#/items",
          keyword: "items",
          params: { unchecked: a.items.length - i },
          message: `items ${i} to ${a.items.length - 1} were not checked: validation stops after ${max} errors`,
        });
        break;
      }
      const found = validateAt(walk, element, a.itemsPointer, a.items[i]);
      for (const e of found ?? []) {
        if (errors.length < max) errors.push({ ...e, instancePath: `${at}/${i}${e.instancePath}` });
      }
    }
  }
  return errors.length === 0 ? null : errors;
}
