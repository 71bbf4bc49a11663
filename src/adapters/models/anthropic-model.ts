// The Anthropic adapter (official `@anthropic-ai/sdk`, Messages API): the registry's tools plus one
// message tool per message type (its `input_schema` the payload schema), every turn forced to call
// a tool (`tool_choice: {type: "any"}`).
import Anthropic from "@anthropic-ai/sdk";
import {
  type ConversationEntry,
  MODEL_SPECIFICATION_VERSION,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ProviderTool,
  type ResponseMeta,
  type StopKind,
  textOrNull,
  tokenCount,
  type Usage,
} from "../../core/ports/model-provider.js";
import {
  candidateFromCalls,
  messageTools,
  type NativeCall,
} from "../../core/turn/message-tools.js";
import { modelTarget } from "../../core/turn/model-target.js";
import { encodeToolName, normaliseSchema } from "../../core/turn/provider-schema.js";
import {
  type ConvertedConversation as Converted,
  conversationConverter,
} from "./converted-conversation.js";
import { NOT_EXECUTED, toolModeInstructions } from "./instructions.js";
import { providerError } from "./provider-errors.js";

export interface AnthropicModelOptions {
  readonly model: string;
  /** From the environment only; sent as the `x-api-key` header and nowhere else. */
  readonly apiKey: string;
  readonly baseURL?: string;
  /** Retries of 408/409/429/5xx and connection errors, honouring retry-after (default 2). */
  readonly maxRetries?: number;
  readonly timeoutMs?: number;
  readonly id?: string;
  /**
   * A definition's settings as the Messages API spells them (`temperature`, `top_k`, `thinking`,
   * …; see provider-settings.ts), sent with every request; they never replace the fields this
   * adapter owns (model, max_tokens, system, messages, tools, tool choice).
   */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** Extra request headers (`anthropic-beta`). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Ask with `tool_choice: auto` instead of forcing a tool: the API refuses a forced choice while
   * thinking. A turn written as prose is then sent back to repair like any invalid turn.
   */
  readonly toolChoiceAuto?: boolean;
}

/** The wire shapes this adapter reads and writes (kept loose: only the fields it uses). */
interface Block {
  readonly type: string;
  readonly id?: string;
  readonly name?: string;
  readonly input?: unknown;
  readonly text?: string;
}
interface WireMessage {
  readonly id?: unknown;
  readonly model?: unknown;
  readonly content?: readonly Block[];
  readonly stop_reason?: string | null;
  readonly usage?: {
    readonly input_tokens?: number | null;
    readonly output_tokens?: number | null;
    readonly cache_creation_input_tokens?: number | null;
    readonly cache_read_input_tokens?: number | null;
  };
}
type ContentParam = string | Record<string, unknown>[];
interface MessageParam {
  role: "user" | "assistant";
  content: ContentParam;
}

type ConvertedConversation = Converted<MessageParam>;

