// The OpenAI adapter (official `openai` SDK, Chat Completions): OpenAI itself or any compatible
// server. Two modes: native tool calling (strict schemas where they fit, `tool_choice: "required"`,
// one message tool per message type whose parameters are its payload schema) or a `json_schema`
// response format carrying one model turn whose message payload is constrained per type.
import OpenAI from "openai";
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type {
  ConversationEntry,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ProviderTool,
  ResponseMeta,
  StopKind,
  Usage,
} from "../../core/ports/model-provider.js";
import {
  MODEL_SPECIFICATION_VERSION,
  textOrNull,
  tokenCount,
} from "../../core/ports/model-provider.js";
import {
  candidateFromCalls,
  jsonModeTurnSchema,
  messageTools,
  type NativeCall,
  turnFromJsonMode,
} from "../../core/turn/message-tools.js";
import { modelTarget } from "../../core/turn/model-target.js";
import {
  encodeToolName,
  isStrictCompatible,
  normaliseSchema,
} from "../../core/turn/provider-schema.js";
import {
  type ConvertedConversation as Converted,
  conversationConverter,
} from "./converted-conversation.js";
import {
  jsonModeInstructions,
  NOT_EXECUTED,
  toolModeInstructions,
  toolResultsText,
} from "./instructions.js";
import { providerError } from "./provider-errors.js";

export type OpenAIMode = "tools" | "json_schema";

export interface OpenAIModelOptions {
  readonly model: string;
  /** From the environment only; sent as the bearer credential and nowhere else. */
  readonly apiKey: string;
  /** An OpenAI-compatible server; OpenAI's own API when absent. */
  readonly baseURL?: string;
  readonly mode?: OpenAIMode;
  /**
   * The field that caps output tokens: OpenAI wants `max_completion_tokens`; many compatible
   * servers only know `max_tokens`. Default: the former for OpenAI, the latter for a base URL.
   */
  readonly maxTokensField?: "max_completion_tokens" | "max_tokens";
  /** Retries of 408/409/429/5xx and connection errors, honouring retry-after (default 2). */
  readonly maxRetries?: number;
  readonly timeoutMs?: number;
  /** Printable id; defaults to `openai:MODEL` or `openai-compatible:BASE_URL#MODEL`. */
  readonly id?: string;
  /**
   * A definition's settings as Chat Completions spells them (`temperature`, `top_p`, `seed`, …;
   * see provider-settings.ts), sent with every request; they never replace the fields this
   * adapter owns (model, messages, tools, tool choice, response format, output cap).
   */
  readonly settings?: Readonly<Record<string, unknown>>;
}

type ConvertedConversation = Converted<ChatCompletionMessageParam>;

function assistantMessage(raw: unknown): { message: ChatCompletionMessageParam; ids: string[] } {
  const completion = raw as ChatCompletion;
  const m = completion.choices?.[0]?.message;
  const calls = (m?.tool_calls ?? []).filter((c) => c.type === "function");
  if (calls.length === 0) {
    return { message: { role: "assistant", content: m?.content ?? "" }, ids: [] };
  }
  return {
    message: {
      role: "assistant",
      content: m?.content ?? null,
      tool_calls: calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.function.name, arguments: c.function.arguments },
      })),
    },
    ids: calls.map((c) => c.id),
  };
}

/** What a provider's requests share: its options, its mode, and what it converted or built once. */
interface Requests {
  readonly options: OpenAIModelOptions;
  readonly mode: OpenAIMode;
  /** The field that caps output tokens (see OpenAIModelOptions.maxTokensField). */
  readonly maxField: "max_completion_tokens" | "max_tokens";
  /** The conversation converted so far, per conversation. */
  readonly converted: (request: ModelRequest) => readonly ChatCompletionMessageParam[];
  /** The tools per tool list and message types, built once. */
  readonly toolCache: WeakMap<readonly ProviderTool[], Map<string, ChatCompletionTool[]>>;
  /** The JSON-mode turn schema per message types, built once. */
  readonly jsonSchemas: Map<string, ReturnType<typeof jsonModeTurnSchema>>;
}

