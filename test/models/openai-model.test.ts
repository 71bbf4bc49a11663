// The OpenAI adapter against a local server speaking the Chat Completions wire format.
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIModel, type OpenAIMode } from "../../src/adapters/models/openai-model.js";
import type { ConversationEntry, ModelRequest } from "../../src/core/ports/model-provider.js";
import { WarrantError } from "../../src/core/result.js";
import { jsonModeTurnSchema } from "../../src/core/turn/message-tools.js";
import { providerPayloadSchema, strictForm } from "../../src/core/turn/provider-payload-schema.js";
import { createToolRegistry } from "../../src/core/turn/tool-registry.js";
import { runPassage } from "../../src/runtime/passage.js";
import { ADD, addHost, addRegistry } from "../passage/helpers.js";
import { tokens } from "./tokens.js";
import { fixture, startWireServer, type WireReply, type WireServer } from "./wire-server.js";

const KEY = "sk-test-4f9a1c0e7b2d46e8a3c5b1d9e7f20a6c";
const OPEN_TOOL = {
  name: "workspace.read_file",
  description: "Read a file",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { path: { type: "string" }, encoding: { enum: ["utf8", "base64"] } },
    required: ["path"],
  },
};

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function model(
  replies: readonly WireReply[],
  mode: OpenAIMode = "tools",
  compatible = false,
) {
  server = await startWireServer(replies);
  return createOpenAIModel({
    model: compatible ? "qwen2.5-7b-instruct" : "gpt-4.1",
    apiKey: KEY,
    baseURL: `${server.url}/v1`,
    mode,
    ...(compatible ? {} : { maxTokensField: "max_completion_tokens" as const }),
  });
}

function request(tools = [ADD, OPEN_TOOL]): ModelRequest {
  const conversation: ConversationEntry[] = [{ kind: "user", text: "Add 1 and 2." }];
  return {
    role: "adversarial-critic",
    system: "You add numbers.",
    conversation,
    length: 1,
    tools,
    messageTypes: ["Finding", "DeadEnd"],
    maxOutputTokens: 256,
  };
}

/** No header but Authorization and no byte of any body carries the key. */
function expectKeyOnlyInAuth(s: WireServer): void {
  expect(s.requests.length).toBeGreaterThan(0);
  for (const r of s.requests) {
    expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
    const { authorization: _a, ...rest } = r.headers;
    expect(JSON.stringify(rest)).not.toContain(KEY);
    expect(r.rawBody).not.toContain(KEY);
  }
}

