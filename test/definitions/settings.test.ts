// A definition model's settings reach each provider as that provider spells them (asserted on the
// requests a local wire server receives), and a setting the provider cannot honour is listed,
// never sent.
import { afterEach, describe, expect, it } from "vitest";
import { createModelFromUri } from "../../src/adapters/models/model-uri.js";
import {
  anthropicWireSettings,
  openaiWireSettings,
  scriptedWireSettings,
} from "../../src/core/definition/provider-settings.js";
import type { ModelSettings } from "../../src/core/definition/types.js";
import type { ModelRequest } from "../../src/core/ports/model-provider.js";
import { fixture, startWireServer, type WireServer } from "../models/wire-server.js";

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request: ModelRequest = {
  role: "implementer",
  system: "s",
  conversation: [{ kind: "user", text: "go" }],
  length: 1,
  tools: [],
  messageTypes: ["Plan"],
  maxOutputTokens: 512,
};

const ALL: ModelSettings = {
  temperature: 0.3,
  topP: 0.9,
  topK: 40,
  stop: ["END"],
  seed: 7,
  frequencyPenalty: 0.1,
  presencePenalty: 0.2,
  reasoningEffort: "low",
  serviceTier: "auto",
  betas: ["a-beta", "b-beta"],
};

async function sent(uri: (url: string) => string, reply: string, settings: ModelSettings) {
  server = await startWireServer([fixture(reply)]);
  const made = createModelFromUri(uri(server.url), {
    env: {
      OPENAI_API_KEY: "sk-test",
      ANTHROPIC_API_KEY: "sk-ant-test",
      ANTHROPIC_BASE_URL: server.url,
    },
    settings,
    maxRetries: 0,
  });
  if (!made.ok) throw new Error(JSON.stringify(made.errors));
  await made.value.complete(request);
  const r = server.requests[0];
  if (r === undefined) throw new Error("no request");
  return r;
}

describe("settings on the wire", () => {
  it("OpenAI-compatible: temperature, top_p, stop, seed, penalties, reasoning_effort, service_tier; no top_k", async () => {
    const r = await sent((u) => `openai-compatible:${u}/v1#m`, "openai/message-tool", ALL);
    expect(r.body).toMatchObject({
      model: "m",
      temperature: 0.3,
      top_p: 0.9,
      stop: ["END"],
      seed: 7,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      reasoning_effort: "low",
      service_tier: "auto",
      max_tokens: 512,
      tool_choice: "required",
    });
    expect(r.body).not.toHaveProperty("top_k");
    expect(r.body).not.toHaveProperty("betas");
    expect(r.headers["anthropic-beta"]).toBeUndefined();
  });

  it("Anthropic: temperature, top_p, top_k, stop_sequences, output_config.effort, service_tier, betas as a header", async () => {
    const r = await sent(() => "anthropic:claude-x", "anthropic/message-tool", ALL);
    expect(r.body).toMatchObject({
      model: "claude-x",
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ["END"],
      output_config: { effort: "low" },
      service_tier: "auto",
      max_tokens: 512,
      tool_choice: { type: "any" },
    });
    expect(r.headers["anthropic-beta"]).toBe("a-beta,b-beta");
    for (const k of ["seed", "frequency_penalty", "presence_penalty", "reasoning_effort"])
      expect(r.body).not.toHaveProperty(k);
  });

  it("Anthropic with thinking: the budget is sent, the tool choice is auto, temperature and top_k are not sent", async () => {
    const r = await sent(() => "anthropic:claude-x", "anthropic/message-tool", {
      temperature: 0.5,
      topK: 5,
      thinking: { type: "enabled", budgetTokens: 2048 },
    });
    expect(r.body).toMatchObject({
      thinking: { type: "enabled", budget_tokens: 2048 },
      tool_choice: { type: "auto" },
    });
    expect(r.body).not.toHaveProperty("temperature");
    expect(r.body).not.toHaveProperty("top_k");
  });

  it("no settings: nothing but the adapter's own fields", async () => {
    const r = await sent((u) => `openai-compatible:${u}/v1#m`, "openai/message-tool", {});
    expect(Object.keys(r.body).sort()).toEqual([
      "max_tokens",
      "messages",
      "model",
      "tool_choice",
      "tools",
    ]);
  });
});

describe("what each provider cannot honour", () => {
  const names = (w: { unhonoured: readonly { setting: string }[] }) =>
    w.unhonoured.map((u) => u.setting);

  it("OpenAI: top_k, thinking, reasoning summaries, betas, more than 4 stop sequences, an unknown effort", () => {
    expect(
      names(
        openaiWireSettings({
          topK: 1,
          thinking: { type: "enabled", budgetTokens: 1024 },
          reasoning: { summary: "auto" },
          betas: ["x"],
          stop: ["1", "2", "3", "4", "5"],
          reasoningEffort: "enormous",
        }),
      ).sort(),
    ).toEqual(["betas", "reasoning.summary", "reasoningEffort", "stop", "thinking", "topK"]);
    expect(openaiWireSettings({ reasoning: { effort: "high" } }).body).toEqual({
      reasoning_effort: "high",
    });
  });

  it("Anthropic: seed, penalties, reasoning summaries; temperature and top_k while thinking", () => {
    expect(
      names(
        anthropicWireSettings({
          seed: 1,
          frequencyPenalty: 0,
          presencePenalty: 0,
          reasoning: { summary: "auto" },
          temperature: 1,
          topK: 3,
          thinking: { type: "adaptive" },
        }),
      ).sort(),
    ).toEqual([
      "frequencyPenalty",
      "presencePenalty",
      "reasoning.summary",
      "seed",
      "temperature",
      "topK",
    ]);
    expect(anthropicWireSettings({ thinking: { type: "disabled" }, temperature: 1 })).toMatchObject(
      {
        body: { thinking: { type: "disabled" }, temperature: 1 },
        toolChoiceAuto: false,
        unhonoured: [],
      },
    );
  });

  it("both: maxTokens beside maxCompletionTokens is not the cap; a scripted model honours only the cap", () => {
    expect(names(openaiWireSettings({ maxTokens: 1, maxCompletionTokens: 2 }))).toEqual([
      "maxTokens",
    ]);
    expect(names(scriptedWireSettings({ maxTokens: 100, temperature: 0, seed: 2 }))).toEqual([
      "seed",
      "temperature",
    ]);
  });
});