export function createOpenAIModel(options: OpenAIModelOptions): ModelProvider {
  const mode = options.mode ?? "tools";
  const id =
    options.id ??
    (options.baseURL === undefined
      ? `openai:${options.model}`
      : `openai-compatible:${options.baseURL}#${options.model}`);
  const client = new OpenAI({
    apiKey: options.apiKey,
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    maxRetries: options.maxRetries ?? 2,
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    logLevel: "off",
  });
  const secrets = [options.apiKey];
  const requests: Requests = {
    options,
    mode,
    maxField:
      options.maxTokensField ??
      (options.baseURL === undefined ? "max_completion_tokens" : "max_tokens"),
    converted: conversationConverter<ChatCompletionMessageParam>((entry, state) =>
      convertEntry(mode, entry, state),
    ),
    toolCache: new WeakMap(),
    jsonSchemas: new Map(),
  };
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    id,
    target: modelTarget(id, options.baseURL),
    async complete(request, opts): Promise<ModelResponse> {
      const started = performance.now();
      let completion: ChatCompletion;
      try {
        completion = await client.chat.completions.create(
          requestBody(requests, request),
          opts?.signal === undefined ? undefined : { signal: opts.signal },
        );
      } catch (e) {
        throw providerError(id, e, secrets);
      }
      const latencyMs = performance.now() - started;
      return parseCompletion(completion, mode, latencyMs);
    },
  };
}

/** Adds one conversation entry to the messages converted so far, as Chat Completions spells it. */
function convertEntry(
  mode: OpenAIMode,
  entry: ConversationEntry,
  state: ConvertedConversation,
): void {
  switch (entry.kind) {
    case "user":
      state.messages.push({ role: "user", content: entry.text });
      return;
    case "model": {
      const { message, ids } = assistantMessage(entry.response.raw);
      if (mode === "json_schema") {
        const raw = entry.response.raw as ChatCompletion;
        const content = raw.choices?.[0]?.message?.content ?? "";
        state.messages.push({ role: "assistant", content });
        state.lastCallIds = [];
      } else {
        state.messages.push(message);
        state.lastCallIds = ids;
      }
      return;
    }
    case "tool-results":
      if (state.lastCallIds.length === 0) {
        state.messages.push({ role: "user", content: toolResultsText(entry.results) });
        return;
      }
      entry.results.forEach((r, i) => {
        state.messages.push({
          role: "tool",
          tool_call_id: state.lastCallIds[i] ?? `missing-${i}`,
          content: r.isError ? `error: ${r.content}` : r.content,
        });
      });
      return;
    case "repair":
      // Every call of the rejected answer needs its tool message; the first carries the errors.
      if (state.lastCallIds.length === 0) {
        state.messages.push({ role: "user", content: entry.text });
        return;
      }
      state.lastCallIds.forEach((callId, i) => {
        state.messages.push({
          role: "tool",
          tool_call_id: callId,
          content: i === 0 ? entry.text : NOT_EXECUTED,
        });
      });
      return;
  }
}

/** The messages of a request: the system message, then the conversation converted so far. */
function messagesFor(r: Requests, request: ModelRequest): ChatCompletionMessageParam[] {
  const system =
    r.mode === "tools"
      ? `${request.system}\n\n${toolModeInstructions(request.role, request.messageTypes)}`
      : `${request.system}\n\n${jsonModeInstructions(request.role, request.messageTypes, request.tools)}`;
  return [{ role: "system", content: system }, ...r.converted(request)];
}

