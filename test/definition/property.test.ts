// Property tests: over random and mutated definitions the reader and validator never throw, every
// rejection carries a code, a JSON Pointer and a message, and every acceptance has a stable ID.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readDefinition } from "../../src/core/definition/read.js";
import { validateDefinition, validateDefinitionValue } from "../../src/core/definition/validate.js";
import { canonicalJson } from "../../src/core/records/canonical.js";
import type { Result } from "../../src/core/result.js";
import { full, type Json, MEMORY_CID, PROMPT_CID, SKILL_CID, text } from "./fixtures.js";

const POINTER = /^(\/([^~/]|~[01])*)*$/;
const CODE = /^definition\/[a-z-]+$/;

function wellFormed(r: Result<unknown>): void {
  if (r.ok) return;
  expect(r.errors.length).toBeGreaterThan(0);
  for (const e of r.errors) {
    expect(e.code).toMatch(CODE);
    expect(e.path).toMatch(POINTER);
    expect(e.message.length).toBeGreaterThan(0);
  }
}

function checked(r: ReturnType<typeof validateDefinition>): void {
  wellFormed(r);
  if (!r.ok) return;
  expect(r.value.id.startsWith("baga6yaq6")).toBe(true);
  // The stored form validates to the same ID.
  const again = validateDefinition(canonicalJson(r.value.definition));
  expect(again.ok && again.value.id).toBe(r.value.id);
}

const ws = fc.constantFrom(" ", "\t", "\u0085", "\u00a0", "\u3000", "\ufeff", "\u200b", "");
const word = fc.oneof(
  fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,12}$/),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: "grapheme", maxLength: 6 }),
  fc.array(ws, { maxLength: 3 }).map((x) => x.join("")),
);
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
const schemas = fc.constantFrom<Json>(
  {},
  { type: "object" },
  { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
  { type: "array" },
  { type: "object", properties: { a: { type: "strng" } } },
  { $ref: "#/$defs/x" },
  { type: ["object", "null"], minProperties: 1 },
);
const model = fc.oneof(
  fc.record({ provider: word, model: word }),
  fc.tuple(word, word),
  fc.record({
    provider: word,
    model: word,
    settings: fc.record(
      {
        betas: fc.array(fc.constantFrom("a", "b-c", "zz", "Bad"), { maxLength: 3 }),
        maxTokens: fc.oneof(fc.nat(), fc.constant(-1), fc.constant(null)),
        temperature: fc.oneof(
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.constant(null),
        ),
        thinking: fc.oneof(
          fc.record({ type: fc.constantFrom("enabled", "disabled", "adaptive", "x") }),
          fc.record({ type: fc.constantFrom("enabled", "disabled"), budgetTokens: fc.nat() }),
          fc.tuple(fc.constantFrom("enabled", "x")),
          fc.constant(null),
        ),
      },
      { requiredKeys: [] },
    ),
  }),
);
const prompt = fc.oneof(
  fc.record(
    {
      role: fc.oneof(fc.constantFrom("system", "developer", "user"), fc.constant({ system: null })),
      content: fc.oneof(word, fc.constant(null)),
      contentCid: fc.constantFrom(PROMPT_CID, `bafkr4iz${"a".repeat(51)}`, "nope", null),
    },
    { requiredKeys: ["role"] },
  ),
  fc.tuple(fc.constantFrom("system", "developer")),
);
const server = fc.record(
  {
    name: word,
    transport: fc.oneof(
      fc.constantFrom("stdio", "sse", "streamable_http", "ws"),
      fc.constant({ sse: null }),
    ),
    command: fc.constantFrom("node", "curl https://h/?token=x", null),
    args: fc.array(fc.constantFrom("-y", "postgres://u:p@h/db", "https://h/?max_tokens=1"), {
      maxLength: 2,
    }),
    url: fc.constantFrom(
      "https://h.example/mcp",
      "http://h:70000/",
      "https://h/?API_KEY=1",
      "ftp://x/",
      null,
    ),
  },
  { requiredKeys: ["name", "transport"] },
);
const memory = fc.record(
  {
    path: word,
    backend: word,
    writable: fc.boolean(),
    cid: fc.constantFrom(MEMORY_CID, null),
    scope: fc.oneof(
      fc.record({ kind: fc.constantFrom("shared", "namespace", "thread", "all") }),
      fc.record({
        kind: fc.constantFrom("shared", "namespace"),
        sourceHash: fc.constant(`sha256:${"a".repeat(64)}`),
      }),
      fc.tuple(fc.constant({ thread: null })),
      fc.constant(null),
    ),
  },
  { requiredKeys: ["path", "backend", "writable"] },
);

function definitionArb(depth: number): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .record(
      {
        schema: fc.constantFrom("viper/agent-definition/v1", "v2"),
        name: fc.oneof(fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/), word),
        version: optional(fc.oneof(word, fc.constant(null))),
        description: optional(word),
        framework: fc.oneof(fc.record({ name: word }), fc.tuple(word), fc.tuple(word, word)),
        models: fc.array(model, { minLength: 0, maxLength: 3 }),
        prompts: optional(fc.array(prompt, { maxLength: 3 })),
        tools: optional(
          fc.array(
            fc.oneof(
              fc.record({ name: word, description: word, inputSchema: schemas }),
              fc.tuple(word, word, schemas),
            ),
            {
              maxLength: 3,
            },
          ),
        ),
        mcpServers: optional(fc.array(server, { maxLength: 2 })),
        memory: optional(fc.array(memory, { maxLength: 2 })),
        skills: optional(
          fc.array(fc.record({ name: word, cid: fc.constantFrom(SKILL_CID, "bagaachra") }), {
            maxLength: 2,
          }),
        ),
        middleware: optional(
          fc.array(
            fc.record(
              {
                name: word,
                config: fc.dictionary(
                  word,
                  fc.oneof(
                    fc.jsonValue({ maxDepth: 2 }),
                    fc.record({ "@model": fc.integer({ min: -1, max: 3 }) }),
                  ),
                ),
              },
              { requiredKeys: ["name"] },
            ),
            { maxLength: 2 },
          ),
        ),
        graph: optional(
          fc.record(
            {
              nodes: fc.array(fc.constantFrom("a", "b"), { maxLength: 2 }),
              edges: fc.array(
                fc.tuple(
                  fc.constantFrom("a", "c", "__start__"),
                  fc.constantFrom("b", "__end__"),
                  fc.boolean(),
                ),
                { maxLength: 2 },
              ),
            },
            { requiredKeys: [] },
          ),
        ),
        extensions: optional(fc.dictionary(word, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 })),
        subAgents:
          depth > 0
            ? optional(fc.array(definitionArb(depth - 1), { maxLength: 2 }))
            : fc.constant(undefined),
      },
      { requiredKeys: [] },
    )
    .map((d) => Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)));
}

