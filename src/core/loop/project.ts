// The projection: the loop document (seed spelling) of a state as of `now`.
import { assertNever } from "../result.js";
import { type LoopState, type LoopStop, stateNameAt } from "./state.js";
import type { LoopDocument, Spent, Stop } from "./types.js";

export const LOOP_SCHEMA_NAME = "corpus-task-pack-loop.v1";

export function stopToWire(stop: LoopStop): Stop {
  switch (stop.reason) {
    case "succeeded":
    case "unknown":
      return { reason: stop.reason, "execution/ref": stop.executionRef };
    case "safety-refused":
      return {
        reason: "safety-refused",
        "execution/ref": stop.executionRef,
        "refusal/code": stop.refusalCode,
      };
    case "cancelled":
      return { reason: "cancelled", "operator/binding-ref": stop.operatorRef };
    default:
      return assertNever(stop, "stop");
  }
}

export function spentToWire(state: LoopState): Spent {
  const s = state.spent;
  return {
    passages: s.passages,
    "solver-passages": s.solverPassages,
    "reviewer-passages": s.reviewerPassages,
    cycles: s.cycles,
    runs: s.runs,
  };
}

/** The loop document as of `now`, or undefined for a loop that was never opened. */
export function project(state: LoopState, now: Date): LoopDocument | undefined {
  const opening = state.opening;
  if (opening === undefined || state.deadline === undefined) return undefined;
  const base = {
    schema: LOOP_SCHEMA_NAME,
    "query/id": opening.query,
    "binding/ref": opening.bindingRef,
    state: stateNameAt(state, now.getTime()),
    limits: opening.limits,
    deadline: state.deadline,
    spent: spentToWire(state),
  } as const;
  return state.stop === undefined
    ? { ...base, facts: state.facts }
    : { ...base, stop: stopToWire(state.stop), facts: state.facts };
}
