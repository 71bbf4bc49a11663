// How a typed message reaches a provider and comes back as the seed's wire turn. Tool mode: one
// message tool per message type the role may emit, named after the type, whose parameters are that
// type's payload schema. JSON mode: a response schema whose `message` is one branch per type, each
// carrying its payload as an object. Either answer becomes a seed turn whose `payload_json` is the
// payload's JCS text, with the nulls the strict form introduced dropped.
import { canonicalJson } from "../records/canonical.js";
import {
  dropIntroducedNulls,
  providerPayloadSchema,
  strictForm,
} from "./provider-payload-schema.js";
import {
  decodeToolName,
  isJsonObject,
  type Json,
  type JsonObject,
  providerTurnSchema,
  strictObstacle,
} from "./provider-schema.js";
import { MESSAGE_TYPES, type MessageType } from "./types.js";

/** What emitting each message does, as its tool says it. */
export const MESSAGE_DESCRIPTIONS: Readonly<Record<MessageType, string>> = {
  Plan: "Propose the next experiment and end the passage. The host checks it against the task pack, a reviewer reviews it, and only then do its steps run, in order, in a fresh copy of the workspace.",
  Question:
    "Ask the operator a question and end the passage; the loop waits for the answer, which you will see next time.",
  DeadEnd:
    "Say that you see no way forward, with what you tried, and end the passage; it goes to the operator.",
  Finding: "Report one finding, with its severity and evidence, and end the passage.",
  Verdict: "Decide on the proposal under review, with your findings, and end the passage.",
  Result: "Write the result of the loop, with its evidence, and end the passage.",
};

export function isMessageType(name: string): name is MessageType {
  return (MESSAGE_TYPES as readonly string[]).includes(name);
}

export interface MessageTool {
  /** The tool's name: the message type itself. Encoded registry names start in lower case, so a
   * message tool never collides with a registered tool. */
  readonly name: MessageType;
  readonly description: string;
  /** The payload schema as providers read it (optional properties optional). */
  readonly schema: JsonObject;
  /** The strict form, when the payload fits the strict subset. */
  readonly strictSchema?: JsonObject;
  /** Where and why the payload does not fit the strict subset (sent non-strict). */
  readonly nonStrict?: { readonly at: string; readonly reason: string };
}

let plainCache: Partial<Record<MessageType, JsonObject>> | undefined;

/** The provider payload schema of a type, computed once per process and never mutated after. */
function plainSchema(type: MessageType): JsonObject {
  plainCache ??= {};
  let schema = plainCache[type];
  if (schema === undefined) {
    schema = providerPayloadSchema(type);
    plainCache[type] = schema;
  }
  return schema;
}

/** One message tool per message type, in the order given. Fresh objects: callers may keep them. */
export function messageTools(messageTypes: readonly MessageType[]): MessageTool[] {
  return messageTypes.map((type) => {
    const schema = providerPayloadSchema(type);
    const strict = strictForm(schema) as JsonObject;
    const obstacle = strictObstacle(strict);
    return obstacle === undefined
      ? { name: type, description: MESSAGE_DESCRIPTIONS[type], schema, strictSchema: strict }
      : { name: type, description: MESSAGE_DESCRIPTIONS[type], schema, nonStrict: obstacle };
  });
}

/**
 * The JCS text of a payload the model gave as JSON text (tool arguments) or as a value (JSON mode),
 * with the nulls of the strict form dropped. Text that is not JSON is kept verbatim, so validation
 * names the fault.
 */
export function payloadJson(type: string, payload: { text: string } | { value: unknown }): string {
  let value: unknown;
  if ("text" in payload) {
    try {
      value = JSON.parse(payload.text);
    } catch {
      return payload.text;
    }
  } else {
    value = payload.value;
  }
  const cleaned = isMessageType(type) ? dropIntroducedNulls(value, plainSchema(type)) : value;
  try {
    return canonicalJson(cleaned);
  } catch {
    // A value JCS cannot carry (a number beyond IEEE range parsed to Infinity): keep its JSON text.
    return JSON.stringify(cleaned) ?? "null";
  }
}

