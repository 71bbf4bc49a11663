// Effective limits (docs/spec/loop.md): the per-field minimum over the stated layers, then the defaults.
import {
  LIMIT_KEYS,
  type LimitKey,
  type LimitLayer,
  type Limits,
  type LoopRefusal,
} from "./types.js";

/** The contract's range of each limit (operator-task-common deliberationLimits). */
export const LIMIT_MAXIMA: Readonly<Record<LimitKey, number>> = {
  "max/passages": 1000,
  "max/solver-passages": 1000,
  "max/reviewer-passages": 1000,
  "max/cycles": 100,
  "max/experiments": 100,
  "max/wall-time-ms": 86_400_000,
};

/** Limits that no default fills: a loop whose layers state none of them cannot open. */
export const REQUIRED_LIMITS: readonly LimitKey[] = [
  "max/passages",
  "max/experiments",
  "max/wall-time-ms",
];

export type LimitsOutcome =
  | { readonly ok: true; readonly limits: Limits }
  | { readonly ok: false; readonly refusal: LoopRefusal };

/**
 * Layers are, in order, the task pack's limits (the ceiling), the local binding's and the host caps;
 * the last two are optional. A binding value above the task pack's is refused; host caps narrow
 * silently. Unstated solver/reviewer passages default to the effective passages, unstated cycles to
 * the effective solver passages, capped at the contract's 100.
 */
export function effectiveLimits(layers: readonly LimitLayer[]): LimitsOutcome {
  for (const [index, layer] of layers.entries()) {
    for (const [key, value] of Object.entries(layer)) {
      if (!(LIMIT_KEYS as readonly string[]).includes(key)) {
        return refuse("loop/limits-invalid", `layer ${index} states an unknown limit ${key}`);
      }
      const max = LIMIT_MAXIMA[key as LimitKey];
      if (value === undefined) continue;
      if (!Number.isSafeInteger(value) || value < 1 || value > max) {
        return refuse(
          "loop/limits-invalid",
          `layer ${index}: ${key} must be an integer from 1 to ${max}, not ${String(value)}`,
        );
      }
    }
  }
  const pack = layers[0] ?? {};
  const binding = layers[1] ?? {};
  for (const key of LIMIT_KEYS) {
    const ceiling = pack[key];
    const asked = binding[key];
    if (ceiling !== undefined && asked !== undefined && asked > ceiling) {
      return refuse(
        "local-binding/outside-package-ceiling",
        `the local binding asks ${key} = ${asked}, above the task pack's ${ceiling}`,
      );
    }
  }
  const stated: Partial<Record<LimitKey, number>> = {};
  for (const layer of layers) {
    for (const key of LIMIT_KEYS) {
      const v = layer[key];
      if (v === undefined) continue;
      const prev = stated[key];
      stated[key] = prev === undefined ? v : Math.min(prev, v);
    }
  }
  const missing = REQUIRED_LIMITS.filter((k) => stated[k] === undefined);
  if (missing.length > 0) {
    return refuse("local-binding/incomplete", `no layer states ${missing.join(", ")}`);
  }
  const passages = stated["max/passages"] as number;
  const solver = stated["max/solver-passages"] ?? passages;
  const reviewer = stated["max/reviewer-passages"] ?? passages;
  const cycles = stated["max/cycles"] ?? Math.min(solver, LIMIT_MAXIMA["max/cycles"]);
  return {
    ok: true,
    limits: {
      "max/passages": passages,
      "max/solver-passages": solver,
      "max/reviewer-passages": reviewer,
      "max/cycles": cycles,
      "max/experiments": stated["max/experiments"] as number,
      "max/wall-time-ms": stated["max/wall-time-ms"] as number,
    },
  };
}

function refuse(code: string, message: string): LimitsOutcome {
  return { ok: false, refusal: { code, message } };
}
