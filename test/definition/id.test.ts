// The content ID of a definition (docs/spec/definitions.md): JCS → BLAKE3-256 → CIDv1 json-jcs, base32 lower.
import { describe, expect, it } from "vitest";
import { CODEC_JSON_JCS, decodeCid, jsonJcsCid } from "../../src/core/cid/cid.js";
import { storedForm } from "../../src/core/definition/canonical-form.js";
import { agentIdOf, definitionId, storedFormId } from "../../src/core/definition/id.js";
import { validateDefinition } from "../../src/core/definition/validate.js";
import { canonicalBytes } from "../../src/core/records/canonical.js";
import { type Doc, full, type Json, minimal, text } from "./fixtures.js";

function idOf(doc: Doc): string {
  const r = validateDefinition(text(doc));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value.id;
}

/** Every leaf of a JSON value with a way to replace it. */
function leaves(v: Json, path: Array<string | number> = []): Array<Array<string | number>> {
  if (v === null || typeof v !== "object") return [path];
  const entries: Array<[string | number, Json]> = Array.isArray(v)
    ? v.map((x, i) => [i, x])
    : Object.entries(v);
  if (entries.length === 0) return [path];
  return entries.flatMap(([k, x]) => leaves(x, [...path, k]));
}

function changed(doc: Doc, path: Array<string | number>): Doc {
  const copy = structuredClone(doc);
  let cur = copy as unknown as Record<string | number, Json>;
  for (const k of path.slice(0, -1)) cur = cur[k] as unknown as Record<string | number, Json>;
  const last = path[path.length - 1] as string | number;
  const v = cur[last] as Json;
  cur[last] =
    typeof v === "string"
      ? `${v}x`
      : typeof v === "number"
        ? v + 1
        : typeof v === "boolean"
          ? !v
          : v === null
            ? 0
            : Array.isArray(v)
              ? [0]
              : { x: 0 };
  return copy;
}

describe("definition content ID", () => {
  it("wraps the JCS vector of docs/spec/contracts.md as json-jcs", () => {
    const vector = { z: [3, 2, 1], a: { b: true, a: "ą" }, n: 1 };
    expect(new TextDecoder().decode(canonicalBytes(vector))).toBe(
      '{"a":{"a":"ą","b":true},"n":1,"z":[3,2,1]}',
    );
    expect(jsonJcsCid(canonicalBytes(vector))).toBe(
      "baga6yaq6ec5i2l3xglebvwle24oecz4piib2aolqwxuf7zwzmz4md5b6osfyq",
    );
    expect(definitionId(vector as unknown as Record<string, unknown>)).toBe(
      "baga6yaq6ec5i2l3xglebvwle24oecz4piib2aolqwxuf7zwzmz4md5b6osfyq",
    );
  });

  it("is a json-jcs CIDv1 with a BLAKE3 digest, and agent ids wrap it", () => {
    const id = idOf(minimal());
    expect(id.startsWith("baga6yaq6")).toBe(true);
    const d = decodeCid(id, CODEC_JSON_JCS);
    expect(d.ok && d.value.digest.length).toBe(32);
    expect(agentIdOf(id)).toBe(`agent:${id}`);
  });

  it("is the same for key order, whitespace, null optionals and an omitted graph list", () => {
    const base = full();
    const a = idOf(base);
    const reordered = Object.fromEntries(Object.entries(base).reverse()) as Doc;
    expect(idOf(reordered)).toBe(a);
    expect(validateDefinition(JSON.stringify(base)).ok && a).toBe(a);
    const withNulls = structuredClone(base);
    withNulls.version = "1.2.3";
    (withNulls.tools as Array<{ [k: string]: Json }>)[1]!.sourceHash = null;
    (
      (withNulls.models as Array<{ [k: string]: Json }>)[0]!.settings as { [k: string]: Json }
    ).seed = null;
    expect(idOf(withNulls)).toBe(a);
    const noEdges = structuredClone(base);
    const filled = structuredClone(base);
    (noEdges.graph as { [k: string]: Json }).edges = [];
    delete (filled.graph as { [k: string]: Json }).edges;
    expect(idOf(filled)).toBe(idOf(noEdges));
  });

  it("keeps nulls inside free-form extensions and config: they are data", () => {
    const a = full();
    const b = full();
    (b.extensions as { [k: string]: Json }).extra = null;
    expect(idOf(b)).not.toBe(idOf(a));
  });

  it("changes when any single field changes", () => {
    const base = validateDefinition(text(full()));
    if (!base.ok) throw new Error("full() is valid");
    const stored = base.value.definition as unknown as Doc;
    const original = definitionId(stored);
    const paths = leaves(stored as unknown as Json);
    expect(paths.length).toBeGreaterThan(100);
    const ids = new Set([original]);
    for (const p of paths) ids.add(definitionId(changed(stored, p)));
    expect(ids.size).toBe(paths.length + 1);
  });

  it("changes when an optional field is removed", () => {
    const base = full();
    const original = idOf(base);
    for (const key of [
      "version",
      "description",
      "guardrails",
      "extensions",
      "graph",
      "subAgents",
    ]) {
      const d = structuredClone(base);
      delete d[key];
      expect(idOf(d)).not.toBe(original);
    }
  });

  it("hashed chunk by chunk, is the ID of the whole canonical text, on varied definitions", () => {
    /** The content ID as it was first made: one JCS string of the stored form, then BLAKE3. */
    const wholeStringId = (d: Readonly<Record<string, unknown>>) =>
      jsonJcsCid(canonicalBytes(storedForm(d)));
    const many = (n: number, f: (i: number) => Json): Json[] =>
      Array.from({ length: n }, (_, i) => f(i));
    const docs: Doc[] = [
      minimal(),
      full(),
      {
        ...full(),
        description:
          'ünïcödé: 日本語, emoji \u{1F600}\u{1F9D1}\u200D\u{1F4BB}, escapes "\\\n\t\u0000\u001f\u2028',
        extensions: {
          nested: [[[], [[1, [2, [3, ["x"]]]]]], { "\u{10FFFF}": [null, true, false] }],
          numbers: [
            0,
            -0,
            1,
            -1,
            0.1,
            1e-7,
            123456789012345,
            -5e-324,
            2 ** 53 - 1,
            1.5e-300,
            123.456e5,
          ],
          "": { é: 1, e: 2, "\uFB33": 3, "\u{1F600}": 4, "10": 5, "9": 6 },
        },
      },
      // Long enough that the canonical text spans many chunks, with multi-byte text at every edge.
      {
        ...minimal(),
        models: many(20_000, (i) => ({
          provider: `p${i % 3}`,
          model: `模型-${i}-${"é".repeat(i % 11)}`,
        })),
        extensions: {
          long: "\u{1F600}".repeat(40_000),
          list: many(5_000, (i) => [i, i / 3, `${i}`]),
        },
      },
    ];
    for (const d of docs) {
      const expected = wholeStringId(d);
      expect(definitionId(d)).toBe(expected);
      expect(storedFormId(storedForm(d))).toBe(expected);
      const r = validateDefinition(JSON.stringify(d));
      if (!r.ok) throw new Error(JSON.stringify(r.errors.slice(0, 3)));
      expect(r.value.id).toBe(expected);
    }
  });
});
