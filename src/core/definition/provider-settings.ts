// A definition model's `settings` as each provider spells them on the wire (OpenAI Chat Completions,
// Anthropic Messages), and the settings a provider cannot honour: those are never sent, and never
// silently dropped either — preflight reports each as a warning naming the setting.
import type { ModelSettings } from "./types.js";

/** The providers a definition's model may name. */
export const DEFINITION_PROVIDERS = [
  "openai",
  "anthropic",
  "openai-compatible",
  "scripted",
] as const;

export type DefinitionProvider = (typeof DEFINITION_PROVIDERS)[number];

export function isDefinitionProvider(name: string): name is DefinitionProvider {
  return (DEFINITION_PROVIDERS as readonly string[]).includes(name);
}

/** A setting the provider will not receive, and why. */
export interface UnhonouredSetting {
  /** The setting's name in the definition (`topK`, `reasoning.summary`). */
  readonly setting: string;
  readonly reason: string;
}

/** What a provider's request carries for a definition's settings. */
export interface WireSettings {
  /** Fields merged into the request body, spelled as the provider's API spells them. */
  readonly body: Readonly<Record<string, unknown>>;
  /** Request headers (Anthropic's `anthropic-beta`). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Anthropic refuses a forced tool choice while thinking: the turn is then asked for with
   * `tool_choice: auto`, and a model that answers in prose is sent back to repair.
   */
  readonly toolChoiceAuto: boolean;
  readonly unhonoured: readonly UnhonouredSetting[];
}

/** The output-token cap a definition states: `maxCompletionTokens`, else `maxTokens`. */
export function statedMaxTokens(settings: ModelSettings | undefined): number | undefined {
  const stated = settings?.maxCompletionTokens ?? settings?.maxTokens;
  return typeof stated === "number" && stated > 0 ? stated : undefined;
}

/** The reasoning effort a definition states, by whichever of its three spellings. */
function effortOf(s: ModelSettings): string | undefined {
  return s.reasoningEffort ?? s.reasoning?.effort ?? s.effort;
}

const OPENAI_EFFORTS = new Set(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);
const ANTHROPIC_EFFORTS = new Set(["low", "medium", "high", "xhigh", "max"]);
const OPENAI_TIERS = new Set(["auto", "default", "flex", "scale", "priority"]);
const ANTHROPIC_TIERS = new Set(["auto", "standard_only"]);

/** The settings that every provider honours through the passage (output tokens per call). */
function outputCap(s: ModelSettings, out: UnhonouredSetting[]): void {
  if (s.maxTokens !== undefined && s.maxCompletionTokens !== undefined) {
    out.push({
      setting: "maxTokens",
      reason: "maxCompletionTokens is stated too and caps each call's output instead",
    });
  }
}

/**
 * OpenAI Chat Completions (also OpenAI-compatible servers): temperature, top_p, stop, seed,
 * frequency_penalty, presence_penalty, reasoning_effort, service_tier. The output cap is sent by the
 * adapter itself (`max_completion_tokens`, or `max_tokens` for a compatible server).
 */
export function openaiWireSettings(settings: ModelSettings | undefined): WireSettings {
  const s = settings ?? {};
  const body: Record<string, unknown> = {};
  const unhonoured: UnhonouredSetting[] = [];
  outputCap(s, unhonoured);
  if (s.temperature !== undefined) body.temperature = s.temperature;
  if (s.topP !== undefined) body.top_p = s.topP;
  if (s.stop !== undefined) {
    if (s.stop.length <= 4) body.stop = [...s.stop];
    else unhonoured.push({ setting: "stop", reason: "Chat Completions takes at most 4 sequences" });
  }
  if (s.seed !== undefined) body.seed = s.seed;
  if (s.frequencyPenalty !== undefined) body.frequency_penalty = s.frequencyPenalty;
  if (s.presencePenalty !== undefined) body.presence_penalty = s.presencePenalty;
  const effort = effortOf(s);
  if (effort !== undefined) {
    if (OPENAI_EFFORTS.has(effort)) body.reasoning_effort = effort;
    else unhonoured.push({ setting: "reasoningEffort", reason: `no reasoning effort ${effort}` });
  }
  if (s.serviceTier !== undefined) {
    if (OPENAI_TIERS.has(s.serviceTier)) body.service_tier = s.serviceTier;
    else unhonoured.push({ setting: "serviceTier", reason: `no service tier ${s.serviceTier}` });
  }
  if (s.topK !== undefined)
    unhonoured.push({ setting: "topK", reason: "Chat Completions has no top_k" });
  if (s.reasoning?.summary !== undefined)
    unhonoured.push({
      setting: "reasoning.summary",
      reason: "Chat Completions returns no reasoning summary",
    });
  if (s.thinking !== undefined)
    unhonoured.push({
      setting: "thinking",
      reason: "Chat Completions has no thinking budget (use reasoningEffort)",
    });
  if (s.betas !== undefined && s.betas.length > 0)
    unhonoured.push({ setting: "betas", reason: "betas are Anthropic's" });
  return { body, headers: {}, toolChoiceAuto: false, unhonoured };
}

