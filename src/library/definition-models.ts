// A definition's models as providers: `openai` and `anthropic` (keys from the environment),
// `openai-compatible` (its base URL from WARRANT_OPENAI_COMPATIBLE_BASE_URL, else the task pack's
// `openaiCompatibleBaseUrl`), and `scripted` (its `model` a JSONL file of turns, relative to the
// root definition's file). Each is made through its model URI, with the definition's settings sent
// as the provider spells them.
import { existsSync } from "node:fs";
import path from "node:path";
import { isDefinitionProvider } from "../core/definition/provider-settings.js";
import type { Model } from "../core/definition/types.js";
import { fail, ok, type Problem, type Result, WarrantError } from "../core/result.js";
import type { AgentSite } from "../runtime/agent-site.js";
import type { LoadedPack } from "../runtime/task-pack.js";
import type { ModelProvider } from "./model.js";
import { modelFromUri } from "./uri-models.js";

type Env = Readonly<Record<string, string | undefined>>;

export const COMPATIBLE_BASE_URL_VARIABLE = "WARRANT_OPENAI_COMPATIBLE_BASE_URL";

function problem(code: string, message: string): Problem {
  return { code, path: "", message };
}

export interface DefinitionModelContext {
  readonly env: Env;
  /** The task pack's `openaiCompatibleBaseUrl`, when the pack names one. */
  readonly compatibleBaseUrl?: string | undefined;
}

/** The model URI a definition's model runs as. */
export function definitionModelUri(
  model: Model,
  site: Pick<AgentSite, "file">,
  ctx: DefinitionModelContext,
): Result<string> {
  const { provider } = model;
  if (!isDefinitionProvider(provider)) {
    return fail([
      problem(
        "definition/provider-unknown",
        `provider ${JSON.stringify(provider)} is not one Warrant runs (openai, anthropic, openai-compatible, scripted)`,
      ),
    ]);
  }
  switch (provider) {
    case "openai":
    case "anthropic":
      return ok(`${provider}:${model.model}`);
    case "openai-compatible": {
      const env = ctx.env[COMPATIBLE_BASE_URL_VARIABLE];
      const base = env !== undefined && env !== "" ? env : ctx.compatibleBaseUrl;
      if (base === undefined) {
        return fail([
          problem(
            "definition/base-url-missing",
            `an openai-compatible model needs ${COMPATIBLE_BASE_URL_VARIABLE} or the task pack's openaiCompatibleBaseUrl`,
          ),
        ]);
      }
      return ok(`openai-compatible:${base}#${model.model}`);
    }
    case "scripted": {
      const file = path.resolve(path.dirname(site.file), model.model);
      if (!existsSync(file)) {
        return fail([
          problem(
            "definition/model-script-missing",
            `scripted model ${model.model}: no file ${file}`,
          ),
        ]);
      }
      return ok(`scripted:${file}`);
    }
    default:
      return provider satisfies never;
  }
}

const KEYS: Readonly<Record<string, string>> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
};

/** The URI, and a provider's key present in the environment where it needs one (preflight). */
export function runnableModelUri(
  model: Model,
  site: Pick<AgentSite, "file">,
  ctx: DefinitionModelContext,
): Result<string> {
  const uri = definitionModelUri(model, site, ctx);
  const variable = KEYS[model.provider];
  if (!uri.ok || variable === undefined) return uri;
  const key = ctx.env[variable];
  if (key !== undefined && key !== "") return uri;
  return fail([
    problem("model/missing-key", `${model.provider}: needs ${variable} in the environment`),
  ]);
}

/**
 * The model URI each role of a pack runs on: the run's override, else its definition's first model
 * (a role whose definition's model cannot be made has none: the definitions check says why).
 */
export function effectiveModelUris(
  pack: LoadedPack,
  overrides: Readonly<Record<string, string>>,
  env: Env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [role, agent] of Object.entries(pack.agents)) {
    if (agent === undefined) continue;
    const given = overrides[role];
    const first = (agent.definition as { models?: readonly Model[] }).models?.[0];
    const own =
      first === undefined
        ? undefined
        : definitionModelUri(
            first,
            { file: agent.path },
            {
              env,
              compatibleBaseUrl: pack.pack.openaiCompatibleBaseUrl,
            },
          );
    const uri = given ?? (own?.ok === true ? own.value : undefined);
    if (uri !== undefined) out[role] = uri;
  }
  return out;
}

/** Model `index` of an agent's definition, for a passage after `priorCalls` earlier calls. */
export function definitionModel(
  site: AgentSite,
  index: number,
  priorCalls: number,
  pack: LoadedPack,
  env: Env,
): ModelProvider {
  const model = site.definition.models[index];
  if (model === undefined)
    throw new WarrantError("definition/model-ref", `${site.definition.name} has no model ${index}`);
  const uri = definitionModelUri(model, site, {
    env,
    compatibleBaseUrl: pack.pack.openaiCompatibleBaseUrl,
  });
  if (!uri.ok) {
    const p = uri.errors[0];
    throw new WarrantError(
      p?.code ?? "definition/model",
      `${site.definition.name}: ${p?.message ?? ""}`,
    );
  }
  return modelFromUri(uri.value, priorCalls, env, model.settings);
}
