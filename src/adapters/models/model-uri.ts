// Model URIs (docs/spec/turns.md): `scripted:PATH`, `openai:MODEL`, `openai-compatible:BASE_URL#MODEL`,
// `anthropic:MODEL`; OpenAI forms take `?mode=tools|json_schema` after the model. Keys come only
// from the environment given (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) and never appear in an id,
// a refusal or an error.
import { wireSettings } from "../../core/definition/provider-settings.js";
import type { ModelSettings } from "../../core/definition/types.js";
import type { ModelProvider } from "../../core/ports/model-provider.js";
import { MODEL_SPECIFICATION_VERSION } from "../../core/ports/model-provider.js";
import { fail, ok, type Problem, type Result, WarrantError } from "../../core/result.js";
import { modelTarget } from "../../core/turn/model-target.js";
import type { OpenAIMode } from "./openai-model.js";
import { loadScriptedModel } from "./scripted-model.js";

export type ModelUri =
  | { readonly kind: "scripted"; readonly path: string }
  | { readonly kind: "openai"; readonly model: string; readonly mode: OpenAIMode }
  | {
      readonly kind: "openai-compatible";
      readonly baseURL: string;
      readonly model: string;
      readonly mode: OpenAIMode;
    }
  | { readonly kind: "anthropic"; readonly model: string };

const OPENAI_API = "https://api.openai.com/v1";
const ANTHROPIC_API = "https://api.anthropic.com";
/** Local servers ignore the key, but the SDK must send one. */
const NO_KEY = "no-key";

function problem(code: string, message: string): Problem {
  return { code, path: "", message };
}

function modelAndMode(text: string): Result<{ model: string; mode: OpenAIMode }> {
  const q = text.indexOf("?");
  const model = q < 0 ? text : text.slice(0, q);
  if (model.trim() === "") return fail([problem("model/uri", "the model name is empty")]);
  if (q < 0) return ok({ model, mode: "tools" });
  const params = new URLSearchParams(text.slice(q + 1));
  for (const key of params.keys()) {
    if (key !== "mode")
      return fail([problem("model/uri", `unknown model option ${JSON.stringify(key)}`)]);
  }
  const mode = params.get("mode");
  if (mode !== "tools" && mode !== "json_schema") {
    return fail([problem("model/uri", "mode must be tools or json_schema")]);
  }
  return ok({ model, mode });
}

export function parseModelUri(uri: string): Result<ModelUri> {
  const colon = uri.indexOf(":");
  const scheme = colon < 0 ? "" : uri.slice(0, colon);
  const rest = uri.slice(colon + 1);
  switch (scheme) {
    case "scripted":
      return rest === ""
        ? fail([problem("model/uri", "scripted: needs a path")])
        : ok({ kind: "scripted", path: rest });
    case "openai": {
      const m = modelAndMode(rest);
      return m.ok ? ok({ kind: "openai", ...m.value }) : m;
    }
    case "anthropic":
      return rest.trim() === "" || rest.includes("?")
        ? fail([problem("model/uri", "anthropic: needs a model name and takes no options")])
        : ok({ kind: "anthropic", model: rest });
    case "openai-compatible": {
      const hash = rest.indexOf("#");
      if (hash < 0) {
        return fail([problem("model/uri", "openai-compatible: is written BASE_URL#MODEL")]);
      }
      const base = rest.slice(0, hash);
      let url: URL;
      try {
        url = new URL(base);
      } catch {
        return fail([problem("model/uri", "the base URL does not parse")]);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        return fail([problem("model/uri", "the base URL must be http or https")]);
      }
      if (url.username !== "" || url.password !== "" || url.search !== "") {
        // Credentials belong in the environment, never in a URI that is printed and recorded.
        return fail([problem("model/credential", "the base URL must carry no user-info or query")]);
      }
      const m = modelAndMode(rest.slice(hash + 1));
      return m.ok ? ok({ kind: "openai-compatible", baseURL: base, ...m.value }) : m;
    }
    default:
      return fail([
        problem(
          "model/uri",
          "a model URI is scripted:PATH, openai:MODEL, openai-compatible:BASE_URL#MODEL or anthropic:MODEL",
        ),
      ]);
  }
}

