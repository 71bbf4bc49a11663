// The seed schemas as sources of subschema validators (for linear-validation.ts): each in an Ajv
// instance of its own, made on first use, whose validators Ajv compiles once and keeps.
import { createAjv } from "./ajv-factory.js";
import type { SchemaSource } from "./linear-validation.js";
import {
  agentDefinitionSchema,
  COMMON_SCHEMA_REF,
  loopSchema,
  operatorTaskCommonSchema,
} from "./schemas.js";

type Ajv = ReturnType<typeof createAjv>;

function sourceOf(root: object, made: () => Ajv): SchemaSource {
  const id = (root as { $id?: string }).$id ?? "";
  let ajv: Ajv | undefined;
  return {
    root,
    validatorAt(pointer: string) {
      ajv ??= made();
      const v = ajv.getSchema(`${id}#${pointer}`);
      if (v === undefined) throw new Error(`no subschema at ${id}#${pointer}`);
      return v;
    },
  };
}

export interface ContractSources {
  readonly agentDefinition: SchemaSource;
  readonly loop: SchemaSource;
}

let cached: ContractSources | undefined;

/**
 * One source per seed, for the whole process (like contractValidators): nothing is compiled until a
 * long array needs its items validator.
 */
export function contractSources(): ContractSources {
  cached ??= {
    agentDefinition: sourceOf(agentDefinitionSchema, () => {
      const ajv = createAjv();
      ajv.addSchema(agentDefinitionSchema);
      return ajv;
    }),
    loop: sourceOf(loopSchema, () => {
      const ajv = createAjv("contract-loose");
      ajv.addSchema(operatorTaskCommonSchema, COMMON_SCHEMA_REF);
      ajv.addSchema(loopSchema);
      return ajv;
    }),
  };
  return cached;
}
