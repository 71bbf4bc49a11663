// Validation of one model turn against every rule of docs/spec/turns.md. Never throws: every failure is a
// Problem with a `turn/…` code and a JSON Pointer into the turn.
import type { ErrorObject } from "../contracts/ajv.js";
import { validate as modelTurnSchema } from "../contracts/generated/model-turn.js";
import type { Role } from "../loop/types.js";
import { fail, ok, type Problem, pointer, type Result } from "../result.js";
import { describeAjvError } from "./ajv-messages.js";
import { payloadValidators } from "./payload-schemas.js";
import type { ToolRegistry } from "./tool-registry.js";
import {
  type MessageType,
  type ModelTurn,
  ROLE_MESSAGE_TYPES,
  type ValidCall,
  type ValidMessage,
  type ValidTurn,
} from "./types.js";

export interface TurnContext {
  /** The tools registered for this passage. */
  readonly registry: ToolRegistry;
  /** The passage's role; when absent, any message type is allowed. */
  readonly role?: Role;
  /** The message types the passage may emit instead of its role's (a sub-agent's passage). */
  readonly messageTypes?: readonly MessageType[];
  /**
   * Whether a `paper_ref` resolves. The core cannot look at files or records: the caller decides
   * which refs must resolve (workspace files, records) and answers true for the others (URLs).
   */
  readonly resolvePaperRef?: (ref: string) => boolean;
}

type Parsed =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string; readonly position?: number };

function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    const message = (e as Error).message;
    const m = /position (\d+)/.exec(message);
    return m?.[1] === undefined
      ? { ok: false, error: message }
      : { ok: false, error: message, position: Number(m[1]) };
  }
}

function lineColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let column = 1;
  for (let i = 0; i < position && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      column = 1;
    } else {
      column++;
    }
  }
  return { line, column };
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/**
 * Ajv errors inside an embedded JSON text: the pointer names the text, the detail the path in it;
 * `subject` is the tool or message type the text belongs to.
 */
function embeddedErrors(
  code: string,
  path: string,
  what: string,
  subject: string,
  data: unknown,
  errors: readonly ErrorObject[] | null | undefined,
): Problem[] {
  return (errors ?? []).map((e) => ({
    code,
    path,
    message: `${what}: ${describeAjvError(e, data)}`,
    detail: {
      subject,
      instancePath: e.instancePath,
      keyword: e.keyword,
      schemaPath: e.schemaPath,
      params: e.params,
    },
  }));
}

/** The turn as JSON (parsed when it is text) that keeps the model-turn schema. */
function parseTurn(input: unknown): Result<ModelTurn> {
  let value: unknown = input;
  if (typeof input === "string") {
    const parsed = parseJson(input);
    if (!parsed.ok) {
      const at = parsed.position === undefined ? {} : lineColumn(input, parsed.position);
      return fail([
        { code: "turn/json", path: "", message: `the turn is not JSON: ${parsed.error}`, ...at },
      ]);
    }
    value = parsed.value;
  }

  const schema = modelTurnSchema;
  if (!schema(value)) {
    return fail(
      (schema.errors ?? []).map((e) => ({
        code: "turn/schema",
        path: e.instancePath,
        message: `the turn breaks the model-turn schema: ${describeAjvError(e, value)}`,
        detail: { keyword: e.keyword, schemaPath: e.schemaPath, params: e.params },
      })),
    );
  }
  return ok(value as ModelTurn);
}

/** The breaches of the turn's `kind`: tool calls without a message, or one message alone. */
function kindProblems(turn: ModelTurn): Problem[] {
  const errors: Problem[] = [];
  if (turn.kind === "tool_calls") {
    if (turn.tool_calls.length === 0) {
      errors.push({
        code: "turn/kind-mismatch",
        path: "/tool_calls",
        message:
          'an answer calls at least one tool, or emits one message (kind "tool_calls" needs at least one tool call)',
      });
    }
    if (turn.message !== null) {
      errors.push({
        code: "turn/kind-mismatch",
        path: "/message",
        message:
          'a message ends the passage and goes alone, without tool calls (kind "tool_calls" needs message: null)',
      });
    }
  } else {
    if (turn.message === null) {
      errors.push({
        code: "turn/kind-mismatch",
        path: "/message",
        message: 'kind "message" needs a non-null message',
      });
    }
    if (turn.tool_calls.length > 0) {
      errors.push({
        code: "turn/kind-mismatch",
        path: "/tool_calls",
        message: 'kind "message" needs tool_calls: []',
      });
    }
  }
  return errors;
}

