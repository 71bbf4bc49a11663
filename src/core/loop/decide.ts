// The decider: decide(state, command, now) → appended fact | replay | refusal, for every row of the
// table of docs/spec/loop.md, in its check order: one handler per command kind (decideOpen,
// decideChargePassage, …) behind a small dispatch. Pure and synchronous; refusals are values.
import { assertNever } from "../result.js";
import { effectiveLimits } from "./limits.js";
import { type LoopState, type Opening, stateNameAt } from "./state.js";
import { formatInstant, parseInstant } from "./time.js";
import {
  chargeKeyOf,
  type Decision,
  type Fact,
  type LimitKey,
  type Limits,
  type LoopCommand,
  type LoopRefusal,
  OUTCOMES,
  ROLES,
  type Step,
} from "./types.js";
import { isRef, isRefusalCode, type RefKind } from "./wire-patterns.js";

/** At most this many renewals per loop (docs/spec/loop.md). */
export const MAX_RENEWALS = 64;

export function refused(code: string, message: string, counter?: LimitKey): Decision {
  const refusal: LoopRefusal =
    counter === undefined ? { code, message } : { code, message, counter };
  return { result: "refused", refusal };
}

function replayed(fact: Fact): Decision {
  return { result: "replayed", fact };
}

function appended(state: LoopState, query: string, step: Step, nowMs: number): Decision {
  return {
    result: "appended",
    fact: {
      "query/id": query,
      sequence: state.lastSequence + 1,
      "recorded-at": formatInstant(nowMs),
      step,
    },
  };
}

/** The command's own refs and enums, spelled as the seed schema requires. */
function malformed(command: LoopCommand): Decision | undefined {
  const bad = (what: string, value: unknown) =>
    refused(
      "loop/command-invalid",
      `${command.op}: ${what} is not valid: ${JSON.stringify(value)}`,
    );
  const refs: Array<[RefKind, string, unknown]> = [];
  switch (command.op) {
    case "open":
      refs.push(["query", "query", command.query]);
      refs.push(["binding", "binding", command.binding]);
      refs.push(["operator", "operator", command.operator]);
      break;
    case "charge-passage":
      if (!(ROLES as readonly unknown[]).includes(command.role)) return bad("role", command.role);
      refs.push(["agent", "agent", command.agent]);
      refs.push(["passage", "passage", command.passage]);
      break;
    case "open-cycle":
    case "admit-run":
      refs.push(["proposal", "proposal", command.proposal]);
      break;
    case "conclude":
      refs.push(["proposal", "proposal", command.proposal]);
      refs.push(["execution", "execution", command.execution]);
      if (!(OUTCOMES as readonly unknown[]).includes(command.outcome)) {
        return bad("outcome", command.outcome);
      }
      if (command.refusal !== undefined && !isRefusalCode(command.refusal)) {
        return bad("refusal", command.refusal);
      }
      break;
    case "renew":
    case "cancel":
      if (command.operator !== undefined) refs.push(["operator", "operator", command.operator]);
      break;
    default:
      assertNever(command, "command");
  }
  for (const [kind, what, value] of refs) if (!isRef(kind, value)) return bad(what, value);
  return undefined;
}

function sameLimits(a: Limits, b: Limits): boolean {
  return (Object.keys(a) as LimitKey[]).every((k) => a[k] === b[k]);
}

/** loop/not-open then loop/deadline-passed: the state checks every new charge passes. */
function notTakingCharges(state: LoopState, nowMs: number): Decision | undefined {
  const name = stateNameAt(state, nowMs);
  if (name === "stopped") {
    return refused("loop/not-open", `the loop is stopped (${state.stop?.reason})`);
  }
  if (name === "deadline-passed") {
    return refused("loop/deadline-passed", `the deadline ${state.deadline} has passed`);
  }
  return undefined;
}

function budget(used: number, limits: Limits, counter: LimitKey): Decision | undefined {
  return used < limits[counter]
    ? undefined
    : refused("loop/budget-exhausted", `${counter} = ${limits[counter]} is spent`, counter);
}

/** A command of one kind. */
type CommandOf<K extends LoopCommand["op"]> = Extract<LoopCommand, { readonly op: K }>;

/**
 * Decide one command against the state at `now`. Appended facts are numbered lastSequence + 1 and
 * stamped `now`; a replay returns the fact that already holds the command's charge key.
 */
