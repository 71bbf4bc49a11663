// The middleware Warrant runs, read from a definition's `middleware[]` (its `config` with models
// referenced as `{"@model": n}`): model-fallback, call-limit and history-summary. Any other name,
// and any config these do not read, is refused — a named middleware is run or refused, never
// ignored.
import { fail, ok, type Problem, type Result } from "../result.js";
import type { Middleware } from "./types.js";

export const SUPPORTED_MIDDLEWARE = ["model-fallback", "call-limit", "history-summary"] as const;

/** What model-fallback falls back on: a provider's `model/…` failures, a refusal, a truncation. */
export const FALLBACK_TRIGGERS = [
  "unreachable",
  "unavailable",
  "timeout",
  "rate-limited",
  "refusal",
  "truncation",
] as const;
export type FallbackTrigger = (typeof FALLBACK_TRIGGERS)[number];
const DEFAULT_TRIGGERS: readonly FallbackTrigger[] = [
  "unreachable",
  "unavailable",
  "timeout",
  "refusal",
  "truncation",
];

export type MiddlewareSpec =
  | {
      readonly name: "model-fallback";
      /** Indexes into the definition's `models`, tried in order. */
      readonly models: readonly number[];
      readonly on: readonly FallbackTrigger[];
    }
  | { readonly name: "call-limit"; readonly maxCalls: number }
  | {
      readonly name: "history-summary";
      readonly model: number;
      /** Compact once a call's input plus output tokens reach this. */
      readonly thresholdTokens: number;
      /** The most recent model turns kept as they are. */
      readonly keepTurns: number;
    };

function problem(code: string, path: string, message: string): Problem {
  return { code, path, message };
}

function modelRef(v: unknown): number | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const n = (v as Record<string, unknown>)["@model"];
  return Object.keys(v).length === 1 && Number.isSafeInteger(n) ? (n as number) : undefined;
}

function positive(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 1;
}

/** One middleware entry as Warrant runs it; `at` is its JSON Pointer in the definition. */
export function middlewareSpec(
  m: Middleware,
  modelCount: number,
  at: string,
): Result<MiddlewareSpec> {
  const config = m.config ?? {};
  const bad = (message: string) =>
    fail<MiddlewareSpec>([
      problem("definition/middleware-config", `${at}/config`, `${m.name}: ${message}`),
    ]);
  const only = (keys: readonly string[]) => Object.keys(config).find((k) => !keys.includes(k));
  const ref = (v: unknown): number | undefined => {
    const n = modelRef(v);
    return n !== undefined && n >= 0 && n < modelCount ? n : undefined;
  };
  switch (m.name) {
    case "model-fallback": {
      const extra = only(["model", "models", "on"]);
      if (extra !== undefined)
        return bad(`unknown setting ${JSON.stringify(extra)} (model, models, on)`);
      const given = config.models ?? (config.model === undefined ? undefined : [config.model]);
      if (
        !Array.isArray(given) ||
        given.length === 0 ||
        (config.models !== undefined && config.model !== undefined)
      )
        return bad('name the fallback as "model": {"@model": n} or "models": [{"@model": n}, …]');
      const models = given.map(ref);
      if (models.some((n) => n === undefined))
        return bad('each fallback is {"@model": n} of this definition');
      const on = config.on ?? DEFAULT_TRIGGERS;
      if (
        !Array.isArray(on) ||
        on.some((t) => !(FALLBACK_TRIGGERS as readonly unknown[]).includes(t))
      )
        return bad(`"on" lists some of ${FALLBACK_TRIGGERS.join(", ")}`);
      return ok({
        name: "model-fallback",
        models: models as number[],
        on: on as FallbackTrigger[],
      });
    }
    case "call-limit": {
      const extra = only(["maxCalls"]);
      if (extra !== undefined) return bad(`unknown setting ${JSON.stringify(extra)} (maxCalls)`);
      if (!positive(config.maxCalls)) return bad('"maxCalls" is an integer ≥ 1');
      return ok({ name: "call-limit", maxCalls: config.maxCalls });
    }
    case "history-summary": {
      const extra = only(["model", "thresholdTokens", "keepTurns"]);
      if (extra !== undefined)
        return bad(`unknown setting ${JSON.stringify(extra)} (model, thresholdTokens, keepTurns)`);
      const model = ref(config.model);
      if (model === undefined) return bad('"model" is {"@model": n} of this definition');
      if (!positive(config.thresholdTokens)) return bad('"thresholdTokens" is an integer ≥ 1');
      const keep = config.keepTurns ?? 2;
      if (!positive(keep)) return bad('"keepTurns" is an integer ≥ 1');
      return ok({
        name: "history-summary",
        model,
        thresholdTokens: config.thresholdTokens,
        keepTurns: keep,
      });
    }
    default:
      return fail([
        problem(
          "definition/middleware-unsupported",
          `${at}/name`,
          `middleware ${JSON.stringify(m.name)} is not one Warrant runs (${SUPPORTED_MIDDLEWARE.join(", ")})`,
        ),
      ]);
  }
}

/** Every middleware of a definition, or every problem with them. */
export function middlewareSpecs(
  middleware: readonly Middleware[] | undefined,
  modelCount: number,
  pointer: string,
): Result<readonly MiddlewareSpec[]> {
  const specs: MiddlewareSpec[] = [];
  const problems: Problem[] = [];
  for (const [i, m] of (middleware ?? []).entries()) {
    const r = middlewareSpec(m, modelCount, `${pointer}/middleware/${i}`);
    if (r.ok) specs.push(r.value);
    else problems.push(...r.errors);
  }
  return problems.length > 0 ? fail(problems) : ok(specs);
}

/** The models a definition's middleware calls, by index. */
export function middlewareModels(specs: readonly MiddlewareSpec[]): number[] {
  const used = new Set<number>();
  for (const s of specs) {
    if (s.name === "model-fallback") for (const n of s.models) used.add(n);
    if (s.name === "history-summary") used.add(s.model);
  }
  return [...used].sort((a, b) => a - b);
}
