// The seed validators (agent definition, model turn, loop), precompiled to standalone code in
// ./generated: no process compiles them. Modules that need one seed import its generated module
// directly; this gathers the three for callers that want them together.

import type { Validator } from "./ajv-factory.js";
import { validate as agentDefinition } from "./generated/agent-definition.js";
import { validate as loop } from "./generated/loop.js";
import { validate as modelTurn } from "./generated/model-turn.js";

export type { AjvProfile, ErrorObject, ValidateFunction, Validator } from "./ajv-factory.js";
export { createAjv } from "./ajv-factory.js";

export interface ContractValidators {
  readonly agentDefinition: Validator;
  readonly modelTurn: Validator;
  readonly loop: Validator;
}

const SEED_VALIDATORS: ContractValidators = { agentDefinition, modelTurn, loop };

/** The seed validators: the same functions for the whole process, never compiled. */
export function contractValidators(): ContractValidators {
  return SEED_VALIDATORS;
}
