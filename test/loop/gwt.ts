// Given / When / Then for the loop decider: given(facts).when(command, at).then(step) /
// .thenRefuses(code, counter?) / .thenReplays(sequence?).
import { expect } from "vitest";
import { decide } from "../../src/core/loop/decide.js";
import { fold } from "../../src/core/loop/state.js";
import type {
  Decision,
  Fact,
  LimitKey,
  LimitLayer,
  LoopCommand,
  Step,
} from "../../src/core/loop/types.js";

export const T0 = Date.parse("2026-12-01T10:00:00Z");
/** An instant `s` seconds after T0. */
export const at = (s: number): Date => new Date(T0 + s * 1000);

export const QUERY = "query:demo-1";
export const BINDING = "operator-task-local-binding:fix-slugify";
export const OPERATOR = "node-operator-binding:alice";

export const LAYERS: LimitLayer[] = [
  { "max/passages": 8, "max/cycles": 4, "max/experiments": 2, "max/wall-time-ms": 3_600_000 },
  { "max/passages": 6 },
];

const b64 = (n: number, pad: string) => `${pad.repeat(43 - String(n).length)}${n}`.slice(-43);
export const proposal = (n: number) => `corpus-experiment:sha256:${b64(n, "P")}`;
export const execution = (n: number) => `corpus-task-pack-execution:sha256:${b64(n, "E")}`;

export const open = (layers: LimitLayer[] = LAYERS): LoopCommand => ({
  op: "open",
  query: QUERY,
  binding: BINDING,
  operator: OPERATOR,
  layers,
});
export const passage = (
  n: number,
  role: "implementer" | "reviewer" | "adversarial-critic" | "summarizer" = "implementer",
  agent = "agent:a1",
): LoopCommand => ({ op: "charge-passage", role, agent, passage: `passage:p${n}` });
export const cycle = (n: number): LoopCommand => ({ op: "open-cycle", proposal: proposal(n) });
export const admit = (n: number): LoopCommand => ({ op: "admit-run", proposal: proposal(n) });
export const conclude = (
  n: number,
  outcome: "verified" | "verification-failed" | "refused" | "cancelled" | "unknown",
  refusal?: string,
  exec = n,
): LoopCommand =>
  refusal === undefined
    ? { op: "conclude", proposal: proposal(n), execution: execution(exec), outcome }
    : { op: "conclude", proposal: proposal(n), execution: execution(exec), outcome, refusal };
export const renew = (deadline: Date, operator?: string): LoopCommand =>
  operator === undefined
    ? { op: "renew", deadline: deadline.toISOString() }
    : { op: "renew", deadline: deadline.toISOString(), operator };
export const cancel = (operator?: string): LoopCommand =>
  operator === undefined ? { op: "cancel" } : { op: "cancel", operator };

/** The facts of commands run in order at T0, T0+1 s, …; every one must append. */
export function history(...commands: LoopCommand[]): Fact[] {
  const facts: Fact[] = [];
  for (const [i, command] of commands.entries()) {
    const d = decide(fold(facts), command, at(i));
    if (d.result !== "appended") {
      throw new Error(`history: command ${i} (${command.op}) did not append: ${JSON.stringify(d)}`);
    }
    facts.push(d.fact);
  }
  return facts;
}

export interface Then {
  readonly decision: Decision;
  then(step: Step): Fact;
  thenRefuses(code: string, counter?: LimitKey): void;
  thenReplays(sequence?: number): Fact;
}

export function given(facts: readonly Fact[]) {
  return {
    when(command: LoopCommand, now: Date): Then {
      const state = fold(facts);
      const decision = decide(state, command, now);
      return {
        decision,
        // biome-ignore lint/suspicious/noThenProperty: the Given/When/Then vocabulary; never awaited.
        then(step) {
          expect(decision).toMatchObject({ result: "appended" });
          if (decision.result !== "appended") throw new Error("unreachable");
          expect(decision.fact.step).toEqual(step);
          expect(decision.fact.sequence).toBe(facts.length + 1);
          return decision.fact;
        },
        thenRefuses(code, counter) {
          expect(decision.result).toBe("refused");
          if (decision.result !== "refused") throw new Error("unreachable");
          expect(decision.refusal.code).toBe(code);
          expect(decision.refusal.counter).toBe(counter);
        },
        thenReplays(sequence) {
          expect(decision.result).toBe("replayed");
          if (decision.result !== "replayed" || decision.fact === undefined) {
            throw new Error("no replayed fact");
          }
          if (sequence !== undefined) expect(decision.fact.sequence).toBe(sequence);
          expect(facts).toContainEqual(decision.fact);
          return decision.fact;
        },
      };
    },
  };
}