describe("openai adapter, tool mode", () => {
  it("sends the normalised tools, encoded names, strict flags, the message tools and tool_choice required", async () => {
    const m = await model([fixture("openai/tool-calls")]);
    await m.complete(request());
    const s = server as WireServer;
    const [r] = s.requests;
    expect(r?.method).toBe("POST");
    expect(r?.path).toBe("/v1/chat/completions");
    const body = r?.body as Record<string, unknown>;
    expect(body.model).toBe("gpt-4.1");
    expect(body.tool_choice).toBe("required");
    expect(body.max_completion_tokens).toBe(256);
    expect(body.response_format).toBeUndefined();
    const messages = body.messages as { role: string; content: string }[];
    expect(messages[0]?.role).toBe("system");
    expect(messages[0]?.content).toContain("You add numbers.");
    expect(messages[0]?.content).toContain(
      "The tools named Finding, DeadEnd each emit that message",
    );
    expect(messages[1]).toEqual({ role: "user", content: "Add 1 and 2." });
    const tools = body.tools as { type: string; function: Record<string, unknown> }[];
    expect(tools.map((t) => t.function.name)).toEqual([
      "math__add",
      "workspace__read_file",
      "Finding",
      "DeadEnd",
    ]);
    expect(tools.map((t) => t.function.strict)).toEqual([true, false, true, true]);
    expect(tools[0]?.function.parameters).toEqual(ADD.inputSchema);
    // The open schema is normalised too: no $schema, typed enums.
    expect(tools[1]?.function.parameters).toEqual({
      type: "object",
      properties: {
        path: { type: "string" },
        encoding: { type: "string", enum: ["utf8", "base64"] },
      },
      required: ["path"],
    });
    // The message tools' parameters are the payload schemas, in their strict form.
    expect(tools[2]?.function.parameters).toEqual(strictForm(providerPayloadSchema("Finding")));
    expect(tools[3]?.function.parameters).toEqual(strictForm(providerPayloadSchema("DeadEnd")));
    expectKeyOnlyInAuth(s);
  });

  it("parses native tool calls into a candidate turn with registry names", async () => {
    const m = await model([fixture("openai/tool-calls")]);
    const r = await m.complete(request());
    expect(r.stop).toBe("complete");
    expect(r.candidate).toEqual({
      kind: "tool_calls",
      summary: "",
      tool_calls: [{ name: "math.add", arguments_json: '{"a":1,"b":2}' }],
      message: null,
    });
    expect(r.usage).toEqual(tokens(182, 17));
    expect(r.meta).toEqual({
      id: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
      model: "gpt-4.1-2025-04-14",
      finishReason: "tool_calls",
    });
    expect((r.raw as { id: string }).id).toBe("chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG");
    expect(r.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("reports cached and reasoning tokens as the provider's details give them", async () => {
    const detailed = fixture("openai/tool-calls") as WireReply & {
      body: { usage: Record<string, unknown> };
    };
    detailed.body.usage = {
      prompt_tokens: 1200,
      completion_tokens: 300,
      prompt_tokens_details: { cached_tokens: 1024 },
      completion_tokens_details: { reasoning_tokens: 256 },
    };
    const m = await model([detailed]);
    const r = await m.complete(request());
    expect(r.usage).toEqual(tokens(1200, 300, 1024, 256));
  });

  it("charges nothing for a usage that is absent or not counts, and keeps labels short", async () => {
    const odd = fixture("openai/tool-calls") as WireReply & { body: Record<string, unknown> };
    odd.body.usage = { prompt_tokens: "12", completion_tokens: Number.MAX_VALUE };
    odd.body.model = "m".repeat(5000);
    const m = await model([odd]);
    const r = await m.complete(request());
    expect(r.usage).toEqual(tokens(0, 0));
    expect(r.meta.model).toHaveLength(256);
  });

  it("parses a message tool call into a message turn whose payload_json is the arguments' JCS", async () => {
    const m = await model([fixture("openai/message-tool")]);
    const r = await m.complete(request());
    expect(r.candidate).toEqual({
      kind: "message",
      summary: "The sum checks out.",
      tool_calls: [],
      message: {
        type: "Finding",
        payload_json: '{"claim":"1 + 2 = 3","evidence":["math.add returned 3"],"severity":"info"}',
        paper_ref: null,
      },
    });
  });

  it("reports a refusal and a truncation as such", async () => {
    const m = await model([fixture("openai/refusal"), fixture("openai/truncated")]);
    const refused = await m.complete(request());
    expect(refused.stop).toBe("refusal");
    expect(refused.refusal).toBe("I'm sorry, I can't help with that request.");
    const cut = await m.complete(request());
    expect(cut.stop).toBe("truncated");
  });

  it('reports finish_reason "content_filter" as a refusal', async () => {
    const filtered = fixture("openai/tool-calls") as WireReply & {
      body: { choices: { finish_reason: string; message: unknown }[] };
    };
    const choice = filtered.body.choices[0] as { finish_reason: string; message: unknown };
    choice.finish_reason = "content_filter";
    choice.message = { role: "assistant", content: null, refusal: null };
    const m = await model([filtered]);
    expect((await m.complete(request())).stop).toBe("refusal");
  });

  it("an aborted signal ends the call with model/aborted", async () => {
    const m = await model([fixture("openai/tool-calls")]);
    const e = (await m
      .complete(request(), { signal: AbortSignal.abort() })
      .catch((x: unknown) => x)) as WarrantError;
    expect(e).toBeInstanceOf(WarrantError);
    expect(e.code).toBe("model/aborted");
  });

  it("retries 429 honouring retry-after-ms, and 500 with retry-after", async () => {
    const m = await model([
      fixture("openai/rate-limited"),
      fixture("openai/server-error"),
      fixture("openai/tool-calls"),
    ]);
    const r = await m.complete(request());
    expect(r.stop).toBe("complete");
    const s = server as WireServer;
    expect(s.requests).toHaveLength(3);
    // The 429 asked for 40 ms (retry-after-ms wins over retry-after: 1).
    expect((s.requests[1]?.at ?? 0) - (s.requests[0]?.at ?? 0)).toBeGreaterThanOrEqual(35);
    expect(s.requests[1]?.headers["x-stainless-retry-count"]).toBe("1");
    expect(s.requests[1]?.rawBody).toBe(s.requests[0]?.rawBody);
    expectKeyOnlyInAuth(s);
  });

  it("gives up after its retries with model/unavailable", async () => {
    const err = fixture("openai/server-error");
    const m = await model([err, err, err, err]);
    const e = await m.complete(request()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WarrantError);
    expect((e as WarrantError).code).toBe("model/unavailable");
    expect((server as WireServer).requests).toHaveLength(3);
  });

  it("never lets an echoed key into an error", async () => {
    const m = await model([fixture("openai/invalid-key")]);
    const e = (await m.complete(request()).catch((x: unknown) => x)) as WarrantError;
    expect(e.code).toBe("model/auth");
    expect(e.message).toContain("Incorrect API key provided: [redacted]");
    expect(e.message).not.toContain(KEY);
    expect(JSON.stringify(e)).not.toContain(KEY);
    expect(String(e.stack)).not.toContain(KEY);
    expect(e.cause).toBeUndefined();
  });

  it("an OpenAI-compatible server gets max_tokens", async () => {
    const m = await model([fixture("openai/tool-calls")], "tools", true);
    await m.complete(request());
    const body = (server as WireServer).requests[0]?.body as Record<string, unknown>;
    expect(body.max_tokens).toBe(256);
    expect(body.max_completion_tokens).toBeUndefined();
  });
});

describe("openai adapter, json_schema mode", () => {
  it("sends a response format whose message is constrained per type, and no tools", async () => {
    const m = await model([fixture("openai/json-schema")], "json_schema", true);
    const r = await m.complete(request());
    const body = (server as WireServer).requests[0]?.body as Record<string, unknown>;
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
    expect(body.response_format).toEqual({
      type: "json_schema",
      json_schema: {
        name: "model_turn",
        strict: true,
        schema: jsonModeTurnSchema(["Finding", "DeadEnd"]).schema,
      },
    });
    const system = (body.messages as { content: string }[])[0]?.content ?? "";
    // The tools are described in the prompt, by registry name.
    expect(system).toContain("math.add");
    expect(r.candidate).toEqual({
      kind: "tool_calls",
      summary: "add them",
      tool_calls: [{ name: "math.add", arguments_json: '{"a":1,"b":2}' }],
      message: null,
    });
  });

  it("runs a passage: tool results go back as a user message", async () => {
    const m = await model(
      [fixture("openai/json-schema"), fixture("openai/json-schema-message")],
      "json_schema",
      true,
    );
    const out = await runPassage({
      role: "implementer",
      agentId: "agent:a1",
      system: "You add numbers.",
      evidence: "Add 1 and 2.",
      registry: addRegistry(),
      toolHost: addHost(),
      provider: m,
      limits: { maxTurns: 5, maxTokens: 100_000 },
    });
    expect(out.ok).toBe(true);
    const second = (server as WireServer).requests[1]?.body.messages as {
      role: string;
      content: string;
    }[];
    expect(second.map((x) => x.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(second[3]?.content).toContain('"content":"3"');
  });
});

describe("openai adapter in a passage", () => {
  it("feeds tool results back by call id and ends on the message tool", async () => {
    const m = await model([fixture("openai/tool-calls"), fixture("openai/message-tool")]);
    const host = addHost();
    const out = await runPassage({
      role: "implementer",
      agentId: "agent:a1",
      system: "You add numbers.",
      evidence: "Add 1 and 2.",
      registry: addRegistry(),
      toolHost: host,
      provider: m,
      limits: { maxTurns: 5, maxTokens: 100_000 },
    });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.message.type).toBe("Finding");
    expect(host.calls).toEqual([{ name: "math.add", args: { a: 1, b: 2 } }]);
    const messages = (server as WireServer).requests[1]?.body.messages as Record<string, unknown>[];
    expect(messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_62136354",
            type: "function",
            function: { name: "math__add", arguments: '{"a":1,"b":2}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_62136354", content: "3" },
    ]);
    expect(out.transcript.usage).toMatchObject({ inputTokens: 422, outputTokens: 58 });
  });

  it("repairs malformed argument JSON: the errors go back on the call's tool message", async () => {
    const m = await model([fixture("openai/malformed-arguments"), fixture("openai/message-tool")]);
    const out = await runPassage({
      role: "implementer",
      agentId: "agent:a1",
      system: "s",
      evidence: "e",
      registry: addRegistry(),
      toolHost: addHost(),
      provider: m,
      limits: { maxTurns: 5, maxTokens: 100_000 },
    });
    expect(out.ok).toBe(true);
    const messages = (server as WireServer).requests[1]?.body.messages as Record<string, unknown>[];
    const toolMessage = messages[3] as { role: string; tool_call_id: string; content: string };
    expect(toolMessage.role).toBe("tool");
    expect(toolMessage.tool_call_id).toBe("call_local_0");
    expect(toolMessage.content).toContain("turn/arguments-not-object");
    expect(out.transcript.entries[0]).toMatchObject({
      validation: {
        valid: false,
        errors: [expect.objectContaining({ code: "turn/arguments-not-object" })],
      },
    });
  });

  it("a rejected turn with several calls answers every call id, none executed", async () => {
    const two = fixture("openai/tool-calls") as WireReply & {
      body: { choices: { message: { tool_calls: unknown[] } }[] };
    };
    const message = (two.body.choices[0] as { message: { tool_calls: unknown[] } }).message;
    message.tool_calls.push({
      id: "call_2",
      type: "function",
      function: { name: "math__mul", arguments: '{"a":2,"b":3}' },
    });
    const m = await model([two, fixture("openai/message-tool")]);
    const host = addHost();
    const out = await runPassage({
      role: "implementer",
      agentId: "agent:a1",
      system: "s",
      evidence: "e",
      registry: addRegistry(),
      toolHost: host,
      provider: m,
      limits: { maxTurns: 5, maxTokens: 100_000 },
    });
    expect(out.ok).toBe(true);
    expect(host.calls).toEqual([]);
    const messages = (server as WireServer).requests[1]?.body.messages as {
      role: string;
      tool_call_id?: string;
      content: string;
    }[];
    expect(messages.slice(3).map((x) => [x.role, x.tool_call_id])).toEqual([
      ["tool", "call_62136354"],
      ["tool", "call_2"],
    ]);
    expect(messages[3]?.content).toContain("turn/unknown-tool");
    expect(messages[4]?.content).toMatch(/^Not executed/);
  });

  it("a refusal ends the passage after one call", async () => {
    const m = await model([fixture("openai/refusal"), fixture("openai/message-tool")]);
    const out = await runPassage({
      role: "implementer",
      agentId: "agent:a1",
      system: "s",
      evidence: "e",
      registry: addRegistry(),
      toolHost: addHost(),
      provider: m,
      limits: { maxTurns: 5, maxTokens: 100_000 },
    });
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.code).toBe("turn/refusal");
    expect((server as WireServer).requests).toHaveLength(1);
  });

  it("a truncated answer ends the passage after one call", async () => {
    const m = await model([fixture("openai/truncated"), fixture("openai/message-tool")]);
    const registry = createToolRegistry([ADD]);
    if (!registry.ok) throw new Error("registry");
    const out = await runPassage({
      role: "implementer",
      agentId: "agent:a1",
      system: "s",
      evidence: "e",
      registry: registry.value,
      toolHost: addHost(),
      provider: m,
      limits: { maxTurns: 5, maxTokens: 100_000 },
    });
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.code).toBe("turn/truncated");
    expect((server as WireServer).requests).toHaveLength(1);
  });
});
