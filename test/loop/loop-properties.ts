// The loop's properties over random command sequences: never overspend, sequences contiguous, a stop
// never changes once set, incremental state equals the fold, and the document always validates
// against the seed schema and passes the check. Shared by the quick and the long runs.
import fc from "fast-check";
import { expect } from "vitest";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { checkLoopDocument } from "../../src/core/loop/check.js";
import { decide } from "../../src/core/loop/decide.js";
import { project } from "../../src/core/loop/project.js";
import { evolve, fold, initialState, type LoopState } from "../../src/core/loop/state.js";
import { type Fact, LIMIT_KEYS, type LoopCommand, ROLES } from "../../src/core/loop/types.js";
import { execution, OPERATOR, proposal, QUERY, T0 } from "./gwt.js";

const OUTCOME = fc.constantFrom(
  ...(["verified", "verification-failed", "refused", "cancelled", "unknown"] as const),
);
const REFUSAL = fc.constantFrom(
  "environment/not-contained",
  "hil/denied",
  "verifier/timeout",
  "workbench/patch-outside-policy",
);
const operator = fc.constantFrom(undefined, OPERATOR, "node-operator-binding:bob");

const layer = fc.record(
  {
    "max/passages": fc.integer({ min: 1, max: 8 }),
    "max/solver-passages": fc.integer({ min: 1, max: 8 }),
    "max/reviewer-passages": fc.integer({ min: 1, max: 8 }),
    "max/cycles": fc.integer({ min: 1, max: 5 }),
    "max/experiments": fc.integer({ min: 1, max: 4 }),
    "max/wall-time-ms": fc.integer({ min: 10_000, max: 3_600_000 }),
  },
  { requiredKeys: [] },
);

/** Mostly a complete task pack; sometimes one missing a required limit (local-binding/incomplete). */
const pack = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.tuple(layer, layer).map(([optional, required]) => ({
      ...optional,
      "max/passages": required["max/passages"] ?? 6,
      "max/experiments": required["max/experiments"] ?? 3,
      "max/wall-time-ms": required["max/wall-time-ms"] ?? 600_000,
    })),
  },
  { weight: 1, arbitrary: layer },
);

/** Binding and host layers: usually within the pack, sometimes above it (a ceiling refusal). */
const openCommand = fc
  .tuple(pack, fc.array(layer, { maxLength: 2 }), fc.integer({ min: 0, max: 4 }))
  .map(([first, more, wild]): LoopCommand => {
    const narrowed = more.map((l, i) =>
      i === 0 && wild > 0
        ? Object.fromEntries(
            Object.entries(l).map(([k, v]) => [
              k,
              Math.min(v as number, first[k as keyof typeof first] ?? (v as number)),
            ]),
          )
        : l,
    );
    return {
      op: "open",
      query: QUERY,
      binding: "operator-task-local-binding:b",
      operator: OPERATOR,
      layers: [first, ...narrowed],
    };
  });

const command: fc.Arbitrary<LoopCommand> = fc.oneof(
  { weight: 1, arbitrary: openCommand },
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("charge-passage" as const),
      role: fc.constantFrom(...ROLES),
      agent: fc.constantFrom("agent:a1", "agent:a2"),
      passage: fc.integer({ min: 0, max: 6 }).map((n) => `passage:p${n}`),
    }),
  },
  {
    weight: 3,
    arbitrary: fc
      .integer({ min: 0, max: 3 })
      .map((n): LoopCommand => ({ op: "open-cycle", proposal: proposal(n) })),
  },
  {
    weight: 3,
    arbitrary: fc
      .integer({ min: 0, max: 3 })
      .map((n): LoopCommand => ({ op: "admit-run", proposal: proposal(n) })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 1 }), OUTCOME, REFUSAL)
      .map(
        ([n, e, outcome, refusal]): LoopCommand =>
          outcome === "refused"
            ? { op: "conclude", proposal: proposal(n), execution: execution(e), outcome, refusal }
            : { op: "conclude", proposal: proposal(n), execution: execution(e), outcome },
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: -100, max: 2_400 }), operator)
      .map(([s, op]): LoopCommand => {
        // Seconds after T0: renew resolves relative to the run's own clock below.
        const deadline = new Date(T0 + s * 1000).toISOString();
        return op === undefined
          ? { op: "renew", deadline }
          : { op: "renew", deadline, operator: op };
      }),
  },
  {
    weight: 1,
    arbitrary: operator.map(
      (op): LoopCommand => (op === undefined ? { op: "cancel" } : { op: "cancel", operator: op }),
    ),
  },
);

/** A script: an opening (usually first), then commands each after a random pause. */
const script = fc.tuple(
  openCommand,
  fc.array(fc.tuple(command, fc.integer({ min: 0, max: 60_000 })), { maxLength: 40, size: "max" }),
  fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
);

const counterPairs = [
  ["passages", "max/passages"],
  ["solverPassages", "max/solver-passages"],
  ["reviewerPassages", "max/reviewer-passages"],
  ["cycles", "max/cycles"],
  ["runs", "max/experiments"],
] as const;

/** Runs the properties over `numRuns` random scripts; returns how often each outcome occurred. */
export function runLoopProperties(numRuns: number): ReadonlyMap<string, number> {
  const validate = contractValidators().loop;
  const seen = new Map<string, number>();
  const note = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1);
  fc.assert(
    fc.property(script, ([first, rest, openFirst]) => {
      let state: LoopState = initialState();
      const facts: Fact[] = [];
      let t = T0;
      let stopSeen: string | undefined;
      const commands = openFirst ? [[first, 0] as const, ...rest] : rest;
      for (const [c, pause] of commands) {
        t += pause;
        const decision = decide(state, c, new Date(t));
        note(decision.result === "refused" ? decision.refusal.code : `${decision.result} ${c.op}`);
        if (decision.result === "appended") {
          expect(decision.fact.sequence).toBe(facts.length + 1);
          facts.push(decision.fact);
          state = evolve(state, decision.fact);
        } else if (decision.result === "replayed") {
          expect(facts).toContainEqual(decision.fact);
        }
        const limits = state.opening?.limits;
        if (limits !== undefined) {
          for (const [spent, key] of counterPairs)
            expect(state.spent[spent]).toBeLessThanOrEqual(limits[key]);
        }
        expect(state.renewals).toBeLessThanOrEqual(64);
        const stop = JSON.stringify(state.stop);
        if (stopSeen !== undefined) expect(stop).toBe(stopSeen);
        else if (state.stop !== undefined) stopSeen = stop;
      }
      expect(facts.map((f) => f.sequence)).toEqual(facts.map((_, i) => i + 1));
      expect(state).toEqual(fold(facts));
      const now = new Date(t);
      const doc = project(state, now);
      if (doc === undefined) {
        expect(facts).toEqual([]);
        return;
      }
      expect(validate(doc)).toBe(true);
      const checked = checkLoopDocument(JSON.parse(JSON.stringify(doc)), { now });
      expect(checked.ok).toBe(true);
      for (const key of LIMIT_KEYS) expect(doc.limits[key]).toBeGreaterThanOrEqual(1);
    }),
    { numRuns },
  );
  return seen;
}
