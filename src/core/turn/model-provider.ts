// The ModelProvider port: one model call per request, the raw provider output kept beside the
// candidate turn. Adapters (scripted, OpenAI, Anthropic) implement it; the core never does I/O.
import type { Problem } from "../result.js";

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
  readonly system: string;
  /** Append-only; only entries `[0, length)` belong to this request. */
  readonly conversation: readonly ConversationEntry[];
  readonly length: number;
  readonly tools: readonly ProviderTool[];
  /** The message types the passage's role may emit (a subset of the seed's enum). */
  readonly messageTypes: readonly string[];
  readonly maxOutputTokens: number;
}

export type StopKind = "complete" | "refusal" | "truncated";

export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
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
  readonly latencyMs: number;
}

export interface ModelProvider {
  /** A printable name of the provider and model (`openai:gpt-4.1`); never carries a key. */
  readonly id: string;
  /**
   * One model call. Transport failures that survive the SDK's own retries throw a WarrantError
   * with a `model/…` code and a message that carries no credential.
   */
  complete(request: ModelRequest, opts?: { readonly signal?: AbortSignal }): Promise<ModelResponse>;
}
