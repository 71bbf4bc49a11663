// The ModelProvider port: one model call per request, the raw provider output kept beside the
// candidate turn. Adapters (scripted, OpenAI, Anthropic) implement it; the core never does I/O.
import type { Role } from "../loop/types.js";
import type { Problem } from "../result.js";
import type { MessageType } from "../turn/types.js";

/** The version of the ModelProvider contract this library speaks (`specificationVersion`). */
export const MODEL_SPECIFICATION_VERSION = "v1";

/** A tool as a provider sees it: the registry's name (unencoded), description and input schema. */
export interface ProviderTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: object;
}

/** What one tool call returned, fed back to the model in the order of the calls of its turn. */
export interface ToolResultEntry {
  readonly name: string;
  /** Text the model reads back (a structured result is given as its JSON text). */
  readonly content: string;
  readonly isError: boolean;
}

/**
 * One step of a passage's conversation. The conversation is append-only: a request names how many
 * entries it covers, so a provider converts only the entries it has not seen yet.
 */
export type ConversationEntry =
  /** Text from the host: the passage's evidence, an operator's answer. */
  | { readonly kind: "user"; readonly text: string }
  /** The model's own earlier output, replayed to it in its provider's native form. */
  | { readonly kind: "model"; readonly response: ModelResponse }
  /** Results of the tool calls of the preceding `model` entry, in call order. */
  | { readonly kind: "tool-results"; readonly results: readonly ToolResultEntry[] }
  /** The preceding `model` entry was invalid: its validation errors, and the text sent back. */
  | { readonly kind: "repair"; readonly errors: readonly Problem[]; readonly text: string };

export interface ModelRequest {
  /** The passage's role: which protocol rules the adapter states beside the payload schemas. */
  readonly role: Role;
  readonly system: string;
  /** Append-only; only entries `[0, length)` belong to this request. */
  readonly conversation: readonly ConversationEntry[];
  readonly length: number;
  readonly tools: readonly ProviderTool[];
  /** The message types the passage's role may emit (a subset of the seed's enum). */
  readonly messageTypes: readonly MessageType[];
  readonly maxOutputTokens: number;
}

export type StopKind = "complete" | "refusal" | "truncated";

/**
 * Token counts as the provider reported them (0 where it reports none). `cachedInputTokens` is the
 * part of `inputTokens` served from the provider's prompt cache, `reasoningTokens` the part of
 * `outputTokens` spent on hidden reasoning: both are subsets, never added on top.
 */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens: number;
  readonly reasoningTokens: number;
}

/** A usage of zero tokens: what a provider that reports nothing is charged. */
export const NO_USAGE: Usage = {
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  reasoningTokens: 0,
};

/**
 * A token count as a provider reported it: a non-negative integer, else 0. Servers that report no
 * usage, or something that is not a count, are charged nothing rather than trusted.
 */
export function tokenCount(reported: unknown): number {
  return typeof reported === "number" && Number.isSafeInteger(reported) && reported >= 0
    ? reported
    : 0;
}

const MAX_LABEL_CHARS = 256;

/**
 * A provider-given label (an id, a model name, a finish reason) when it is text, else null; cut at
 * 256 characters, since a server can send anything.
 */
export function textOrNull(reported: unknown): string | null {
  if (typeof reported !== "string") return null;
  return reported.length <= MAX_LABEL_CHARS ? reported : reported.slice(0, MAX_LABEL_CHARS);
}

/** Two usages summed field by field. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}

/** Which call this was, as the provider named it (null where it names nothing); for tracing. */
export interface ResponseMeta {
  /** The provider's id of the response (`chatcmpl-…`, `msg_…`). */
  readonly id: string | null;
  /** The model that answered, which may differ from the one asked for (a dated snapshot). */
  readonly model: string | null;
  /** The provider's own finish reason (`stop`, `tool_calls`, `end_turn`, `max_tokens`, …). */
  readonly finishReason: string | null;
}

export interface ModelResponse {
  /** The provider's output exactly as received (JSON-serialisable), kept for the transcript. */
  readonly raw: unknown;
  /**
   * The candidate turn, unvalidated: a wire `ModelTurn`-shaped value assembled from native tool
   * calls, or the text the model wrote (to be parsed as a turn).
   */
  readonly candidate: unknown;
  readonly stop: StopKind;
  /** The provider's stated reason for a refusal, when it gives one. */
  readonly refusal?: string;
  readonly usage: Usage;
  readonly meta: ResponseMeta;
  readonly latencyMs: number;
}

export interface ModelProvider {
  /** The version of this contract the provider implements; another is refused before a loop opens. */
  readonly specificationVersion: typeof MODEL_SPECIFICATION_VERSION;
  /** A printable name of the provider and model (`openai:gpt-4.1`); never carries a key. */
  readonly id: string;
  /**
   * Where the calls go (provider, model asked for, server), for tracing; when absent it is read
   * from `id`. Stated by adapters whose server the id does not name (a base URL from the env).
   */
  readonly target?: ModelTarget;
  /**
   * One model call. Transport failures that survive the SDK's own retries throw a WarrantError
   * with a `model/…` code and a message that carries no credential.
   */
  complete(request: ModelRequest, opts?: { readonly signal?: AbortSignal }): Promise<ModelResponse>;
}

/** Where a model call goes, as tracing names it (model-target.ts reads it from a provider). */
export interface ModelTarget {
  /** `openai`, `anthropic`, a compatible server's host, `scripted`, `function`, or the id's scheme. */
  readonly provider: string;
  /** The model asked for (a scripted model's script name). */
  readonly model: string;
  readonly server?: { readonly address: string; readonly port: number };
}
