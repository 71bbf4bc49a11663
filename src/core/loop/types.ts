// The loop's wire types (corpus-task-pack-loop.v1 spelling, as stored) and its commands. The lists
// of roles, outcomes and limits are checked against the generated contract types (`satisfies`:
// nothing the contract lacks) and test/wire-lists.test.ts (nothing the contract has is missing).

import type * as WireLoop from "../contracts/types/corpus-task-pack-loop.v1.js";
import type * as Wire from "../contracts/types/ledger-records.v1.js";
import type { DeliberationLimits } from "../contracts/types/operator-task-common.v1.js";

export const ROLES = [
  "implementer",
  "reviewer",
  "adversarial-critic",
  "summarizer",
] as const satisfies readonly Wire.Role[];
export type Role = (typeof ROLES)[number];

export const LIMIT_KEYS = [
  "max/passages",
  "max/solver-passages",
  "max/reviewer-passages",
  "max/cycles",
  "max/experiments",
  "max/wall-time-ms",
] as const satisfies readonly (keyof DeliberationLimits)[];
export type LimitKey = (typeof LIMIT_KEYS)[number];

/** A layer of limits (task pack, local binding, host caps): any subset. */
export type LimitLayer = Partial<Record<LimitKey, number>>;
/** The effective limits: every counter stated. */
export type Limits = Record<LimitKey, number>;

export interface Spent {
  readonly passages: number;
  readonly "solver-passages": number;
  readonly "reviewer-passages": number;
  readonly cycles: number;
  readonly runs: number;
}

export const OUTCOMES = [
  "verified",
  "verification-failed",
  "refused",
  "cancelled",
  "unknown",
] as const satisfies readonly Wire.Outcome[];
export type Outcome = (typeof OUTCOMES)[number];

export type Step =
  | {
      readonly kind: "opened";
      readonly "binding/ref": string;
      readonly limits: Limits;
      readonly deadline: string;
      readonly "operator/binding-ref": string;
    }
  | {
      readonly kind: "passage-charged";
      readonly role: Role;
      readonly "agent/id": string;
      readonly "passage/ref": string;
    }
  | { readonly kind: "cycle-opened"; readonly "proposal/ref": string }
  | { readonly kind: "run-admitted"; readonly "proposal/ref": string }
  | {
      readonly kind: "concluded";
      readonly "execution/ref": string;
      readonly "proposal/ref": string;
      readonly outcome: Outcome;
      readonly "refusal/code"?: string;
    }
  | { readonly kind: "renewed"; readonly deadline: string; readonly "operator/binding-ref": string }
  | { readonly kind: "cancelled"; readonly "operator/binding-ref": string };

export type StepKind = Step["kind"];

export interface Fact {
  readonly "query/id": string;
  readonly sequence: number;
  readonly "recorded-at": string;
  readonly step: Step;
}

export type Stop =
  | { readonly reason: "succeeded" | "unknown"; readonly "execution/ref": string }
  | {
      readonly reason: "safety-refused";
      readonly "execution/ref": string;
      readonly "refusal/code": string;
    }
  | { readonly reason: "cancelled"; readonly "operator/binding-ref": string };

export type LoopStateName = WireLoop.CorpusTaskPackLoopV1["state"];

/** The loop document (projection plus facts), exactly as the seed schema describes. */
export interface LoopDocument {
  readonly schema: "corpus-task-pack-loop.v1";
  readonly "query/id": string;
  readonly "binding/ref": string;
  readonly state: LoopStateName;
  readonly limits: Limits;
  readonly deadline: string;
  readonly spent: Spent;
  readonly stop?: Stop;
  readonly facts: readonly Fact[];
}

/** Commands the decider takes. `at` (the clock) is passed to decide separately. */
export type LoopCommand =
  | {
      readonly op: "open";
      readonly query: string;
      readonly binding: string;
      readonly operator: string;
      /** In order: the task pack's limits (the ceiling), the local binding's, the host caps. */
      readonly layers: readonly LimitLayer[];
    }
  | {
      readonly op: "charge-passage";
      readonly role: Role;
      readonly agent: string;
      readonly passage: string;
    }
  | { readonly op: "open-cycle"; readonly proposal: string }
  | { readonly op: "admit-run"; readonly proposal: string }
  | {
      readonly op: "conclude";
      readonly proposal: string;
      readonly execution: string;
      readonly outcome: Outcome;
      readonly refusal?: string;
    }
  | { readonly op: "renew"; readonly deadline: string; readonly operator?: string }
  | { readonly op: "cancel"; readonly operator?: string };

/** A refusal of the loop (or of the contract's own codes, such as local-binding/…), as a value. */
export interface LoopRefusal {
  readonly code: string;
  readonly message: string;
  /** The exhausted counter, for loop/budget-exhausted. */
  readonly counter?: LimitKey;
}

export type Decision =
  | { readonly result: "appended"; readonly fact: Fact }
  | { readonly result: "replayed"; readonly fact: Fact | undefined }
  | { readonly result: "refused"; readonly refusal: LoopRefusal };

/**
 * The charge key of a step: unique per loop, enforced by the store. A replay finds the earlier fact
 * by it. (`cancelled` can occur once: after it the loop is stopped.)
 */
export function chargeKeyOf(step: Step): string {
  switch (step.kind) {
    case "opened":
      return "opened";
    case "passage-charged":
      return `passage ${step["agent/id"]} ${step["passage/ref"]}`;
    case "cycle-opened":
      return `cycle ${step["proposal/ref"]}`;
    case "run-admitted":
      return `run ${step["proposal/ref"]}`;
    case "concluded":
      return `concluded ${step["proposal/ref"]}`;
    case "renewed":
      return `renewed ${step.deadline}`;
    case "cancelled":
      return "cancelled";
  }
}
