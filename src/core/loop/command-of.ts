// The command that would have produced a fact: check re-decides each fact from it.
import { assertNever } from "../result.js";
import type { Fact, LoopCommand } from "./types.js";

export function commandOf(fact: Fact): LoopCommand {
  const step = fact.step;
  switch (step.kind) {
    case "opened":
      return {
        op: "open",
        query: fact["query/id"],
        binding: step["binding/ref"],
        operator: step["operator/binding-ref"],
        layers: [step.limits],
      };
    case "passage-charged":
      return {
        op: "charge-passage",
        role: step.role,
        agent: step["agent/id"],
        passage: step["passage/ref"],
      };
    case "cycle-opened":
      return { op: "open-cycle", proposal: step["proposal/ref"] };
    case "run-admitted":
      return { op: "admit-run", proposal: step["proposal/ref"] };
    case "concluded": {
      const base = {
        op: "conclude",
        proposal: step["proposal/ref"],
        execution: step["execution/ref"],
        outcome: step.outcome,
      } as const;
      const refusal = step["refusal/code"];
      return refusal === undefined ? base : { ...base, refusal };
    }
    case "renewed":
      return { op: "renew", deadline: step.deadline, operator: step["operator/binding-ref"] };
    case "cancelled":
      return { op: "cancel", operator: step["operator/binding-ref"] };
    default:
      return assertNever(step, "step");
  }
}
