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
  const facts: Fact[] = [];
  return {
    opening: undefined,
    deadline: undefined,
    deadlineMs: Number.NaN,
    deadlineSequence: 0,
    spent: { passages: 0, solverPassages: 0, reviewerPassages: 0, cycles: 0, runs: 0 },
    renewals: 0,
    stop: undefined,
    lastSequence: 0,
    facts,
    byKey: new KeyIndex({ at: new Map(), length: 0 }, facts, 0),
  };
}

/**
 * Where each charge key's fact is among a loop's facts (its position), shared by a line of states
 * each made from the one before: `length` is how many facts it covers, and only the state with
 * that many facts (the line's tip) may extend it in place. Keys are added in the facts' order; a
 * key is never moved or overwritten here (a fact whose key is already present gets a copy).
 */
interface SharedIndex {
  readonly at: Map<string, number>;
  length: number;
}

/** The index of `facts`' first `n`, made anew: each key at its last fact, in first-seen order. */
function indexOf(facts: readonly Fact[], n: number): SharedIndex {
  const at = new Map<string, number>();
  for (let i = 0; i < n; i++) at.set(chargeKeyOf((facts[i] as Fact).step), i);
  return { at, length: n };
}

/**
 * A state's facts by charge key: a view of the shared index that sees only the state's own facts,
 * so evolving a state costs no copy of its keys and leaves every earlier state's view as it was.
 */
class KeyIndex implements ReadonlyMap<string, Fact> {
  readonly #index: SharedIndex;
  readonly #facts: readonly Fact[];
  readonly #size: number;

  constructor(index: SharedIndex, facts: readonly Fact[], size: number) {
    this.#index = index;
    this.#facts = facts;
    this.#size = size;
  }

  /** The index this view reads. */
  static indexOf(view: KeyIndex): SharedIndex {
    return view.#index;
  }

  /** The shared index, when this is the view of `facts` at its tip and so may extend it. */
  static tipOf(view: KeyIndex, facts: readonly Fact[]): SharedIndex | undefined {
    return view.#facts === facts && view.#index.length === facts.length ? view.#index : undefined;
  }

  get size(): number {
    return this.#size;
  }

  get(key: string): Fact | undefined {
    // A key a later state added is past this state's facts: there is no fact there.
    const i = this.#index.at.get(key);
    return i === undefined ? undefined : this.#facts[i];
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  *entries(): MapIterator<[string, Fact]> {
    const facts = this.#facts;
    for (const [key, i] of this.#index.at) if (i < facts.length) yield [key, facts[i] as Fact];
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<Fact> {
    for (const [, fact] of this.entries()) yield fact;
  }

  [Symbol.iterator](): MapIterator<[string, Fact]> {
    return this.entries();
  }

  forEach(fn: (value: Fact, key: string, map: ReadonlyMap<string, Fact>) => void, self?: unknown) {
    for (const [key, fact] of this.entries()) fn.call(self, fact, key, this);
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Draft = Mutable<Omit<LoopState, "facts" | "byKey" | "spent">> & {
  facts: Fact[];
  spent: Mutable<SpentCounters>;
  /**
   * The index the draft extends: its state's shared one at the tip, else its own. Either way it
   * holds exactly the keys of the draft's facts (no later state has added to it).
   */
  index: SharedIndex;
};

function draftOf(state: LoopState): Draft {
  const facts = [...state.facts];
  const tip =
    state.byKey instanceof KeyIndex ? KeyIndex.tipOf(state.byKey, state.facts) : undefined;
  const index = tip ?? indexOf(facts, facts.length);
  return {
    opening: state.opening,
    deadline: state.deadline,
    deadlineMs: state.deadlineMs,
    deadlineSequence: state.deadlineSequence,
    spent: { ...state.spent },
    renewals: state.renewals,
    stop: state.stop,
    lastSequence: state.lastSequence,
    facts,
    index,
  };
}

/**
 * Whether two states read one shared index (for tests: the states of a line share one, so that a
 * charge copies no keys; a branch or a repeated key has its own).
 */
export function sharesIndex(a: LoopState, b: LoopState): boolean {
  return (
    a.byKey instanceof KeyIndex &&
    b.byKey instanceof KeyIndex &&
    KeyIndex.indexOf(a.byKey) === KeyIndex.indexOf(b.byKey)
  );
}

/** The state a draft became (the same members, in the same order, as initialState's). */
function stateOf(d: Draft): LoopState {
  return {
    opening: d.opening,
    deadline: d.deadline,
    deadlineMs: d.deadlineMs,
    deadlineSequence: d.deadlineSequence,
    spent: d.spent,
    renewals: d.renewals,
    stop: d.stop,
    lastSequence: d.lastSequence,
    facts: d.facts,
    byKey: new KeyIndex(d.index, d.facts, d.index.at.size),
  };
}

/** Adds the key of the draft's fact at `position` (its last) to the draft's index. */
function addKey(d: Draft, key: string, position: number): void {
  let index = d.index;
  if (index.at.has(key)) {
    // A key seen before (a log decide would not make): the later fact wins, in a copy, so the
    // states sharing the index keep seeing the earlier one.
    index = d.index = { at: new Map(index.at), length: index.length };
  }
  index.at.set(key, position);
  index.length = position + 1;
}

/** The one transition. Facts are trusted here: legality is decide's and check's business. */
function apply(d: Draft, fact: Fact): void {
  const step = fact.step;
  d.lastSequence = fact.sequence;
  d.facts.push(fact);
  addKey(d, chargeKeyOf(step), d.facts.length - 1);
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
  return stateOf(d);
}

/** The state of a loop from its facts in sequence order: the fold of evolve from initialState. */
export function fold(facts: readonly Fact[], from: LoopState = initialState()): LoopState {
  const d = draftOf(from);
  for (const fact of facts) apply(d, fact);
  return stateOf(d);
}

export type StateName = "open" | "deadline-passed" | "stopped";

/** `stopped` when a stop is set; otherwise `deadline-passed` when now ≥ deadline; else `open`. */
export function stateNameAt(state: LoopState, nowMs: number): StateName {
  if (state.stop !== undefined) return "stopped";
  return nowMs >= state.deadlineMs ? "deadline-passed" : "open";
}
