// `warrant loop simulate`: a script's commands through the decider with no model and no sandbox.
// A refused command appends nothing and the script goes on.
import { decide } from "./decide.js";
import { project } from "./project.js";
import type { LoopScript } from "./script.js";
import { evolve, initialState } from "./state.js";
import { parseInstant } from "./time.js";
import type { LimitKey, LoopDocument } from "./types.js";

export interface SimulationOutcome {
  readonly op: string;
  readonly result: "appended" | "replayed" | "refused";
  /** The appended fact's sequence, or the replayed fact's. */
  readonly sequence?: number;
  readonly code?: string;
  readonly counter?: LimitKey;
}

export interface Simulation {
  readonly outcomes: readonly SimulationOutcome[];
  /** The loop document as of the script's `now`, or null when the loop was never opened. */
  readonly loop: LoopDocument | null;
  /** Per outcome, the refusal's explanation for people (not part of the --json shape). */
  readonly messages: readonly (string | undefined)[];
}

export function simulate(script: LoopScript): Simulation {
  let state = initialState();
  const outcomes: SimulationOutcome[] = [];
  const messages: (string | undefined)[] = [];
  for (const { at, command } of script.commands) {
    const decision = decide(state, command, new Date(parseInstant(at) ?? Number.NaN));
    messages.push(decision.result === "refused" ? decision.refusal.message : undefined);
    switch (decision.result) {
      case "appended":
        state = evolve(state, decision.fact);
        outcomes.push({ op: command.op, result: "appended", sequence: decision.fact.sequence });
        break;
      case "replayed":
        outcomes.push(
          decision.fact === undefined
            ? { op: command.op, result: "replayed" }
            : { op: command.op, result: "replayed", sequence: decision.fact.sequence },
        );
        break;
      case "refused": {
        const r = decision.refusal;
        outcomes.push({
          op: command.op,
          result: "refused",
          code: r.code,
          ...(r.counter === undefined ? {} : { counter: r.counter }),
        });
        break;
      }
    }
  }
  const now = script.now === undefined ? Number.NaN : (parseInstant(script.now) ?? Number.NaN);
  return { outcomes, loop: project(state, new Date(now)) ?? null, messages };
}
