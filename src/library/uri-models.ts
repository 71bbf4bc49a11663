// Models named by URI per role (the command line's `--model ROLE=URI`, overriding the agent
// definition's): `scripted:PATH`, `openai:MODEL`, `openai-compatible:BASE_URL#MODEL`,
// `anthropic:MODEL`. The loop's binding records the URIs, so a resumed loop gets the same models;
// a scripted model starts after the answers its role's earlier passages used, so a redone passage
// replays exactly what the interrupted one got.
import { readFileSync } from "node:fs";
import path from "node:path";
import { createModelFromUri, parseModelUri } from "../adapters/models/model-uri.js";
import { createScriptedModel, parseScript } from "../adapters/models/scripted-model.js";
import type { ModelSettings } from "../core/definition/types.js";
import { WarrantError } from "../core/result.js";
import { type ModelProvider, versioned } from "./model.js";
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
    let text: string;
    try {
      text = readFileSync(parsed.value.path, "utf8");
    } catch {
      throw new WarrantError("model/script", `cannot read the scripted model ${parsed.value.path}`);
    }
    const answers = parseScript(text).slice(priorCalls);
    const id = `scripted:${path.basename(parsed.value.path)}`;
    return versioned(createScriptedModel(answers, { id }));
  }
  const made = createModelFromUri(uri, { env, ...(settings === undefined ? {} : { settings }) });
  if (!made.ok)
    throw new WarrantError(made.errors[0]?.code ?? "model/uri", made.errors[0]?.message ?? uri);
  return versioned(made.value);
}

/**
 * Each role's model from the URI its loop's binding recorded as an override (`--model`); none for a
 * role without one, which runs on its agent definition's models.
 */
export function uriModels(env: Env = process.env): ModelResolver {
  return (_role, { recorded, priorCalls }) =>
    recorded === undefined ? undefined : modelFromUri(recorded, priorCalls, env);
}
