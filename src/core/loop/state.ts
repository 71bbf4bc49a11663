// The loop's state (camelCase inside) and its fold: evolve(state, fact) and fold(facts) share one
// transition, so an incrementally evolved state is the fold of the same facts by construction.
import { assertNever } from "../result.js";
import { parseInstant } from "./time.js";
import { chargeKeyOf, type Fact, type Limits } from "./types.js";

export interface SpentCounters {
  readonly passages: number;
  readonly solverPassages: number;
  readonly reviewerPassages: number;
  readonly cycles: number;
  readonly runs: number;
}

export type LoopStop =
  | {
      readonly reason: "succeeded" | "unknown";
      readonly executionRef: string;
      readonly sequence: number;
    }
  | {
      readonly reason: "safety-refused";
      readonly executionRef: string;
      readonly refusalCode: string;
      readonly sequence: number;
    }
  | { readonly reason: "cancelled"; readonly operatorRef: string; readonly sequence: number };

export interface Opening {
  readonly query: string;
  readonly bindingRef: string;
  readonly operatorRef: string;
  readonly limits: Limits;
}

export interface LoopState {
  /** Set by the `opened` fact; undefined for a loop with no fact. */
  readonly opening: Opening | undefined;
  /** The latest deadline among `opened` and `renewed` (as stored) and its instant. */
  readonly deadline: string | undefined;
  readonly deadlineMs: number;
  /** The sequence of the fact that set the current deadline. */
  readonly deadlineSequence: number;
  readonly spent: SpentCounters;
  readonly renewals: number;
  /** The first stop; later facts never change it. */
  readonly stop: LoopStop | undefined;
  readonly lastSequence: number;
  readonly facts: readonly Fact[];
  /** Every fact by its charge key (chargeKeyOf). */
  readonly byKey: ReadonlyMap<string, Fact>;
}

/** Safety-relevant refusals: a run concluded `refused` with one of these stops the loop. */
export const SAFETY_REFUSALS: readonly string[] = [
  "environment/not-contained",
  "environment/runtime-egress-denied",
  "environment/impact-class-exceeded",
  "verifier/mutation-not-admitted",
  "workbench/patch-outside-policy",
];

export function initialState(): LoopState {
  return {
    opening: undefined,
    deadline: undefined,
    deadlineMs: Number.NaN,
    deadlineSequence: 0,
    spent: { passages: 0, solverPassages: 0, reviewerPassages: 0, cycles: 0, runs: 0 },
    renewals: 0,
    stop: undefined,
    lastSequence: 0,
    facts: [],
    byKey: new Map(),
  };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Draft = Mutable<Omit<LoopState, "facts" | "byKey" | "spent">> & {
  facts: Fact[];
  byKey: Map<string, Fact>;
  spent: Mutable<SpentCounters>;
};

function draftOf(state: LoopState): Draft {
  return {
    ...state,
    spent: { ...state.spent },
    facts: [...state.facts],
    byKey: new Map(state.byKey),
  };
}

/** The one transition. Facts are trusted here: legality is decide's and check's business. */
function apply(d: Draft, fact: Fact): void {
  const step = fact.step;
  d.lastSequence = fact.sequence;
  d.facts.push(fact);
  d.byKey.set(chargeKeyOf(step), fact);
  switch (step.kind) {
    case "opened":
      d.opening = {
        query: fact["query/id"],
        bindingRef: step["binding/ref"],
        operatorRef: step["operator/binding-ref"],
        limits: step.limits,
      };
      d.deadline = step.deadline;
      d.deadlineMs = parseInstant(step.deadline) ?? Number.NaN;
      d.deadlineSequence = fact.sequence;
      return;
    case "passage-charged":
      d.spent.passages += 1;
      if (step.role === "implementer") d.spent.solverPassages += 1;
      if (step.role === "reviewer") d.spent.reviewerPassages += 1;
      return;
    case "cycle-opened":
      d.spent.cycles += 1;
      return;
    case "run-admitted":
      d.spent.runs += 1;
      return;
    case "concluded": {
      if (d.stop !== undefined) return;
      const executionRef = step["execution/ref"];
      if (step.outcome === "verified") {
        d.stop = { reason: "succeeded", executionRef, sequence: fact.sequence };
      } else if (step.outcome === "unknown") {
        d.stop = { reason: "unknown", executionRef, sequence: fact.sequence };
      } else if (step.outcome === "refused") {
        const code = step["refusal/code"];
        if (code !== undefined && SAFETY_REFUSALS.includes(code)) {
          d.stop = {
            reason: "safety-refused",
            executionRef,
            refusalCode: code,
            sequence: fact.sequence,
          };
        }
      }
      return;
    }
    case "renewed": {
      d.renewals += 1;
      const ms = parseInstant(step.deadline);
      if (ms !== undefined && !(ms <= d.deadlineMs)) {
        d.deadline = step.deadline;
        d.deadlineMs = ms;
        d.deadlineSequence = fact.sequence;
      }
      return;
    }
    case "cancelled":
      if (d.stop === undefined) {
        d.stop = {
          reason: "cancelled",
          operatorRef: step["operator/binding-ref"],
          sequence: fact.sequence,
        };
      }
      return;
    default:
      assertNever(step, "step");
  }
}

/** A new state with one more fact. Pure: `state` is left as it was. */
export function evolve(state: LoopState, fact: Fact): LoopState {
  const d = draftOf(state);
  apply(d, fact);
  return d;
}

/** The state of a loop from its facts in sequence order: the fold of evolve from initialState. */
export function fold(facts: readonly Fact[], from: LoopState = initialState()): LoopState {
  const d = draftOf(from);
  for (const fact of facts) apply(d, fact);
  return d;
}

export type StateName = "open" | "deadline-passed" | "stopped";

/** `stopped` when a stop is set; otherwise `deadline-passed` when now ≥ deadline; else `open`. */
export function stateNameAt(state: LoopState, nowMs: number): StateName {
  if (state.stop !== undefined) return "stopped";
  return nowMs >= state.deadlineMs ? "deadline-passed" : "open";
}