/** Call `i` of the turn, its arguments parsed and checked against its tool; else problems added. */
function validCall(
  call: ModelTurn["tool_calls"][number],
  i: number,
  ctx: TurnContext,
  errors: Problem[],
): ValidCall | undefined {
  const tool = ctx.registry.get(call.name);
  if (tool === undefined) {
    errors.push({
      code: "turn/unknown-tool",
      path: pointer("tool_calls", i, "name"),
      message: `no tool named ${call.name} is registered for this passage`,
    });
    return undefined;
  }
  // Built only on failure: the valid path is the hot one.
  const argsPath = () => `/tool_calls/${i}/arguments_json`;
  const parsed = parseJson(call.arguments_json);
  if (!parsed.ok) {
    errors.push({
      code: "turn/arguments-not-object",
      path: argsPath(),
      message: `arguments of ${call.name} are not JSON: ${parsed.error}`,
      detail: { reason: "json", subject: call.name },
    });
    return undefined;
  }
  if (!isPlainObject(parsed.value)) {
    const got =
      parsed.value === null ? "null" : Array.isArray(parsed.value) ? "array" : typeof parsed.value;
    errors.push({
      code: "turn/arguments-not-object",
      path: argsPath(),
      message: `arguments of ${call.name} must be a JSON object, not ${got}`,
      detail: { reason: "type", type: got, subject: call.name },
    });
    return undefined;
  }
  if (!tool.validate(parsed.value)) {
    errors.push(
      ...embeddedErrors(
        "turn/arguments-invalid",
        argsPath(),
        `arguments of ${call.name}`,
        call.name,
        parsed.value,
        tool.validate.errors,
      ),
    );
    return undefined;
  }
  return { name: call.name, args: parsed.value };
}

/** The turn's message, its type allowed and its payload checked; else problems added. */
function validMessage(
  m: NonNullable<ModelTurn["message"]>,
  ctx: TurnContext,
  errors: Problem[],
): ValidMessage | undefined {
  let message: ValidMessage | undefined;
  const allowed =
    ctx.messageTypes ?? (ctx.role === undefined ? undefined : ROLE_MESSAGE_TYPES[ctx.role]);
  if (allowed !== undefined && !allowed.includes(m.type)) {
    const who = ctx.messageTypes === undefined ? `role ${ctx.role}` : "this passage";
    errors.push({
      code: "turn/type-not-allowed",
      path: "/message/type",
      message: `${who} may not emit ${m.type} (allowed: ${allowed.join(", ")})`,
    });
  }
  const parsed = parseJson(m.payload_json);
  if (!parsed.ok) {
    errors.push({
      code: "turn/payload-invalid",
      path: "/message/payload_json",
      message: `the ${m.type} payload is not JSON: ${parsed.error}`,
      detail: { reason: "json", subject: m.type },
    });
  } else {
    const validate = payloadValidators()[m.type];
    if (validate(parsed.value)) {
      message = { type: m.type, payload: parsed.value, paperRef: m.paper_ref };
    } else {
      errors.push(
        ...embeddedErrors(
          "turn/payload-invalid",
          "/message/payload_json",
          `the ${m.type} payload`,
          m.type,
          parsed.value,
          validate.errors,
        ),
      );
    }
  }
  if (
    m.paper_ref !== null &&
    ctx.resolvePaperRef !== undefined &&
    !resolves(ctx.resolvePaperRef, m.paper_ref)
  ) {
    errors.push({
      code: "turn/paper-ref-unresolved",
      path: "/message/paper_ref",
      message: `paper_ref ${JSON.stringify(m.paper_ref)} does not resolve`,
    });
  }
  return message;
}

export function validateTurn(input: unknown, ctx: TurnContext): Result<ValidTurn> {
  const parsed = parseTurn(input);
  if (!parsed.ok) return parsed;
  const turn = parsed.value;
  const errors: Problem[] = kindProblems(turn);
  const calls: ValidCall[] = [];
  turn.tool_calls.forEach((call, i) => {
    const valid = validCall(call, i, ctx, errors);
    if (valid !== undefined) calls.push(valid);
  });
  const message = turn.message === null ? undefined : validMessage(turn.message, ctx, errors);
  if (errors.length > 0) return fail(errors);
  return ok(message === undefined ? { turn, calls } : { turn, calls, message });
}

/** A hook that throws is a hook that could not resolve the ref. */
function resolves(hook: (ref: string) => boolean, ref: string): boolean {
  try {
    return hook(ref) === true;
  } catch {
    return false;
  }
}
