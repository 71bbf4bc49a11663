// The provider adapters as the model-provider tests drive them: each URI (openai, openai-compatible
// in tool and JSON mode, anthropic) with how it spells an answer on the wire, where its request
// body carries the payload schemas, and whether it reports reasoning tokens apart; the scripted
// model's script lines; and a provider made from a URI against the local wire server.
import { createModelFromUri } from "../../src/adapters/models/model-uri.js";
import type { Role } from "../../src/core/loop/types.js";
import type { ModelProvider } from "../../src/core/ports/model-provider.js";
import { messageTools } from "../../src/core/turn/message-tools.js";
import { providerPayloadSchema, strictForm } from "../../src/core/turn/provider-payload-schema.js";
import { encodeToolName } from "../../src/core/turn/provider-schema.js";
import { type MessageType, ROLE_MESSAGE_TYPES } from "../../src/core/turn/types.js";
import type { WireReply } from "./wire-server.js";

export const OPENAI_KEY = "sk-conformance-openai-5d1c7a9e";
export const ANTHROPIC_KEY = "sk-ant-conformance-2b8f4e6a";

export interface Usage {
  readonly input: number;
  readonly output: number;
  readonly cached: number;
  readonly reasoning: number;
}

/** One answer of the conversation, in no provider's spelling. */
export type Answer =
  | { readonly call: string; readonly args: object; readonly usage: Usage }
  | { readonly message: MessageType; readonly payload: object; readonly usage: Usage };

export function u(input: number, output: number, cached: number, reasoning: number): Usage {
  return { input, output, cached, reasoning };
}

/** The wire spelling of one answer, and the payload schemas a request body carries. */
export interface Adapter {
  readonly name: string;
  /** `(server URL) → model URI`. */
  uri(url: string): string;
  reply(answer: Answer, n: number): WireReply;
  /** Type → payload schema, as the request body carries them. */
  payloadSchemas(body: Record<string, unknown>): Record<string, unknown>;
  /** The schema each message type is expected to be sent with. */
  expectedSchema(type: MessageType, role: Role): unknown;
  system(body: Record<string, unknown>): string;
  /** Whether the provider reports reasoning tokens apart. */
  readonly reasoningReported: boolean;
}

export function openaiUsage(x: Usage) {
  return {
    prompt_tokens: x.input,
    completion_tokens: x.output,
    total_tokens: x.input + x.output,
    prompt_tokens_details: { cached_tokens: x.cached },
    completion_tokens_details: { reasoning_tokens: x.reasoning },
  };
}

export function completion(n: number, message: object, finish: string, usage: Usage): WireReply {
  return {
    status: 200,
    body: {
      id: `chatcmpl-conf-${n}`,
      object: "chat.completion",
      created: 1_764_000_000 + n,
      model: "served-model-2026",
      choices: [
        {
          index: 0,
          message: { role: "assistant", refusal: null, ...message },
          finish_reason: finish,
        },
      ],
      usage: openaiUsage(usage),
    },
  };
}

export function openaiTools(name: string, uri: (url: string) => string): Adapter {
  return {
    name,
    uri,
    reasoningReported: true,
    reply(a, n) {
      const [fn, args] = "call" in a ? [encodeToolName(a.call), a.args] : [a.message, a.payload];
      const call = {
        id: `call_${n}`,
        type: "function",
        function: { name: fn, arguments: JSON.stringify(args) },
      };
      return completion(n, { content: null, tool_calls: [call] }, "tool_calls", a.usage);
    },
    payloadSchemas(body) {
      const tools = body.tools as { function: { name: string; parameters: unknown } }[];
      return Object.fromEntries(tools.map((t) => [t.function.name, t.function.parameters]));
    },
    expectedSchema(type, role) {
      const tool = messageTools(ROLE_MESSAGE_TYPES[role]).find((t) => t.name === type);
      return tool?.strictSchema ?? tool?.schema;
    },
    system: (body) => (body.messages as { content: string }[])[0]?.content ?? "",
  };
}

/** An answer as one whole turn (JSON mode, scripted), the payload spelled by `payload`. */
export function wholeTurn(a: Answer, payload: (p: object) => object): object {
  return "call" in a
    ? {
        kind: "tool_calls",
        summary: "look",
        tool_calls: [{ name: a.call, arguments_json: JSON.stringify(a.args) }],
        message: null,
      }
    : {
        kind: "message",
        summary: "done",
        tool_calls: [],
        message: { type: a.message, ...payload(a.payload), paper_ref: null },
      };
}

export const ADAPTERS: readonly Adapter[] = [
  openaiTools("openai", () => "openai:gpt-4.1"),
  openaiTools("openai-compatible, tool mode", (url) => `openai-compatible:${url}/v1#served-model`),
  {
    name: "openai-compatible, JSON mode",
    uri: (url) => `openai-compatible:${url}/v1#served-model?mode=json_schema`,
    reasoningReported: true,
    reply(a, n) {
      const turn = wholeTurn(a, (payload) => ({ payload }));
      return completion(n, { content: JSON.stringify(turn) }, "stop", a.usage);
    },
    payloadSchemas(body) {
      const format = body.response_format as { json_schema: { schema: Record<string, unknown> } };
      const message = (format.json_schema.schema.properties as Record<string, { anyOf: object[] }>)
        .message;
      return Object.fromEntries(
        (message?.anyOf ?? []).flatMap((b) => {
          const props = (b as { properties?: { type: { const: string }; payload: unknown } })
            .properties;
          return props === undefined ? [] : [[props.type.const, props.payload]];
        }),
      );
    },
    expectedSchema(type, role) {
      const strict = ROLE_MESSAGE_TYPES[role].every((t) => t !== "Plan");
      return strict ? strictForm(providerPayloadSchema(type)) : providerPayloadSchema(type);
    },
    system: (body) => (body.messages as { content: string }[])[0]?.content ?? "",
  },
  {
    name: "anthropic",
    uri: () => "anthropic:claude-sonnet-4-5",
    reasoningReported: false,
    reply(a, n) {
      const [name, input] = "call" in a ? [encodeToolName(a.call), a.args] : [a.message, a.payload];
      return {
        status: 200,
        body: {
          id: `msg_conf_${n}`,
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5-20250929",
          content: [{ type: "tool_use", id: `toolu_${n}`, name, input }],
          stop_reason: "tool_use",
          stop_sequence: null,
          usage: {
            input_tokens: a.usage.input - a.usage.cached,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: a.usage.cached,
            output_tokens: a.usage.output,
          },
        },
      };
    },
    payloadSchemas(body) {
      const tools = body.tools as { name: string; input_schema: unknown }[];
      return Object.fromEntries(tools.map((t) => [t.name, t.input_schema]));
    },
    expectedSchema: (type) => providerPayloadSchema(type),
    system: (body) => String(body.system),
  },
];

/** The scripted answers: seed turns, with the same usage. */
export function scriptLine(a: Answer): object {
  return {
    turn: wholeTurn(a, (payload) => ({ payload_json: JSON.stringify(payload) })),
    usage: a.usage,
  };
}

export function provider(uri: string, url: string): ModelProvider {
  const made = createModelFromUri(uri, {
    env: {
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: `${url}/v1`,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: url,
    },
    maxRetries: 0,
  });
  if (!made.ok) throw new Error(JSON.stringify(made.errors));
  return made.value;
}
