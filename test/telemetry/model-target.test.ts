// What a chat span says of the model it called: the provider's name, the model asked for and the
// one that answered, the server, the response id, finish reason and token counts. Read from the
// provider's id and the base URL it actually calls, and checked over the wire against a local
// OpenAI-compatible server and Anthropic's API shape.
import { afterEach, describe, expect, it } from "vitest";
import { createModelFromUri } from "../../src/adapters/models/model-uri.js";
import { modelTarget, targetOf } from "../../src/core/turn/model-target.js";
import { anthropicModel, openaiCompatibleModel, openaiModel } from "../../src/library/providers.js";
import { fixture, startWireServer, type WireServer } from "../models/wire-server.js";
import { tracedPassage } from "./traced-passage.js";

describe("modelTarget", () => {
  it("names OpenAI and Anthropic with their API's host and port, or the base URL given", () => {
    expect(modelTarget("openai:gpt-4.1")).toEqual({
      provider: "openai",
      model: "gpt-4.1",
      server: { address: "api.openai.com", port: 443 },
    });
    expect(modelTarget("anthropic:claude-sonnet-4-5")).toEqual({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      server: { address: "api.anthropic.com", port: 443 },
    });
    expect(modelTarget("openai:gpt-4.1", "http://10.0.0.7:8080/v1").server).toEqual({
      address: "10.0.0.7",
      port: 8080,
    });
  });

  it("names a compatible server by its host, IPv6 without brackets, the port from the scheme", () => {
    expect(modelTarget("openai-compatible:http://localhost:11434/v1#llama3.1")).toEqual({
      provider: "localhost",
      model: "llama3.1",
      server: { address: "localhost", port: 11434 },
    });
    expect(modelTarget("openai-compatible:https://llm.example#m").server).toEqual({
      address: "llm.example",
      port: 443,
    });
    expect(modelTarget("openai-compatible:http://[::1]:8000/v1#m").server).toEqual({
      address: "::1",
      port: 8000,
    });
  });

  it("names scripted and function models by their script or function, with no server", () => {
    expect(modelTarget("scripted:/a/b/implementer.jsonl")).toEqual({
      provider: "scripted",
      model: "implementer",
    });
    expect(modelTarget("function:solve")).toEqual({ provider: "function", model: "solve" });
    expect(modelTarget("mine")).toEqual({ provider: "mine", model: "mine" });
    // A base URL that is not http(s) names no server.
    expect(modelTarget("x:y", "file:///etc/passwd")).toEqual({ provider: "x", model: "y" });
  });

  it("prefers what a provider states; the URI and library factories state the server they call", () => {
    expect(targetOf({ id: "openai:a", target: { provider: "p", model: "m" } })).toEqual({
      provider: "p",
      model: "m",
    });
    const env = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" };
    const uri = createModelFromUri("openai:gpt-4.1", { env });
    expect(uri.ok && targetOf(uri.value)).toEqual({
      provider: "openai",
      model: "gpt-4.1",
      server: { address: "127.0.0.1", port: 9 },
    });
    const lib = openaiModel({ model: "gpt-4.1", apiKey: "k", baseURL: "http://10.1.1.1:81/v1" });
    expect(targetOf(lib).server).toEqual({ address: "10.1.1.1", port: 81 });
    const compatible = openaiCompatibleModel({ model: "m", baseURL: "http://gpu-box:8000/v1" });
    expect(targetOf(compatible)).toEqual({
      provider: "gpu-box",
      model: "m",
      server: { address: "gpu-box", port: 8000 },
    });
    expect(targetOf(anthropicModel({ model: "c", apiKey: "k" })).server?.address).toBe(
      "api.anthropic.com",
    );
  });
});

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("chat spans of a live model", () => {
  it("an OpenAI-compatible server: host as provider, server address and port, response id, model, finish reason, tokens", async () => {
    server = await startWireServer([fixture("openai/tool-calls"), fixture("openai/message-tool")]);
    const model = openaiCompatibleModel({ model: "local-model", baseURL: `${server.url}/v1` });
    const { outcome, receiver } = await tracedPassage(model, { captureContent: false });
    expect(outcome.ok).toBe(true);
    const chats = receiver.spans
      .filter((s) => s.name === "chat local-model")
      .sort((a, b) => Number(a.startNs - b.startNs));
    expect(chats).toHaveLength(2);
    const port = Number(new URL(server.url).port);
    expect(chats[0]?.kind).toBe(3);
    expect(chats[0]?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "127.0.0.1",
      "gen_ai.request.model": "local-model",
      "gen_ai.response.model": "gpt-4.1-2025-04-14",
      "gen_ai.response.id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "gen_ai.usage.input_tokens": 182,
      "gen_ai.usage.output_tokens": 17,
      "server.address": "127.0.0.1",
      "server.port": port,
    });
    const tool = receiver.spans.find((s) => s.name === "execute_tool math.add");
    expect(tool?.parentSpanId).toBe(chats[0]?.parentSpanId);
    expect(tool?.attributes["gen_ai.tool.call.id"]).toBe("passage:traced#0.0");
  });

  it("Anthropic's API: provider anthropic, the message id and stop reason", async () => {
    server = await startWireServer([
      fixture("anthropic/tool-use"),
      fixture("anthropic/message-tool"),
    ]);
    const model = anthropicModel({ model: "claude-sonnet-4-5", apiKey: "k", baseURL: server.url });
    const { outcome, receiver } = await tracedPassage(model, { captureContent: false });
    expect(outcome.ok).toBe(true);
    const [first] = receiver.spans.filter((s) => s.name === "chat claude-sonnet-4-5");
    expect(first?.attributes).toMatchObject({
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.response.id": expect.stringMatching(/^msg_/),
      "gen_ai.response.finish_reasons": ["tool_use"],
      "server.address": "127.0.0.1",
    });
  });
});
