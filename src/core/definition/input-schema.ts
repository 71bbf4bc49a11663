// docs/spec/definitions.md rule 14: a tool's inputSchema compiles as a JSON Schema 2020-12 and its root accepts
// objects. Compiled in a separate lenient Ajv (tool schemas in the wild carry unknown keywords and
// formats); results are cached by JSON text, bounded, so repeated definitions compile once.
import { createAjv } from "../contracts/ajv-factory.js";

type Ajv = ReturnType<typeof createAjv>;

const CACHE_LIMIT = 1024;

let ajv: Ajv | undefined;
const verdicts = new Map<string, string | null>();

function compiler(): Ajv {
  ajv ??= createAjv("schema-check");
  return ajv;
}

function rootAcceptsObjects(schema: Readonly<Record<string, unknown>>): boolean {
  const type = schema.type;
  if (type === undefined) return true;
  if (typeof type === "string") return type === "object";
  return Array.isArray(type) && type.includes("object");
}

/** Why the schema is unusable as a tool input schema, or null when it is usable. */
export function inputSchemaProblem(schema: Readonly<Record<string, unknown>>): string | null {
  if (!rootAcceptsObjects(schema)) {
    return `the root must accept objects (type "object" or no type), not ${JSON.stringify(schema.type)}`;
  }
  // The key only memoises: another key order is a miss, never a wrong verdict.
  const key = JSON.stringify(schema);
  const known = verdicts.get(key);
  if (known !== undefined) return known;
  const a = compiler();
  let verdict: string | null = null;
  try {
    a.compile(schema);
  } catch (e) {
    verdict = `does not compile as a JSON Schema 2020-12: ${(e as Error).message}`;
  } finally {
    try {
      a.removeSchema(schema);
    } catch {
      // A schema that failed before registration has nothing to remove.
    }
  }
  if (verdicts.size >= CACHE_LIMIT) verdicts.clear();
  verdicts.set(key, verdict);
  return verdict;
}
