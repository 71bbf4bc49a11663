// How a cell's loop counts: `passed` (it stopped succeeded), `failed` (it stopped otherwise, or it
// waits on something nobody will give it in an eval: a spent budget, a passed deadline, a Question,
// a model with no valid turn or no scripted answer left), or `error` (the infrastructure failed: the
// sandbox, a model endpoint, the store). An `error` is unscored: it is retried, and never counts as a
// failure of the agent.
import type { Stop } from "../../core/loop/types.js";
import type { Waiting } from "../pending.js";

export type CellOutcome = "passed" | "failed" | "error";

/** Model failures that say the endpoint or its credentials failed, not the agent. */
const INFRASTRUCTURE_MODEL_CODES: ReadonlySet<string> = new Set([
  "model/unreachable",
  "model/timeout",
  "model/unavailable",
  "model/rate-limited",
  "model/http-error",
  "model/failed",
  "model/aborted",
  "model/auth",
  "model/credential",
  "model/missing-key",
]);

/** Refusals that stop a loop because this host could not contain its run, not because of the agent. */
const INFRASTRUCTURE_REFUSALS: ReadonlySet<string> = new Set(["environment/not-contained"]);

export function isInfrastructureModelCode(code: string): boolean {
  return INFRASTRUCTURE_MODEL_CODES.has(code);
}

/**
 * A stopped loop's outcome. A loop stops `unknown` only when its host died while a step ran (the
 * step is never repeated): that is the infrastructure's failure, so the cell is tried again in a
 * fresh loop.
 */
export function outcomeOfStop(stop: Stop): CellOutcome {
  if (stop.reason === "succeeded") return "passed";
  if (stop.reason === "unknown") return "error";
  if (stop.reason === "safety-refused" && INFRASTRUCTURE_REFUSALS.has(stop["refusal/code"]))
    return "error";
  return "failed";
}

/** Why the eval closes a loop that waits: what nobody will give it. */
export interface CloseReason {
  readonly reason: "budget" | "deadline" | "question" | "model";
  readonly detail: string;
  readonly code?: string;
}

/**
 * What an open loop's wait means for its cell: `close` (the agent's own failure: the eval cancels
 * the loop and records why), `error` (the infrastructure: unscored, retried), or `drive` (nothing
 * holds it, or an approval that people give under the operator's policy: a drive waits for it).
 */
export function judgeWaiting(
  waiting: Waiting | undefined,
):
  | { readonly kind: "close"; readonly why: CloseReason }
  | { readonly kind: "error"; readonly code: string; readonly message: string }
  | { readonly kind: "drive" } {
  if (waiting === undefined) return { kind: "drive" };
  switch (waiting.reason) {
    case "budget":
      return {
        kind: "close",
        why: { reason: "budget", detail: `its ${waiting.counter} budget is spent` },
      };
    case "deadline":
      return {
        kind: "close",
        why: { reason: "deadline", detail: `its deadline ${waiting.deadline} passed` },
      };
    case "answer":
      return {
        kind: "close",
        why: { reason: "question", detail: "it asks a question nobody answers in an eval" },
      };
    case "model":
      return isInfrastructureModelCode(waiting.code)
        ? { kind: "error", code: waiting.code, message: waiting.message }
        : {
            kind: "close",
            why: {
              reason: "model",
              code: waiting.code,
              detail: `the ${waiting.role}'s model gave no valid turn: ${waiting.code}`,
            },
          };
    case "tool":
    case "definition":
      return { kind: "error", code: waiting.code, message: waiting.message };
    case "approval":
      return { kind: "drive" };
  }
}