export function decide(state: LoopState, command: LoopCommand, now: Date): Decision {
  const nowMs = now.getTime();
  if (!Number.isFinite(nowMs)) return refused("loop/command-invalid", "the time is not valid");
  const invalid = malformed(command);
  if (invalid !== undefined) return invalid;
  if (command.op === "open") return decideOpen(state, command, nowMs);

  const opening = state.opening;
  if (opening === undefined) return refused("loop/not-opened", "the loop has not been opened");

  switch (command.op) {
    case "charge-passage":
      return decideChargePassage(state, opening, command, nowMs);
    case "open-cycle":
      return decideOpenCycle(state, opening, command, nowMs);
    case "admit-run":
      return decideAdmitRun(state, opening, command, nowMs);
    case "conclude":
      return decideConclude(state, opening, command, nowMs);
    case "renew":
      return decideRenew(state, opening, command, nowMs);
    case "cancel":
      return decideCancel(state, opening, command, nowMs);
    default:
      return assertNever(command, "command");
  }
}

/** `open`: the `opened` fact, a replay of it, or a refusal of its limits or of another opening. */
function decideOpen(state: LoopState, command: CommandOf<"open">, nowMs: number): Decision {
  const opening = state.opening;
  const limits = effectiveLimits(command.layers);
  if (opening !== undefined) {
    const same =
      limits.ok &&
      opening.query === command.query &&
      opening.bindingRef === command.binding &&
      opening.operatorRef === command.operator &&
      sameLimits(opening.limits, limits.limits);
    const first = state.facts[0];
    if (same && first !== undefined) return replayed(first);
    return refused(
      "loop/key-conflict",
      `the loop ${opening.query} is already opened with another binding, operator or limits`,
    );
  }
  if (!limits.ok) return { result: "refused", refusal: limits.refusal };
  return appended(
    state,
    command.query,
    {
      kind: "opened",
      "binding/ref": command.binding,
      limits: limits.limits,
      deadline: formatInstant(nowMs + limits.limits["max/wall-time-ms"]),
      "operator/binding-ref": command.operator,
    },
    nowMs,
  );
}

/** `charge-passage`: a passage of a role charged against the passage budgets. */
function decideChargePassage(
  state: LoopState,
  opening: Opening,
  command: CommandOf<"charge-passage">,
  nowMs: number,
): Decision {
  const limits = opening.limits;
  const step: Step = {
    kind: "passage-charged",
    role: command.role,
    "agent/id": command.agent,
    "passage/ref": command.passage,
  };
  const earlier = state.byKey.get(chargeKeyOf(step));
  if (earlier !== undefined) {
    if (earlier.step.kind === "passage-charged" && earlier.step.role === command.role) {
      return replayed(earlier);
    }
    return refused(
      "loop/key-conflict",
      `passage ${command.passage} of ${command.agent} was charged for another role`,
    );
  }
  const closed = notTakingCharges(state, nowMs);
  if (closed !== undefined) return closed;
  const spent = state.spent;
  const over =
    budget(spent.passages, limits, "max/passages") ??
    (command.role === "implementer"
      ? budget(spent.solverPassages, limits, "max/solver-passages")
      : command.role === "reviewer"
        ? budget(spent.reviewerPassages, limits, "max/reviewer-passages")
        : undefined);
  if (over !== undefined) return over;
  return appended(state, opening.query, step, nowMs);
}

/** `open-cycle`: a proposal's cycle charged against the cycle budget. */
function decideOpenCycle(
  state: LoopState,
  opening: Opening,
  command: CommandOf<"open-cycle">,
  nowMs: number,
): Decision {
  const limits = opening.limits;
  const step: Step = { kind: "cycle-opened", "proposal/ref": command.proposal };
  const earlier = state.byKey.get(chargeKeyOf(step));
  if (earlier !== undefined) return replayed(earlier);
  const closed = notTakingCharges(state, nowMs);
  if (closed !== undefined) return closed;
  const over = budget(state.spent.cycles, limits, "max/cycles");
  if (over !== undefined) return over;
  return appended(state, opening.query, step, nowMs);
}

/** `admit-run`: a run of a proposal whose cycle is open, charged against the experiment budget. */
function decideAdmitRun(
  state: LoopState,
  opening: Opening,
  command: CommandOf<"admit-run">,
  nowMs: number,
): Decision {
  const limits = opening.limits;
  // A replayed admission is still refused on a stopped loop or past the deadline: it would
  // license new effects.
  const closed = notTakingCharges(state, nowMs);
  if (closed !== undefined) return closed;
  const step: Step = { kind: "run-admitted", "proposal/ref": command.proposal };
  const earlier = state.byKey.get(chargeKeyOf(step));
  if (earlier !== undefined) return replayed(earlier);
  const over = budget(state.spent.runs, limits, "max/experiments");
  if (over !== undefined) return over;
  if (!state.byKey.has(chargeKeyOf({ kind: "cycle-opened", "proposal/ref": command.proposal }))) {
    return refused("loop/cycle-missing", `no cycle was opened for ${command.proposal}`);
  }
  return appended(state, opening.query, step, nowMs);
}

