// The tool registry of a passage: names, descriptions, effect classes and input schemas compiled
// at registration (once per process for each distinct schema; the plainest ones only when they
// first refuse arguments, see simple-schema.ts). Schemas come from agent definitions and MCP servers, so they are compiled
// tolerantly: unknown keywords and formats are ignored; draft-07 schemas (declared, or undeclared
// and only valid as draft-07) use a draft-07 validator, all others draft 2020-12.

import { createAjv, type ValidateFunction } from "../contracts/ajv-factory.js";
import { canonicalJson } from "../records/canonical.js";
import { fail, ok, type Problem, pointer, type Result } from "../result.js";
import { simpleSchemaOf, simpleValidator } from "./simple-schema.js";

type AnyAjv = ReturnType<typeof createAjv>;

export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_.-]+$/;

export type ToolEffect = "observation" | "mutation";

export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly effect: ToolEffect;
}

/** A registered tool: its spec and its compiled input-schema validator. */
export interface RegisteredTool {
  readonly spec: ToolSpec;
  readonly validate: ValidateFunction;
}

export interface ToolRegistry {
  /** The registered specs, in registration order. */
  specs(): readonly ToolSpec[];
  get(name: string): RegisteredTool | undefined;
  /** The same tools restricted to one effect class (no recompilation). */
  withEffect(effect: ToolEffect): ToolRegistry;
}

const DRAFT_07_LIKE = /json-schema\.org\/draft-0[4-7]\/schema/;

/** Compiles tool input schemas; one Ajv per dialect, created on first use. */
class TolerantCompiler {
  private ajv2020: AnyAjv | undefined;
  private ajv07: AnyAjv | undefined;

  compile(schema: Readonly<Record<string, unknown>>): ValidateFunction {
    const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
    // The root $id and $schema are dropped: two tools may share an $id, and the dialect is chosen here.
    const { $id: _id, $schema: _schema, ...rest } = schema;
    if (DRAFT_07_LIKE.test(dialect)) return this.draft07().compile(rest);
    try {
      return this.draft2020().compile(rest);
    } catch (e) {
      // An undeclared dialect that only draft-07 accepts (array-form `items`) is read as draft-07.
      try {
        return this.draft07().compile(rest);
      } catch {
        throw e;
      }
    }
  }

  private draft2020(): AnyAjv {
    this.ajv2020 ??= createAjv("tool");
    return this.ajv2020;
  }

  private draft07(): AnyAjv {
    this.ajv07 ??= createAjv("tool-draft-07");
    return this.ajv07;
  }
}

/** Compiled validators kept across registries, by schema; past this many, all are dropped. */
const COMPILED_MAX = 512;
const compiled = new Map<string, ValidateFunction>();
let shared: TolerantCompiler | undefined;

/**
 * A schema's validator, compiled once per process for each distinct schema (its canonical JSON):
 * every passage of every drive registers the same tools, and compiling them again each time costs
 * tens of milliseconds. One compiler is shared (schemas whose nested `$id`s clash still compile,
 * each against its own). The cache is bounded: once it holds COMPILED_MAX schemas it starts again
 * with a fresh compiler, so that schemas come and go without the compiler growing.
 */
function compileOnce(schema: Readonly<Record<string, unknown>>): ValidateFunction {
  const key = canonicalJson(schema);
  const known = compiled.get(key);
  if (known !== undefined) return known;
  if (compiled.size >= COMPILED_MAX) {
    compiled.clear();
    shared = undefined;
  }
  const { $id: _id, $schema: _schema, ...rest } = schema;
  const simple = simpleSchemaOf(rest);
  let validate: ValidateFunction;
  if (simple === undefined) {
    shared ??= new TolerantCompiler();
    validate = shared.compile(schema);
  } else {
    // Compiled by Ajv only when arguments are refused (see simple-schema.ts).
    validate = simpleValidator(simple, () => {
      shared ??= new TolerantCompiler();
      return shared.compile(schema);
    });
  }
  compiled.set(key, validate);
  return validate;
}

function acceptsObjects(schema: Readonly<Record<string, unknown>>): boolean {
  const t = schema.type;
  if (t === undefined) return true;
  if (typeof t === "string") return t === "object";
  return Array.isArray(t) && t.includes("object");
}

function isRecord(x: unknown): x is Readonly<Record<string, unknown>> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function makeRegistry(tools: readonly RegisteredTool[]): ToolRegistry {
  const byName = new Map(tools.map((t) => [t.spec.name, t]));
  const specs = tools.map((t) => t.spec);
  return {
    specs: () => specs,
    get: (name) => byName.get(name),
    withEffect: (effect) => makeRegistry(tools.filter((t) => t.spec.effect === effect)),
  };
}

/**
 * Registers tools, refusing an invalid name (`tool/name-invalid`), a repeated name
 * (`tool/duplicate-name`), an unknown effect (`tool/effect-invalid`) and an input schema that does
 * not compile or whose root does not accept objects (`tool/input-schema`). Paths index `specs`.
 */
export function createToolRegistry(specs: readonly ToolSpec[]): Result<ToolRegistry> {
  const errors: Problem[] = [];
  const seen = new Set<string>();
  const tools: RegisteredTool[] = [];
  specs.forEach((spec, i) => {
    const before = errors.length;
    if (typeof spec.name !== "string" || !TOOL_NAME_PATTERN.test(spec.name)) {
      errors.push({
        code: "tool/name-invalid",
        path: pointer(i, "name"),
        message: `tool name ${JSON.stringify(spec.name)} does not match ${TOOL_NAME_PATTERN.source}`,
      });
    } else if (seen.has(spec.name)) {
      errors.push({
        code: "tool/duplicate-name",
        path: pointer(i, "name"),
        message: `tool ${spec.name} is registered twice`,
      });
    } else {
      seen.add(spec.name);
    }
    if (spec.effect !== "observation" && spec.effect !== "mutation") {
      errors.push({
        code: "tool/effect-invalid",
        path: pointer(i, "effect"),
        message: `effect must be "observation" or "mutation", not ${JSON.stringify(spec.effect)}`,
      });
    }
    let validate: ValidateFunction | undefined;
    if (!isRecord(spec.inputSchema)) {
      errors.push({
        code: "tool/input-schema",
        path: pointer(i, "inputSchema"),
        message: "the input schema must be a JSON object",
      });
    } else if (!acceptsObjects(spec.inputSchema)) {
      errors.push({
        code: "tool/input-schema",
        path: pointer(i, "inputSchema", "type"),
        message: 'the input schema\'s root must accept objects (type "object" or no type)',
      });
    } else {
      try {
        validate = compileOnce(spec.inputSchema);
      } catch (e) {
        errors.push({
          code: "tool/input-schema",
          path: pointer(i, "inputSchema"),
          message: `the input schema does not compile: ${(e as Error).message}`,
        });
      }
    }
    if (errors.length === before && validate !== undefined) tools.push({ spec, validate });
  });
  return errors.length > 0 ? fail(errors) : ok(makeRegistry(tools));
}