/** One native tool call as a provider returned it: its (encoded) name and argument JSON text. */
export interface NativeCall {
  readonly name: string;
  readonly argumentsJson: string;
}

/**
 * The candidate wire turn a tool-calling answer stands for. A lone message-tool call becomes a
 * `message` turn; other calls become `tool_calls` with their names decoded. A mix, or several
 * message calls, is kept as it is so that validation names the fault (never resolved here).
 * An answer without calls is its text when that text holds a turn object; otherwise it is a turn
 * without calls, which validation refuses for calling no tool.
 */
export function candidateFromCalls(text: string, calls: readonly NativeCall[]): unknown {
  if (calls.length === 0) return textAnswer(text);
  const toolCalls: JsonObject[] = [];
  let message: Json = null;
  for (const call of calls) {
    if (isMessageType(call.name) && message === null) {
      message = {
        type: call.name,
        payload_json: payloadJson(call.name, { text: call.argumentsJson }),
        paper_ref: null,
      };
      continue;
    }
    const name = isMessageType(call.name) ? call.name : decodeToolName(call.name);
    toolCalls.push({ name: name ?? call.name, arguments_json: call.argumentsJson });
  }
  return {
    kind: message !== null && toolCalls.length === 0 ? "message" : "tool_calls",
    summary: text,
    tool_calls: toolCalls,
    message,
  };
}

function textAnswer(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    if (isJsonObject(value) && "kind" in value) return text;
  } catch {
    // Prose: the usual answer of a server that does not enforce tool calls.
  }
  return { kind: "tool_calls", summary: text, tool_calls: [], message: null };
}

/**
 * The response schema of JSON mode: the seed turn's envelope, with `message` one branch per
 * message type (`type` fixed by `const`, `payload` that type's payload schema as an object) or
 * null. Strict when every branch fits the strict subset (payloads in their strict form); otherwise
 * the plain payload schemas, sent non-strict.
 */
export function jsonModeTurnSchema(messageTypes: readonly MessageType[]): {
  readonly schema: JsonObject;
  readonly strict: boolean;
} {
  const strict = turnSchema(messageTypes, true);
  if (strictObstacle(strict) === undefined) return { schema: strict, strict: true };
  return { schema: turnSchema(messageTypes, false), strict: false };
}

function turnSchema(messageTypes: readonly MessageType[], strict: boolean): JsonObject {
  const seed = providerTurnSchema();
  const props = seed.properties as JsonObject;
  const branches: Json[] = messageTypes.map((type) => {
    const payload = providerPayloadSchema(type);
    return {
      type: "object",
      description: MESSAGE_DESCRIPTIONS[type],
      additionalProperties: false,
      required: ["type", "payload", "paper_ref"],
      properties: {
        type: { type: "string", const: type },
        payload: strict ? strictForm(payload) : payload,
        paper_ref: { type: ["string", "null"] },
      },
    };
  });
  return {
    ...seed,
    properties: {
      kind: props.kind as Json,
      summary: props.summary as Json,
      tool_calls: props.tool_calls as Json,
      message: { anyOf: [...branches, { type: "null" }] },
    },
  };
}

/**
 * The seed turn a JSON-mode answer stands for: a `message` carrying `payload` as a value gets it
 * as `payload_json` text. Anything else (text that is not JSON, a message already in the seed
 * spelling, stray properties) is left as written, for validation to judge.
 */
export function turnFromJsonMode(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  if (!isJsonObject(value)) return value;
  const message = value.message;
  if (!isJsonObject(message) || !("payload" in message) || "payload_json" in message) return value;
  const { payload, ...rest } = message;
  const type = typeof message.type === "string" ? message.type : "";
  return { ...value, message: { ...rest, payload_json: payloadJson(type, { value: payload }) } };
}