export interface ModelFactoryOptions {
  /** Where keys (and `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`) are read; the CLI passes process.env. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly maxRetries?: number;
  readonly timeoutMs?: number;
  /** An agent definition's model settings, sent as the provider spells them. */
  readonly settings?: ModelSettings;
}

function present(value: string | undefined): value is string {
  return value !== undefined && value !== "";
}

/**
 * A provider whose SDK adapter is imported on its first call, so that a command that never calls a
 * live model never loads a provider SDK (they cost most of the CLI's start-up).
 */
function lazyProvider(
  id: string,
  baseURL: string,
  load: () => Promise<ModelProvider>,
): ModelProvider {
  let loaded: Promise<ModelProvider> | undefined;
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    id,
    target: modelTarget(id, baseURL),
    async complete(request, opts) {
      loaded ??= load();
      return (await loaded).complete(request, opts);
    },
  };
}

/** A provider for a URI; refuses `model/uri`, `model/credential` and `model/missing-key`. */
export function createModelFromUri(
  uri: string,
  options: ModelFactoryOptions,
): Result<ModelProvider> {
  const parsed = parseModelUri(uri);
  if (!parsed.ok) return parsed;
  const u = parsed.value;
  const { env } = options;
  const sdk = {
    ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
  const openaiWire = wireSettings("openai", options.settings);
  const openaiSettings =
    Object.keys(openaiWire.body).length === 0 ? {} : { settings: openaiWire.body };
  switch (u.kind) {
    case "scripted":
      try {
        return ok(loadScriptedModel(u.path));
      } catch (e) {
        const message = e instanceof WarrantError ? e.message : `cannot read ${u.path}`;
        return fail([problem("model/script", message)]);
      }
    case "openai": {
      const apiKey = env.OPENAI_API_KEY;
      if (!present(apiKey)) {
        return fail([
          problem("model/missing-key", "openai: needs OPENAI_API_KEY in the environment"),
        ]);
      }
      const id = `openai:${u.model}`;
      const baseURL = present(env.OPENAI_BASE_URL) ? env.OPENAI_BASE_URL : OPENAI_API;
      return ok(
        lazyProvider(id, baseURL, async () =>
          (await import("./openai-model.js")).createOpenAIModel({
            model: u.model,
            apiKey,
            baseURL,
            maxTokensField: "max_completion_tokens",
            mode: u.mode,
            id,
            ...openaiSettings,
            ...sdk,
          }),
        ),
      );
    }
    case "openai-compatible": {
      const id = `openai-compatible:${u.baseURL}#${u.model}`;
      return ok(
        lazyProvider(id, u.baseURL, async () =>
          (await import("./openai-model.js")).createOpenAIModel({
            model: u.model,
            apiKey: present(env.OPENAI_API_KEY) ? env.OPENAI_API_KEY : NO_KEY,
            baseURL: u.baseURL,
            mode: u.mode,
            id,
            ...openaiSettings,
            ...sdk,
          }),
        ),
      );
    }
    case "anthropic": {
      const apiKey = env.ANTHROPIC_API_KEY;
      if (!present(apiKey)) {
        return fail([
          problem("model/missing-key", "anthropic: needs ANTHROPIC_API_KEY in the environment"),
        ]);
      }
      const id = `anthropic:${u.model}`;
      const baseURL = present(env.ANTHROPIC_BASE_URL) ? env.ANTHROPIC_BASE_URL : ANTHROPIC_API;
      const wire = wireSettings("anthropic", options.settings);
      return ok(
        lazyProvider(id, baseURL, async () =>
          (await import("./anthropic-model.js")).createAnthropicModel({
            model: u.model,
            apiKey,
            baseURL,
            id,
            ...(Object.keys(wire.body).length === 0 ? {} : { settings: wire.body }),
            ...(Object.keys(wire.headers).length === 0 ? {} : { headers: wire.headers }),
            ...(wire.toolChoiceAuto ? { toolChoiceAuto: true } : {}),
            ...sdk,
          }),
        ),
      );
    }
  }
}
