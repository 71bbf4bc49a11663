// Schema-driven builders for property tests over message payloads: valid payloads generated from a
// payload schema, and every single mutation of one that the schema refuses, with the pointer at
// which the mutation was made.
import fc from "fast-check";
import { pointer as jsonPointer } from "../../src/core/result.js";

type Schema = Readonly<Record<string, unknown>>;

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Valid values of a self-contained schema (no `$ref`), small enough to validate quickly. */
export function arbitraryFor(schema: Schema): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ("const" in schema) return fc.constant(schema.const);
  switch (schema.type) {
    case "string":
      return fc.string({ minLength: Number(schema.minLength ?? 0), maxLength: 8 });
    case "integer":
      return fc.integer();
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(arbitraryFor(schema.items as Schema), {
        minLength: Number(schema.minItems ?? 0),
        maxLength: 3,
      });
    case "object": {
      const props = schema.properties;
      if (!isObject(props)) {
        return fc.dictionary(
          fc.stringMatching(/^[a-z]{1,5}$/),
          fc.oneof(fc.string(), fc.integer()),
          {
            maxKeys: 3,
          },
        );
      }
      const model = Object.fromEntries(
        Object.entries(props).map(([k, v]) => [k, arbitraryFor(v as Schema)] as const),
      );
      return fc.record(model, { requiredKeys: (schema.required as string[] | undefined) ?? [] });
    }
    default:
      throw new Error(`no arbitrary for schema ${JSON.stringify(schema)}`);
  }
}

/** One mutation: the value with it applied, the pointer it names, and the name it adds or drops. */
export interface Mutation {
  readonly kind: string;
  readonly value: unknown;
  readonly pointer: string;
  readonly name?: string;
}

/** A copy of `root` with the node at `path` replaced by `replace(node)`. */
function replaceAt(
  root: unknown,
  path: readonly (string | number)[],
  replace: (n: unknown) => unknown,
): unknown {
  if (path.length === 0) return replace(root);
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  if (Array.isArray(root)) {
    return root.map((v, i) => (i === head ? replaceAt(v, rest, replace) : v));
  }
  const obj = root as Record<string, unknown>;
  return { ...obj, [head]: replaceAt(obj[head as string], rest, replace) };
}

/**
 * Every single mutation of `value` (valid against `schema`) that `schema` refuses: a value of the
 * wrong type anywhere; an unknown property in a closed object; a required property removed; a
 * value outside an enum; an empty string below a minLength; an empty array below a minItems.
 */
export function mutations(root: unknown, schema: Schema): Mutation[] {
  const out: Mutation[] = [];
  const walk = (node: unknown, s: Schema, path: (string | number)[]) => {
    const pointer = jsonPointer(...path);
    const at = (replace: (n: unknown) => unknown) => replaceAt(root, path, replace);
    out.push({
      kind: "wrong-type",
      value: at(() => (s.type === "string" || Array.isArray(s.enum) ? 12345 : "wrong")),
      pointer,
    });
    if (Array.isArray(s.enum) && s.enum.every((v) => typeof v === "string")) {
      out.push({ kind: "outside-enum", value: at(() => "zz-not-allowed"), pointer });
    }
    if (typeof s.minLength === "number" && s.minLength > 0) {
      out.push({ kind: "too-short", value: at(() => ""), pointer });
    }
    if (Array.isArray(node)) {
      if (typeof s.minItems === "number" && s.minItems > 0) {
        out.push({ kind: "too-few", value: at(() => []), pointer });
      }
      node.forEach((item, i) => {
        walk(item, s.items as Schema, [...path, i]);
      });
      return;
    }
    if (!isObject(node) || !isObject(s.properties)) return;
    if (s.additionalProperties === false) {
      out.push({
        kind: "unknown-property",
        value: at((n) => ({ ...(n as object), zz_unknown: 1 })),
        pointer,
        name: "zz_unknown",
      });
    }
    for (const key of (s.required as string[] | undefined) ?? []) {
      out.push({
        kind: "missing-required",
        value: at((n) => {
          const { [key]: _gone, ...rest } = n as Record<string, unknown>;
          return rest;
        }),
        pointer,
        name: key,
      });
    }
    for (const [key, v] of Object.entries(node)) {
      const sub = (s.properties as Record<string, Schema>)[key];
      if (sub !== undefined) walk(v, sub, [...path, key]);
    }
  };
  walk(root, schema, []);
  return out;
}
