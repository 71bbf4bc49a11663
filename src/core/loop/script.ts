// Loop command scripts (docs/spec/loop.md): the schema of a script, read at the boundary before the decider
// sees any command.
import { createAjv, type ValidateFunction } from "../contracts/ajv-factory.js";
import { COMMON_SCHEMA_REF, operatorTaskCommonSchema } from "../contracts/schemas.js";
import { fail, ok, type Problem, type Result } from "../result.js";
import { parseInstant } from "./time.js";
import type { LimitLayer, LoopCommand } from "./types.js";

export interface ScriptCommand {
  readonly at: string;
  readonly command: LoopCommand;
}

export interface LoopScript {
  readonly query: string;
  readonly binding: string;
  readonly operator: string;
  readonly layers: readonly LimitLayer[];
  readonly commands: readonly ScriptCommand[];
  /** The instant the final document is projected at: `now`, else the last command's `at`. */
  readonly now: string | undefined;
}

const common = (name: string) => ({ $ref: `${COMMON_SCHEMA_REF}#/$defs/${name}` });
const time = { type: "string", format: "date-time" };
const proposalRef = { type: "string", pattern: "^corpus-experiment:sha256:[A-Za-z0-9_-]{43}$" };
const operatorRef = { type: "string", pattern: "^node-operator-binding:[^\\s]+$", maxLength: 512 };

const command = (op: string, properties: Record<string, unknown>, required: string[]) => ({
  type: "object",
  additionalProperties: false,
  required: ["at", "op", ...required],
  properties: { at: time, op: { const: op }, ...properties },
});

/** One schema per command `op`, so an error names the exact field of the exact command. */
const COMMAND_SCHEMAS: Readonly<Record<LoopCommand["op"], object>> = {
  open: command("open", {}, []),
  "charge-passage": command(
    "charge-passage",
    {
      role: { enum: ["implementer", "reviewer", "adversarial-critic", "summarizer"] },
      agent: { type: "string", pattern: "^agent:[^\\s]+$", maxLength: 512 },
      passage: { type: "string", pattern: "^[a-z][a-z0-9-]*:[^\\s]+$", maxLength: 512 },
    },
    ["role", "agent", "passage"],
  ),
  "open-cycle": command("open-cycle", { proposal: proposalRef }, ["proposal"]),
  "admit-run": command("admit-run", { proposal: proposalRef }, ["proposal"]),
  conclude: {
    ...command(
      "conclude",
      {
        proposal: proposalRef,
        execution: {
          type: "string",
          pattern: "^corpus-task-pack-execution:sha256:[A-Za-z0-9_-]{43}$",
        },
        outcome: { enum: ["verified", "verification-failed", "refused", "cancelled", "unknown"] },
        refusal: common("refusalCode"),
      },
      ["proposal", "execution", "outcome"],
    ),
    // `refusal` is taken when, and only when, the outcome is `refused`.
    if: { properties: { outcome: { const: "refused" } } },
    // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword.
    then: { required: ["refusal"] },
    else: { not: { required: ["refusal"] } },
  },
  renew: command("renew", { deadline: time, operator: operatorRef }, ["deadline"]),
  cancel: command("cancel", { operator: operatorRef }, []),
};

const SCRIPT_SCHEMA = {
  $id: "urn:warrant:loop-script:v1",
  type: "object",
  additionalProperties: false,
  required: ["query", "binding", "operator", "layers", "commands"],
  properties: {
    query: { type: "string", pattern: "^query:[^\\s]+$", maxLength: 512 },
    binding: { type: "string", pattern: "^operator-task-local-binding:[^\\s]+$", maxLength: 512 },
    operator: operatorRef,
    layers: { type: "array", minItems: 1, maxItems: 3, items: common("deliberationLimits") },
    commands: {
      type: "array",
      items: {
        type: "object",
        required: ["op"],
        properties: { op: { enum: Object.keys(COMMAND_SCHEMAS) } },
      },
    },
    now: time,
  },
};

interface Validators {
  readonly script: ValidateFunction;
  readonly commands: ReadonlyMap<string, ValidateFunction>;
}
let cache: Validators | undefined;

function validators(): Validators {
  if (cache !== undefined) return cache;
  // if/then/else with `required` and no `type`, as in the loop seed.
  const ajv = createAjv("contract-loose");
  ajv.addSchema(operatorTaskCommonSchema, COMMON_SCHEMA_REF);
  const script = ajv.compile(SCRIPT_SCHEMA);
  const commands = new Map(
    Object.entries(COMMAND_SCHEMAS).map(([op, schema]) => [
      op,
      ajv.compile({ $id: `urn:warrant:loop-script-command-${op}:v1`, ...schema }),
    ]),
  );
  cache = { script, commands };
  return cache;
}

function schemaProblems(v: ValidateFunction, base: string): Problem[] {
  return (v.errors ?? []).map((e) => ({
    code: "loop/script-invalid",
    path: `${base}${e.instancePath}`,
    message: `${e.message ?? "is invalid"} (${e.keyword})`,
  }));
}

/** A script, validated: every command well-formed with a valid `at`. */
export function parseScript(value: unknown): Result<LoopScript> {
  const v = validators();
  if (!v.script(value)) return fail(schemaProblems(v.script, ""));
  const raw = value as {
    query: string;
    binding: string;
    operator: string;
    layers: LimitLayer[];
    commands: Array<Record<string, unknown> & { op: LoopCommand["op"]; at: string }>;
    now?: string;
  };
  const problems: Problem[] = [];
  const commands: ScriptCommand[] = [];
  for (const [i, c] of raw.commands.entries()) {
    const check = v.commands.get(c.op);
    if (check !== undefined && !check(c)) {
      problems.push(...schemaProblems(check, `/commands/${i}`));
      continue;
    }
    for (const field of ["at", "deadline"] as const) {
      const t = c[field];
      if (typeof t === "string" && parseInstant(t) === undefined) {
        problems.push({
          code: "loop/script-invalid",
          path: `/commands/${i}/${field}`,
          message: `${t} is not an RFC 3339 date-time`,
        });
      }
    }
    const { at, ...rest } = c;
    const loopCommand = (
      c.op === "open"
        ? {
            op: "open",
            query: raw.query,
            binding: raw.binding,
            operator: raw.operator,
            layers: raw.layers,
          }
        : rest
    ) as LoopCommand;
    commands.push({ at, command: loopCommand });
  }
  if (raw.now !== undefined && parseInstant(raw.now) === undefined) {
    problems.push({
      code: "loop/script-invalid",
      path: "/now",
      message: `${raw.now} is not an RFC 3339 date-time`,
    });
  }
  if (problems.length > 0) return fail(problems);
  return ok({
    query: raw.query,
    binding: raw.binding,
    operator: raw.operator,
    layers: raw.layers,
    commands,
    now: raw.now ?? commands.at(-1)?.at,
  });
}
