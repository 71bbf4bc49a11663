// The provider models of the library: OpenAI, Anthropic and any OpenAI-compatible server (vLLM,
// llama.cpp, Ollama, LM Studio). Keys come from the options or the environment, are sent only to the
// provider, and never reach an id, the ledger, a log or an error.
import { WarrantError } from "../core/result.js";
import { lazyModel, type ModelProvider } from "./model.js";

export interface ProviderModelOptions {
  readonly model: string;
  /** Default: `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` from the environment. */
  readonly apiKey?: string;
  /** Default: the provider's own API (`OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` when set). */
  readonly baseURL?: string;
  /** Retries of 408/409/429/5xx and connection errors, honouring retry-after (default 2). */
  readonly maxRetries?: number;
  readonly timeoutMs?: number;
}

export interface OpenAIModelOptions extends ProviderModelOptions {
  /** How the turn is asked for: native tool calls (default) or a JSON schema response. */
  readonly mode?: "tools" | "json_schema";
}

export interface OpenAICompatibleModelOptions extends Omit<OpenAIModelOptions, "baseURL"> {
  /** The server's base URL (`http://127.0.0.1:8080/v1`); no user-info or query. */
  readonly baseURL: string;
}

const present = (v: string | undefined): v is string => v !== undefined && v !== "";

function keyOf(given: string | undefined, variable: string, who: string): string {
  const key = given ?? process.env[variable];
  if (!present(key)) throw new WarrantError("model/missing-key", `${who} needs ${variable}`);
  return key;
}

function sdkOptions(o: ProviderModelOptions) {
  return {
    ...(o.maxRetries === undefined ? {} : { maxRetries: o.maxRetries }),
    ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
  };
}

/** OpenAI's Chat Completions API; refuses `model/missing-key` at once without a key. */
export function openaiModel(o: OpenAIModelOptions): ModelProvider {
  const apiKey = keyOf(o.apiKey, "OPENAI_API_KEY", "openaiModel");
  const base = o.baseURL ?? process.env.OPENAI_BASE_URL;
  const id = `openai:${o.model}`;
  return lazyModel(id, present(base) ? base : undefined, async () =>
    (await import("../adapters/models/openai-model.js")).createOpenAIModel({
      model: o.model,
      apiKey,
      ...(present(base) ? { baseURL: base } : {}),
      maxTokensField: "max_completion_tokens",
      mode: o.mode ?? "tools",
      id,
      ...sdkOptions(o),
    }),
  );
}

/** An OpenAI-compatible server; a key is sent only when given (or in `OPENAI_API_KEY`). */
export function openaiCompatibleModel(o: OpenAICompatibleModelOptions): ModelProvider {
  let url: URL;
  try {
    url = new URL(o.baseURL);
  } catch {
    throw new WarrantError("model/uri", "the base URL does not parse");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new WarrantError("model/uri", "the base URL must be http or https");
  }
  if (url.username !== "" || url.password !== "" || url.search !== "") {
    throw new WarrantError("model/credential", "the base URL must carry no user-info or query");
  }
  const apiKey = o.apiKey ?? process.env.OPENAI_API_KEY;
  const id = `openai-compatible:${o.baseURL}#${o.model}`;
  return lazyModel(id, o.baseURL, async () =>
    (await import("../adapters/models/openai-model.js")).createOpenAIModel({
      model: o.model,
      // Local servers ignore the key, but the SDK must send one.
      apiKey: present(apiKey) ? apiKey : "no-key",
      baseURL: o.baseURL,
      mode: o.mode ?? "tools",
      id,
      ...sdkOptions(o),
    }),
  );
}

/** Anthropic's Messages API; refuses `model/missing-key` at once without a key. */
export function anthropicModel(o: ProviderModelOptions): ModelProvider {
  const apiKey = keyOf(o.apiKey, "ANTHROPIC_API_KEY", "anthropicModel");
  const base = o.baseURL ?? process.env.ANTHROPIC_BASE_URL;
  const id = `anthropic:${o.model}`;
  return lazyModel(id, present(base) ? base : undefined, async () =>
    (await import("../adapters/models/anthropic-model.js")).createAnthropicModel({
      model: o.model,
      apiKey,
      ...(present(base) ? { baseURL: base } : {}),
      id,
      ...sdkOptions(o),
    }),
  );
}
