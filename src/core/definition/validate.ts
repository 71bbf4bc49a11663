// The whole definition pipeline (docs/spec/definitions.md): strict read → alternate spellings → seed schema → stored
// form → semantic rules → content ID. Each stage stops the pipeline when it finds a problem that
// would make the next stage's findings noise; every problem carries the author's pointer and, when
// read from text, a line and column.
import { fail, ok, type Problem, type Result } from "../result.js";
import { canonicalFormInPlace } from "./canonical-form.js";
import { storedFormId } from "./id.js";
import { readDocument } from "./read.js";
import { semanticProblems } from "./rules.js";
import { schemaProblems } from "./schema-check.js";
import type { SourcePositions } from "./source-positions.js";
import { listItemSpelling, normaliseSpellings } from "./spellings.js";
import type { AgentDefinition } from "./types.js";

export interface ValidDefinition {
  /** The stored form: usual spellings, null optionals removed, graph lists filled. */
  readonly definition: AgentDefinition;
  /** The content ID (`baga6yaq6…`). */
  readonly id: string;
}

function located(
  problems: readonly Problem[],
  root: unknown,
  positions: SourcePositions | undefined,
): Problem[] {
  if (positions === undefined) return [...problems];
  const out = problems.map((p) => {
    const loc = positions.locate(root, p.path);
    return { ...p, ...loc };
  });
  // In document order (stable), as an author reads them; problems without a position keep theirs.
  const rank = (p: Problem) => (p.line === undefined ? Infinity : p.line * 1e9 + (p.column ?? 0));
  return out.every((p) => p.line !== undefined) ? out.sort((a, b) => rank(a) - rank(b)) : out;
}

/** A URL the schema pattern refuses is explained by the URL rules, which run again later: once each. */
function distinct(problems: readonly Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.code}\u0000${p.path}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function pipeline(
  value: Record<string, unknown>,
  positions?: SourcePositions,
): Result<ValidDefinition> {
  const spelling = normaliseSpellings(value, positions);
  if (spelling.length > 0) return fail(located(spelling, value, positions));
  const schema = schemaProblems(value);
  if (schema.some((p) => p.code === "definition/schema"))
    return fail(located(schema, value, positions));
  // The tree is the pipeline's own (the reader's, or a private copy): made stored in place.
  const definition = canonicalFormInPlace(value);
  const problems = distinct([...schema, ...semanticProblems(definition)]);
  if (problems.length > 0) return fail(located(problems, value, positions));
  return ok({ definition, id: storedFormId(definition) });
}

/** Validates a definition document and computes its content ID; refusals carry stable codes. */
export function validateDefinition(text: string): Result<ValidDefinition> {
  // Spelled list items are made objects as they are read (the rewriter would make the same).
  const read = readDocument(text, { spelling: listItemSpelling });
  if (!read.ok) return read;
  return pipeline(read.value.value, read.value.positions);
}

type Copy = { ok: true; value: unknown } | { ok: false; problem: Problem };

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Where integers are free-form data, checked by `definition/safe-integer` (docs/spec/definitions.md rule 13). */
const FREE_FORM = new Set(["extensions", "config", "inputSchema"]);

/**
 * A private JSON copy of a value built in code, refusing what JSON text could not carry — including,
 * outside the free-form areas, integral numbers beyond ±(2^53−1), which the reader refuses too, so
 * that a stored form always reads back.
 */
function jsonCopy(v: unknown, path: string, depth: number, free = false): Copy {
  if (depth > 1000)
    return { ok: false, problem: { code: "definition/json", path, message: "nested too deep" } };
  if (v === null || typeof v === "boolean") return { ok: true, value: v };
  if (typeof v === "number") {
    if (!Number.isFinite(v)) {
      return {
        ok: false,
        problem: { code: "definition/json", path, message: `${v} is not a JSON number` },
      };
    }
    if (!free && Number.isInteger(v) && !Number.isSafeInteger(v)) {
      const message = `integer ${v} is outside ±(2^53−1) and cannot be read exactly`;
      return { ok: false, problem: { code: "definition/unsafe-integer", path, message } };
    }
    return { ok: true, value: v };
  }
  if (typeof v === "string") {
    return LONE_SURROGATE.test(v)
      ? {
          ok: false,
          problem: {
            code: "definition/lone-surrogate",
            path,
            message: "string contains a lone UTF-16 surrogate",
          },
        }
      : { ok: true, value: v };
  }
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      const c = jsonCopy(v[i], `${path}/${i}`, depth + 1, free);
      if (!c.ok) return c;
      out.push(c.value);
    }
    return { ok: true, value: out };
  }
  if (
    typeof v === "object" &&
    (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)
  ) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const p = `${path}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`;
      if (LONE_SURROGATE.test(k)) {
        return {
          ok: false,
          problem: {
            code: "definition/lone-surrogate",
            path: p,
            message: "key contains a lone UTF-16 surrogate",
          },
        };
      }
      const c = jsonCopy(x, p, depth + 1, free || FREE_FORM.has(k));
      if (!c.ok) return c;
      Object.defineProperty(out, k, {
        value: c.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return { ok: true, value: out };
  }
  return {
    ok: false,
    problem: { code: "definition/json", path, message: `a ${typeof v} is not JSON` },
  };
}

/**
 * The same pipeline for a definition already in memory (built in code rather than read from text);
 * the value is copied, never changed. Integers are checked by `definition/safe-integer`.
 */
export function validateDefinitionValue(value: unknown): Result<ValidDefinition> {
  const copy = jsonCopy(value, "", 0);
  if (!copy.ok) return fail([copy.problem]);
  const v = copy.value;
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    return fail([
      { code: "definition/json", path: "", message: "the document must be a JSON object" },
    ]);
  }
  return pipeline(v as Record<string, unknown>);
}
