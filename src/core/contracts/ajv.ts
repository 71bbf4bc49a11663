// Ajv instances set up for the contracts. Validators are compiled once per process (lazily) and
// are immutable afterwards, so sharing them is safe.
import Ajv2020Module, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import fastUri from "fast-uri";
import {
  agentDefinitionSchema,
  COMMON_SCHEMA_REF,
  loopSchema,
  modelTurnSchema,
  operatorTaskCommonSchema,
} from "./schemas.js";

// CommonJS default-export interop under NodeNext.
const Ajv2020 = Ajv2020Module as unknown as typeof Ajv2020Module.default;
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
type Ajv = InstanceType<typeof Ajv2020>;

const U64_MAX = 18446744073709551615n;
const I64_MIN = -9223372036854775808n;
const I64_MAX = 9223372036854775807n;

/**
 * RFC 3986 resolution of a relative reference against a URN base yields a URN without a namespace
 * identifier, which fast-uri refuses to serialise. A relative reference against a URN base resolves
 * to the reference itself; everything else is resolved as usual.
 */
const uriResolver = {
  parse: fastUri.parse,
  serialize: fastUri.serialize,
  resolve(base: string, path: string): string {
    if (/^urn:/i.test(base) && !/^[a-z][a-z0-9+.-]*:/i.test(path) && !path.startsWith("#")) {
      return path;
    }
    return fastUri.resolve(base, path);
  },
};

function isBigIntText(n: number): bigint | undefined {
  return Number.isInteger(n) ? BigInt(n) : undefined;
}

/** A fresh Ajv 2020 instance with the formats and keywords the contracts use, in strict mode. */
export function createAjv(options: { strictLoop?: boolean } = {}): Ajv {
  const loose = options.strictLoop === true;
  const ajv = new Ajv2020({
    strict: true,
    strictTypes: !loose,
    strictRequired: !loose,
    allErrors: true,
    uriResolver,
    // Contract patterns use \u escapes and classes that need the unicode flag.
    unicodeRegExp: true,
  });
  addFormats(ajv, { formats: ["date-time", "date", "time", "uri", "email", "uuid"] });
  ajv.addFormat("uint64", {
    type: "number",
    validate: (n: number) => {
      const b = isBigIntText(n);
      return b !== undefined && b >= 0n && b <= U64_MAX;
    },
  });
  ajv.addFormat("int64", {
    type: "number",
    validate: (n: number) => {
      const b = isBigIntText(n);
      return b !== undefined && b >= I64_MIN && b <= I64_MAX;
    },
  });
  ajv.addFormat("double", { type: "number", validate: (n: number) => Number.isFinite(n) });
  ajv.addKeyword({ keyword: "x-dia-status", schemaType: "string" });
  return ajv;
}

export interface ContractValidators {
  readonly agentDefinition: ValidateFunction;
  readonly modelTurn: ValidateFunction;
  readonly loop: ValidateFunction;
  /** The strict Ajv instance the definition and turn validators live in, for further schemas. */
  readonly ajv: Ajv;
}

let cached: ContractValidators | undefined;

/**
 * The seed validators, each compiled once per process on first use (a process that only checks
 * turns never pays for compiling the definition or loop schemas).
 */
export function contractValidators(): ContractValidators {
  if (cached !== undefined) return cached;
  let ajv: Ajv | undefined;
  let agentDefinition: ValidateFunction | undefined;
  let modelTurn: ValidateFunction | undefined;
  let loop: ValidateFunction | undefined;
  const strictAjv = (): Ajv => {
    ajv ??= createAjv();
    return ajv;
  };
  cached = {
    get ajv() {
      return strictAjv();
    },
    get agentDefinition() {
      agentDefinition ??= strictAjv().compile(agentDefinitionSchema);
      return agentDefinition;
    },
    get modelTurn() {
      modelTurn ??= strictAjv().compile(modelTurnSchema);
      return modelTurn;
    },
    get loop() {
      if (loop === undefined) {
        // The loop seed's if/then/else uses `required` without `type`: strictTypes/strictRequired off.
        const loopAjv = createAjv({ strictLoop: true });
        loopAjv.addSchema(operatorTaskCommonSchema, COMMON_SCHEMA_REF);
        loop = loopAjv.compile(loopSchema);
      }
      return loop;
    },
  };
  return cached;
}

export type { ErrorObject, ValidateFunction };
