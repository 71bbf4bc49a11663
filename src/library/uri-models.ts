// Models named by URI per role (the command line's `--model ROLE=URI`, overriding the agent
// definition's): `scripted:PATH`, `openai:MODEL`, `openai-compatible:BASE_URL#MODEL`,
// `anthropic:MODEL`. The loop's binding records the URIs, so a resumed loop gets the same models;
// a scripted model starts after the answers its role's earlier passages used, so a redone passage
// replays exactly what the interrupted one got.
import path from "node:path";
import { readScriptFile } from "../adapters/fs/script-file.js";
import { createModelFromUri, parseModelUri } from "../adapters/models/model-uri.js";
import { createScriptedModel } from "../adapters/models/scripted-model.js";
import type { ModelSettings } from "../core/definition/types.js";
import { WarrantError } from "../core/result.js";
import type { ModelProvider } from "./model.js";
import type { ModelResolver } from "./options.js";

type Env = Readonly<Record<string, string | undefined>>;

/** A model for a URI; keys come from `env` only; `settings` (a definition's) as the provider spells them. */
export function modelFromUri(
  uri: string,
  priorCalls: number,
  env: Env,
  settings?: ModelSettings,
): ModelProvider {
  const parsed = parseModelUri(uri);
  if (parsed.ok && parsed.value.kind === "scripted") {
    const script = readScriptFile(parsed.value.path);
    if (!script.ok) {
      const p = script.errors[0];
      throw new WarrantError(p?.code ?? "model/script", p?.message ?? parsed.value.path);
    }
    const used = Math.min(priorCalls, script.value.length);
    const answers = script.value.slice(used);
    const id = `scripted:${path.basename(parsed.value.path)}`;
    return createScriptedModel(answers, { id, used });
  }
  const made = createModelFromUri(uri, { env, ...(settings === undefined ? {} : { settings }) });
  if (!made.ok)
    throw new WarrantError(made.errors[0]?.code ?? "model/uri", made.errors[0]?.message ?? uri);
  return made.value;
}

/**
 * Each role's model from the URI its loop's binding recorded as an override (`--model`); none for a
 * role without one, which runs on its agent definition's models.
 */
export function uriModels(env: Env = process.env): ModelResolver {
  return (_role, { recorded, priorCalls }) =>
    recorded === undefined ? undefined : modelFromUri(recorded, priorCalls, env);
}