function asBlocks(content: ContentParam): Record<string, unknown>[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/** Appends a message, merging into the previous one when both are the user's (roles alternate). */
function pushMessage(messages: MessageParam[], message: MessageParam): void {
  const last = messages.at(-1);
  if (last !== undefined && last.role === "user" && message.role === "user") {
    messages[messages.length - 1] = {
      role: "user",
      content: [...asBlocks(last.content), ...asBlocks(message.content)],
    };
    return;
  }
  messages.push(message);
}

export function createAnthropicModel(options: AnthropicModelOptions): ModelProvider {
  const id = options.id ?? `anthropic:${options.model}`;
  const client = new Anthropic({
    apiKey: options.apiKey,
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    maxRetries: options.maxRetries ?? 2,
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    ...(options.headers === undefined ? {} : { defaultHeaders: { ...options.headers } }),
    logLevel: "off",
  });
  const secrets = [options.apiKey];
  const toolCache = new WeakMap<readonly ProviderTool[], Map<string, unknown[]>>();
  const toolChoice = options.toolChoiceAuto === true ? { type: "auto" } : { type: "any" };

  function convert(entry: ConversationEntry, state: ConvertedConversation): void {
    switch (entry.kind) {
      case "user":
        pushMessage(state.messages, { role: "user", content: entry.text });
        return;
      case "model": {
        const raw = entry.response.raw as WireMessage;
        const content = (raw.content ?? []).map((b) => ({ ...b }) as Record<string, unknown>);
        // An empty assistant turn is refused by the API; a placeholder keeps the roles alternating.
        pushMessage(state.messages, {
          role: "assistant",
          content: content.length > 0 ? content : [{ type: "text", text: "(no answer)" }],
        });
        state.lastCallIds = (raw.content ?? []).flatMap((b) =>
          b.type === "tool_use" && typeof b.id === "string" ? [b.id] : [],
        );
        return;
      }
      case "tool-results":
        pushMessage(state.messages, {
          role: "user",
          content: entry.results.map((r, i) => ({
            type: "tool_result",
            tool_use_id: state.lastCallIds[i] ?? `missing-${i}`,
            content: r.content,
            is_error: r.isError,
          })),
        });
        return;
      case "repair":
        // Every tool_use of the rejected answer needs its tool_result; the first carries the errors.
        pushMessage(state.messages, {
          role: "user",
          content:
            state.lastCallIds.length === 0
              ? entry.text
              : state.lastCallIds.map((callId, i) => ({
                  type: "tool_result",
                  tool_use_id: callId,
                  content: i === 0 ? entry.text : NOT_EXECUTED,
                  is_error: true,
                })),
        });
        return;
    }
  }

  const messagesFor = conversationConverter<MessageParam>(convert);

  function toolsFor(request: ModelRequest): unknown[] {
    let byTypes = toolCache.get(request.tools);
    if (byTypes === undefined) {
      byTypes = new Map();
      toolCache.set(request.tools, byTypes);
    }
    const key = request.messageTypes.join(",");
    let tools = byTypes.get(key);
    if (tools === undefined) {
      tools = [
        ...request.tools.map((t) => ({
          name: encodeToolName(t.name),
          description: t.description,
          input_schema: normaliseSchema(t.inputSchema),
        })),
        ...messageTools(request.messageTypes).map((m) => ({
          name: m.name,
          description: m.description,
          input_schema: m.schema,
        })),
      ];
      byTypes.set(key, tools);
    }
    return tools;
  }

  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    id,
    target: modelTarget(id, options.baseURL),
    async complete(request, opts): Promise<ModelResponse> {
      const body = {
        ...options.settings,
        model: options.model,
        max_tokens: request.maxOutputTokens,
        system: `${request.system}\n\n${toolModeInstructions(request.role, request.messageTypes)}`,
        messages: messagesFor(request),
        tools: toolsFor(request),
        tool_choice: toolChoice,
      };
      const started = performance.now();
      let message: WireMessage;
      try {
        message = await client.messages.create(
          body as never,
          opts?.signal === undefined ? undefined : { signal: opts.signal },
        );
      } catch (e) {
        throw providerError(id, e, secrets);
      }
      return parseMessage(message, performance.now() - started);
    },
  };
}

function parseMessage(message: WireMessage, latencyMs: number): ModelResponse {
  const raw = JSON.parse(JSON.stringify(message)) as unknown;
  const blocks = message.content ?? [];
  const text = blocks
    .flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : []))
    .join("\n");
  const calls: NativeCall[] = blocks.flatMap((b) =>
    b.type === "tool_use" && typeof b.name === "string"
      ? [{ name: b.name, argumentsJson: JSON.stringify(b.input ?? {}) }]
      : [],
  );
  const u = message.usage;
  // Anthropic's input_tokens excludes the cached part: input is all three, cached the cache reads.
  // Thinking tokens are billed as output and not reported apart.
  const cachedInputTokens = tokenCount(u?.cache_read_input_tokens);
  const usage: Usage = {
    inputTokens:
      tokenCount(u?.input_tokens) + tokenCount(u?.cache_creation_input_tokens) + cachedInputTokens,
    outputTokens: tokenCount(u?.output_tokens),
    cachedInputTokens,
    reasoningTokens: 0,
  };
  const meta: ResponseMeta = {
    id: textOrNull(message.id),
    model: textOrNull(message.model),
    finishReason: textOrNull(message.stop_reason),
  };
  let stop: StopKind = "complete";
  if (message.stop_reason === "refusal") stop = "refusal";
  else if (
    message.stop_reason === "max_tokens" ||
    message.stop_reason === "model_context_window_exceeded"
  ) {
    stop = "truncated";
  }
  const candidate = candidateFromCalls(text, calls);
  return stop === "refusal"
    ? { raw, candidate, stop, usage, meta, latencyMs, refusal: text }
    : { raw, candidate, stop, usage, meta, latencyMs };
}
