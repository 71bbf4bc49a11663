// The pure checks of the library, over values rather than files: an agent definition's stored form,
// one model turn against a passage's tools and role, a loop document, and a loop command script run
// through the decider. Refusals are values with stable codes; none of these throws for bad input.
import type { AgentDefinition } from "../core/definition/types.js";
import { validateDefinition } from "../core/definition/validate.js";
import { checkLoopDocument } from "../core/loop/check.js";
import { parseScript } from "../core/loop/script.js";
import { type Simulation, simulate } from "../core/loop/simulate.js";
import type { LoopState } from "../core/loop/state.js";
import type { Role } from "../core/loop/types.js";
import { fail, ok, type Result } from "../core/result.js";
import { createToolRegistry, type ToolSpec } from "../core/turn/tool-registry.js";
import type { ValidTurn } from "../core/turn/types.js";
import { validateTurn } from "../core/turn/validate-turn.js";

/** The definition in its stored form (usual spellings, null optionals removed), or why not. */
export function normalizeDefinition(text: string): Result<AgentDefinition> {
  const r = validateDefinition(text);
  return r.ok ? ok(r.value.definition) : r;
}

export interface TurnCheckOptions {
  /** The passage's tools; their names and schemas are checked first (`tool/…`). */
  readonly tools?: readonly ToolSpec[];
  /** The passage's role: which message types it may emit. Any, when absent. */
  readonly role?: Role;
}

/** One model turn (its JSON text, or the parsed value) against every rule of a passage. */
export function checkTurn(turn: unknown, options: TurnCheckOptions = {}): Result<ValidTurn> {
  const registry = createToolRegistry(options.tools ?? []);
  if (!registry.ok) return registry;
  const ctx = {
    registry: registry.value,
    ...(options.role === undefined ? {} : { role: options.role }),
  };
  return validateTurn(turn, ctx);
}

/**
 * A loop document (parsed JSON) end to end: its schema, contiguous facts, every fact legal in
 * order, and its projection equal to the fold of its facts (its state as of `now`, when given).
 */
export function checkLoop(
  document: unknown,
  options: { readonly now?: Date } = {},
): Result<LoopState> {
  return checkLoopDocument(document, options.now === undefined ? {} : { now: options.now });
}

/** A loop command script (parsed JSON) through the decider: no model, no sandbox. */
export function simulateLoop(script: unknown): Result<Simulation> {
  const parsed = parseScript(script);
  return parsed.ok ? ok(simulate(parsed.value)) : fail(parsed.errors);
}