/** The request's tools and one message tool per message type, built once per tools and types. */
function toolsFor(r: Requests, request: ModelRequest): ChatCompletionTool[] {
  let byTypes = r.toolCache.get(request.tools);
  if (byTypes === undefined) {
    byTypes = new Map();
    r.toolCache.set(request.tools, byTypes);
  }
  const key = request.messageTypes.join(",");
  let tools = byTypes.get(key);
  if (tools === undefined) {
    tools = request.tools.map((t) => {
      const parameters = normaliseSchema(t.inputSchema) as Record<string, unknown>;
      return {
        type: "function",
        function: {
          name: encodeToolName(t.name),
          description: t.description,
          parameters,
          strict: isStrictCompatible(parameters),
        },
      };
    });
    for (const m of messageTools(request.messageTypes)) {
      // Strict where the payload fits the strict subset; otherwise the plain payload schema,
      // non-strict (a Plan: a step's `args` is an object open to the profile's own schema).
      tools.push({
        type: "function",
        function: {
          name: m.name,
          description: m.description,
          parameters: m.strictSchema ?? m.schema,
          strict: m.strictSchema !== undefined,
        },
      });
    }
    byTypes.set(key, tools);
  }
  return tools;
}

/** The JSON-mode turn schema of the message types, built once per types. */
function jsonSchemaFor(r: Requests, messageTypes: ModelRequest["messageTypes"]) {
  const key = messageTypes.join(",");
  let found = r.jsonSchemas.get(key);
  if (found === undefined) {
    found = jsonModeTurnSchema(messageTypes);
    r.jsonSchemas.set(key, found);
  }
  return found;
}

/** The body of a Chat Completions request in the provider's mode. */
function requestBody(r: Requests, request: ModelRequest): ChatCompletionCreateParamsNonStreaming {
  const base = {
    ...r.options.settings,
    model: r.options.model,
    messages: messagesFor(r, request),
    [r.maxField]: request.maxOutputTokens,
  };
  if (r.mode === "tools") {
    return { ...base, tools: toolsFor(r, request), tool_choice: "required" };
  }
  const { schema, strict } = jsonSchemaFor(r, request.messageTypes);
  return {
    ...base,
    response_format: {
      type: "json_schema",
      json_schema: { name: "model_turn", strict, schema },
    },
  };
}

function parseCompletion(
  completion: ChatCompletion,
  mode: OpenAIMode,
  latencyMs: number,
): ModelResponse {
  const raw = JSON.parse(JSON.stringify(completion)) as unknown;
  const choice = completion.choices?.[0];
  const message = choice?.message;
  const u = completion.usage;
  const usage: Usage = {
    inputTokens: tokenCount(u?.prompt_tokens),
    outputTokens: tokenCount(u?.completion_tokens),
    cachedInputTokens: tokenCount(u?.prompt_tokens_details?.cached_tokens),
    reasoningTokens: tokenCount(u?.completion_tokens_details?.reasoning_tokens),
  };
  const meta: ResponseMeta = {
    id: textOrNull(completion.id),
    model: textOrNull(completion.model),
    finishReason: textOrNull(choice?.finish_reason),
  };
  const refusal = message?.refusal ?? undefined;
  let stop: StopKind = "complete";
  if (
    (refusal !== undefined && refusal !== null && refusal !== "") ||
    choice?.finish_reason === "content_filter"
  ) {
    stop = "refusal";
  } else if (choice?.finish_reason === "length") {
    stop = "truncated";
  }
  const text = message?.content ?? "";
  let candidate: unknown;
  if (mode === "tools") {
    const calls: NativeCall[] = (message?.tool_calls ?? []).flatMap((c) =>
      c.type === "function" ? [{ name: c.function.name, argumentsJson: c.function.arguments }] : [],
    );
    candidate = candidateFromCalls(text, calls);
  } else {
    candidate = turnFromJsonMode(text);
  }
  return stop === "refusal"
    ? {
        raw,
        candidate,
        stop,
        usage,
        meta,
        latencyMs,
        refusal: refusal ?? choice?.finish_reason ?? "",
      }
    : { raw, candidate, stop, usage, meta, latencyMs };
}