/** `conclude`: the outcome of an admitted run, once. */
function decideConclude(
  state: LoopState,
  opening: Opening,
  command: CommandOf<"conclude">,
  nowMs: number,
): Decision {
  const step: Step =
    command.refusal === undefined
      ? {
          kind: "concluded",
          "execution/ref": command.execution,
          "proposal/ref": command.proposal,
          outcome: command.outcome,
        }
      : {
          kind: "concluded",
          "execution/ref": command.execution,
          "proposal/ref": command.proposal,
          outcome: command.outcome,
          "refusal/code": command.refusal,
        };
  const earlier = state.byKey.get(chargeKeyOf(step));
  if (earlier !== undefined) {
    const e = earlier.step;
    if (
      e.kind === "concluded" &&
      e["execution/ref"] === command.execution &&
      e.outcome === command.outcome &&
      e["refusal/code"] === command.refusal
    ) {
      return replayed(earlier);
    }
    return refused(
      "loop/already-concluded",
      `the run of ${command.proposal} was already concluded differently (fact ${earlier.sequence})`,
    );
  }
  if (!state.byKey.has(chargeKeyOf({ kind: "run-admitted", "proposal/ref": command.proposal }))) {
    return refused("loop/run-missing", `no run was admitted for ${command.proposal}`);
  }
  // Allowed in any state: a published run always concludes.
  return appended(state, opening.query, step, nowMs);
}

/** `renew`: the operator moves the deadline later, within the wall-time bound of now. */
function decideRenew(
  state: LoopState,
  opening: Opening,
  command: CommandOf<"renew">,
  nowMs: number,
): Decision {
  const limits = opening.limits;
  const operator = command.operator ?? opening.operatorRef;
  if (operator !== opening.operatorRef) {
    return refused("loop/not-operator", `${operator} is not the loop's operator`);
  }
  const deadlineMs = parseInstant(command.deadline);
  if (deadlineMs === undefined) {
    return refused("loop/renewal-invalid", `${command.deadline} is not an RFC 3339 date-time`);
  }
  const deadline = formatInstant(deadlineMs);
  if (deadlineMs === state.deadlineMs) {
    const setter = state.facts[state.deadlineSequence - 1];
    if (setter !== undefined) return replayed(setter);
  }
  const step: Step = { kind: "renewed", deadline, "operator/binding-ref": operator };
  const earlier = state.byKey.get(chargeKeyOf(step));
  if (earlier !== undefined) return replayed(earlier);
  if (state.stop !== undefined) {
    return refused("loop/not-open", `the loop is stopped (${state.stop.reason})`);
  }
  if (state.renewals >= MAX_RENEWALS) {
    return refused("loop/renewals-exhausted", `the loop was renewed ${MAX_RENEWALS} times`);
  }
  if (deadlineMs <= state.deadlineMs) {
    return refused(
      "loop/renewal-invalid",
      `${deadline} is not later than the current deadline ${state.deadline}`,
    );
  }
  if (deadlineMs <= nowMs) {
    return refused("loop/renewal-invalid", `${deadline} is not later than now`);
  }
  if (deadlineMs - nowMs > limits["max/wall-time-ms"]) {
    return refused(
      "loop/renewal-invalid",
      `${deadline} is more than max/wall-time-ms = ${limits["max/wall-time-ms"]} after now`,
    );
  }
  return appended(state, opening.query, step, nowMs);
}

/** `cancel`: the operator stops the loop; a stopped loop replays the fact that stopped it. */
function decideCancel(
  state: LoopState,
  opening: Opening,
  command: CommandOf<"cancel">,
  nowMs: number,
): Decision {
  const operator = command.operator ?? opening.operatorRef;
  if (operator !== opening.operatorRef) {
    return refused("loop/not-operator", `${operator} is not the loop's operator`);
  }
  if (state.stop !== undefined) {
    const setter = state.facts[state.stop.sequence - 1];
    if (setter !== undefined) return replayed(setter);
  }
  return appended(
    state,
    opening.query,
    { kind: "cancelled", "operator/binding-ref": operator },
    nowMs,
  );
}