/**
 * Anthropic Messages: temperature, top_p, top_k, stop_sequences, thinking, output_config.effort,
 * service_tier, and `betas` as the `anthropic-beta` header. `max_tokens` is sent by the adapter.
 */
export function anthropicWireSettings(settings: ModelSettings | undefined): WireSettings {
  const s = settings ?? {};
  const body: Record<string, unknown> = {};
  const headers: Record<string, string> = {};
  const unhonoured: UnhonouredSetting[] = [];
  outputCap(s, unhonoured);
  let toolChoiceAuto = false;
  const thinking = s.thinking;
  const thinkingOn = thinking !== undefined && thinking.type !== "disabled";
  if (thinking !== undefined) {
    if (thinking.type === "enabled") {
      body.thinking = { type: "enabled", budget_tokens: thinking.budgetTokens ?? 1024 };
    } else if (thinking.type === "adaptive") {
      body.thinking = { type: "adaptive" };
    } else {
      body.thinking = { type: "disabled" };
    }
    toolChoiceAuto = thinkingOn;
  }
  if (s.temperature !== undefined) {
    // Anthropic refuses a changed temperature while thinking.
    if (thinkingOn)
      unhonoured.push({ setting: "temperature", reason: "not allowed with thinking enabled" });
    else body.temperature = s.temperature;
  }
  if (s.topK !== undefined) {
    if (thinkingOn)
      unhonoured.push({ setting: "topK", reason: "not allowed with thinking enabled" });
    else body.top_k = s.topK;
  }
  if (s.topP !== undefined) body.top_p = s.topP;
  if (s.stop !== undefined) body.stop_sequences = [...s.stop];
  const effort = effortOf(s);
  if (effort !== undefined) {
    if (ANTHROPIC_EFFORTS.has(effort)) body.output_config = { effort };
    else unhonoured.push({ setting: "effort", reason: `no effort level ${effort}` });
  }
  if (s.serviceTier !== undefined) {
    if (ANTHROPIC_TIERS.has(s.serviceTier)) body.service_tier = s.serviceTier;
    else unhonoured.push({ setting: "serviceTier", reason: `no service tier ${s.serviceTier}` });
  }
  if (s.betas !== undefined && s.betas.length > 0) headers["anthropic-beta"] = s.betas.join(",");
  if (s.seed !== undefined)
    unhonoured.push({ setting: "seed", reason: "the Messages API takes no seed" });
  if (s.frequencyPenalty !== undefined)
    unhonoured.push({ setting: "frequencyPenalty", reason: "the Messages API has no penalties" });
  if (s.presencePenalty !== undefined)
    unhonoured.push({ setting: "presencePenalty", reason: "the Messages API has no penalties" });
  if (s.reasoning?.summary !== undefined)
    unhonoured.push({ setting: "reasoning.summary", reason: "OpenAI's, not Anthropic's" });
  return { body, headers, toolChoiceAuto, unhonoured };
}

/** A scripted model replays its file: it honours no setting but the output cap. */
export function scriptedWireSettings(settings: ModelSettings | undefined): WireSettings {
  const s = settings ?? {};
  const unhonoured: UnhonouredSetting[] = [];
  outputCap(s, unhonoured);
  for (const key of Object.keys(s).sort()) {
    if (key === "maxTokens" || key === "maxCompletionTokens") continue;
    unhonoured.push({ setting: key, reason: "a scripted model replays its file" });
  }
  return { body: {}, headers: {}, toolChoiceAuto: false, unhonoured };
}

/** The wire settings of a definition's model for its provider. */
export function wireSettings(provider: DefinitionProvider, settings?: ModelSettings): WireSettings {
  switch (provider) {
    case "openai":
    case "openai-compatible":
      return openaiWireSettings(settings);
    case "anthropic":
      return anthropicWireSettings(settings);
    case "scripted":
      return scriptedWireSettings(settings);
    default:
      return provider satisfies never;
  }
}
