// The seed schema's spelling rules for the refs a fact carries, so that every fact the decider
// appends validates against the loop schema.
import common from "../../../contracts/operator-task-common.v1.schema.json" with { type: "json" };

const MAX_REF = 512;

const PATTERNS = {
  query: /^query:[^\s]+$/u,
  binding: /^operator-task-local-binding:[^\s]+$/u,
  operator: /^node-operator-binding:[^\s]+$/u,
  agent: /^agent:[^\s]+$/u,
  passage: /^[a-z][a-z0-9-]*:[^\s]+$/u,
  proposal: /^corpus-experiment:sha256:[A-Za-z0-9_-]{43}$/u,
  execution: /^corpus-task-pack-execution:sha256:[A-Za-z0-9_-]{43}$/u,
} as const;

export type RefKind = keyof typeof PATTERNS;

export function isRef(kind: RefKind, value: unknown): value is string {
  return typeof value === "string" && value.length <= MAX_REF && PATTERNS[kind].test(value);
}

const REFUSAL_CODES: ReadonlySet<string> = new Set(common.$defs.refusalCode.enum);

/** One of the contract's 45 refusal codes (operator-task-common refusalCode). */
export function isRefusalCode(value: unknown): value is string {
  return typeof value === "string" && REFUSAL_CODES.has(value);
}