const base = text(full());

const mutation = fc.oneof(
  fc.record({
    kind: fc.constant("delete" as const),
    at: fc.nat(),
    len: fc.integer({ min: 1, max: 40 }),
  }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat(),
    what: fc.oneof(
      fc.constantFrom(
        '"',
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\\u",
        "\\uD800",
        "\ud800",
        "9007199254740993",
        "1e400",
        "null",
        '"a":1,',
        "-",
        "0.",
        "\u0000",
      ),
      fc.string({ maxLength: 6 }),
      fc.string({ unit: "binary", maxLength: 4 }),
    ),
  }),
  fc.record({
    kind: fc.constant("duplicate" as const),
    at: fc.nat(),
    len: fc.integer({ min: 1, max: 80 }),
  }),
);

function mutate(
  s: string,
  ms: ReadonlyArray<
    fc.Arbitrary<unknown> extends never
      ? never
      : { kind: string; at: number; len?: number; what?: string }
  >,
): string {
  let out = s;
  for (const m of ms) {
    const at = m.at % (out.length + 1);
    if (m.kind === "delete") out = out.slice(0, at) + out.slice(at + (m.len ?? 1));
    else if (m.kind === "insert") out = out.slice(0, at) + (m.what ?? "") + out.slice(at);
    else out = out.slice(0, at) + out.slice(at, at + (m.len ?? 1)) + out.slice(at);
  }
  return out;
}

/** Replace the value at a random path of the full definition with an arbitrary JSON value. */
function paths(
  v: unknown,
  p: Array<string | number> = [],
  out: Array<Array<string | number>> = [],
) {
  out.push(p);
  if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) paths(x, [...p, Array.isArray(v) ? Number(k) : k], out);
  }
  return out;
}
const fullPaths = paths(full()).filter((p) => p.length > 0);

describe("definition properties", () => {
  it("random definitions (usual and alternate spellings, sub-agents): never throw, rejections well formed", () => {
    fc.assert(
      fc.property(definitionArb(2), (d) => {
        checked(validateDefinition(JSON.stringify(d)));
        checked(validateDefinitionValue(d) as ReturnType<typeof validateDefinition>);
      }),
      { numRuns: 3000 },
    );
  });

  it("mutated texts of a valid definition: never throw, rejections well formed", () => {
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (ms) => {
        const t = mutate(base, ms);
        wellFormed(readDefinition(t));
        checked(validateDefinition(t));
      }),
      { numRuns: 3000 },
    );
  });

  it("a valid definition with one value replaced by arbitrary JSON: never throws", () => {
    fc.assert(
      fc.property(fc.nat(), fc.jsonValue({ maxDepth: 3 }), (i, value) => {
        const d = full() as Record<string, unknown>;
        const p = fullPaths[i % fullPaths.length] as Array<string | number>;
        let cur = d as Record<string | number, unknown>;
        for (const k of p.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
        cur[p[p.length - 1] as string | number] = value;
        checked(validateDefinition(JSON.stringify(d)));
      }),
      { numRuns: 3000 },
    );
  });

  it("arbitrary strings: never throw", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.json()), (t) => {
        wellFormed(readDefinition(t));
        checked(validateDefinition(t));
      }),
      { numRuns: 1500 },
    );
  });
});
