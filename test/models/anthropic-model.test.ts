// The Anthropic adapter against a local server speaking the Messages wire format.
import { afterEach, describe, expect, it } from "vitest";
import { createAnthropicModel } from "../../src/adapters/models/anthropic-model.js";
import type { ConversationEntry, ModelRequest } from "../../src/core/ports/model-provider.js";
import { WarrantError } from "../../src/core/result.js";
import { providerPayloadSchema } from "../../src/core/turn/provider-payload-schema.js";
import { runPassage } from "../../src/runtime/passage.js";
import { ADD, addHost, addRegistry } from "../passage/helpers.js";
import { tokens } from "./tokens.js";
import { fixture, startWireServer, type WireReply, type WireServer } from "./wire-server.js";

const KEY = "sk-ant-api03-test-9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c";

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function model(replies: readonly WireReply[]) {
  server = await startWireServer(replies);
  return createAnthropicModel({ model: "claude-sonnet-4-5", apiKey: KEY, baseURL: server.url });
}

function request(): ModelRequest {
  const conversation: ConversationEntry[] = [{ kind: "user", text: "Add 1 and 2." }];
  return {
    role: "adversarial-critic",
    system: "You add numbers.",
    conversation,
    length: 1,
    tools: [ADD],
    messageTypes: ["Finding", "DeadEnd"],
    maxOutputTokens: 512,
  };
}

/**
 * The key travels in the one credential header the SDK uses (`x-api-key`, or a bearer
 * `authorization` in this SDK line) and in no other header and no body.
 */
function expectKeyOnlyInAuthHeader(s: WireServer): void {
  expect(s.requests.length).toBeGreaterThan(0);
  for (const r of s.requests) {
    const { "x-api-key": apiKey, authorization, ...rest } = r.headers;
    expect([apiKey, authorization]).toContain(apiKey === undefined ? `Bearer ${KEY}` : KEY);
    expect(JSON.stringify(rest)).not.toContain(KEY);
    expect(r.rawBody).not.toContain(KEY);
  }
}

function passage(provider: ReturnType<typeof createAnthropicModel>) {
  const host = addHost();
  return {
    host,
    run: () =>
      runPassage({
        role: "implementer",
        agentId: "agent:a1",
        system: "You add numbers.",
        evidence: "Add 1 and 2.",
        registry: addRegistry(),
        toolHost: host,
        provider,
        limits: { maxTurns: 5, maxTokens: 100_000 },
      }),
  };
}

describe("anthropic adapter", () => {
  it("sends encoded tools, one message tool per type with its payload schema, and tool_choice any", async () => {
    const m = await model([fixture("anthropic/tool-use")]);
    await m.complete(request());
    const s = server as WireServer;
    const r = s.requests[0];
    expect(r?.path).toBe("/v1/messages");
    expect(r?.headers["anthropic-version"]).toBeDefined();
    const body = r?.body as Record<string, unknown>;
    expect(body.model).toBe("claude-sonnet-4-5");
    expect(body.max_tokens).toBe(512);
    expect(body.tool_choice).toEqual({ type: "any" });
    expect(body.system).toContain("You add numbers.");
    expect(body.messages).toEqual([{ role: "user", content: "Add 1 and 2." }]);
    expect(body.tools).toEqual([
      { name: "math__add", description: ADD.description, input_schema: ADD.inputSchema },
      {
        name: "Finding",
        description: expect.stringContaining("finding"),
        input_schema: providerPayloadSchema("Finding"),
      },
      {
        name: "DeadEnd",
        description: expect.stringContaining("no way forward"),
        input_schema: providerPayloadSchema("DeadEnd"),
      },
    ]);
    // The severity values travel in the schema; the critic's rule for them in the system prompt.
    expect(JSON.stringify(body.tools)).toContain(
      '"enum":["info","low","medium","high","critical"]',
    );
    expect(body.system).toContain('A Finding of severity "high" or "critical"');
    expectKeyOnlyInAuthHeader(s);
  });

  it("parses tool_use blocks and the text beside them", async () => {
    const m = await model([fixture("anthropic/tool-use")]);
    const r = await m.complete(request());
    expect(r.stop).toBe("complete");
    expect(r.candidate).toEqual({
      kind: "tool_calls",
      summary: "I'll add the two numbers.",
      tool_calls: [{ name: "math.add", arguments_json: '{"a":1,"b":2}' }],
      message: null,
    });
    expect(r.usage).toEqual(tokens(402, 61));
    expect(r.meta).toEqual({
      id: "msg_01Aq9w938a90dw8q",
      model: "claude-sonnet-4-5-20250929",
      finishReason: "tool_use",
    });
  });

  it("counts cached input tokens as input, and reports the cache reads as cached", async () => {
    const m = await model([fixture("anthropic/message-tool")]);
    const r = await m.complete(request());
    expect(r.usage).toEqual(tokens(608, 73, 120));
  });

  it("charges nothing for usage counts that are not counts", async () => {
    const odd = fixture("anthropic/tool-use") as WireReply & { body: Record<string, unknown> };
    odd.body.usage = { input_tokens: "402", output_tokens: -5, cache_read_input_tokens: 1.5 };
    odd.body.id = 7;
    const m = await model([odd]);
    const r = await m.complete(request());
    expect(r.usage).toEqual(tokens(0, 0));
    expect(r.meta.id).toBeNull();
  });

  it('reports stop_reason "refusal" and "max_tokens" as refusal and truncation', async () => {
    const m = await model([fixture("anthropic/refusal"), fixture("anthropic/truncated")]);
    expect((await m.complete(request())).stop).toBe("refusal");
    expect((await m.complete(request())).stop).toBe("truncated");
  });

  it("retries 429 and 500 honouring retry-after", async () => {
    const m = await model([
      fixture("anthropic/rate-limited"),
      fixture("anthropic/server-error"),
      fixture("anthropic/tool-use"),
    ]);
    const r = await m.complete(request());
    expect(r.stop).toBe("complete");
    const s = server as WireServer;
    expect(s.requests).toHaveLength(3);
    expect((s.requests[1]?.at ?? 0) - (s.requests[0]?.at ?? 0)).toBeGreaterThanOrEqual(35);
    expectKeyOnlyInAuthHeader(s);
  });

  it("gives up after its retries with model/unavailable", async () => {
    const err = fixture("anthropic/server-error");
    const m = await model([err, err, err, err]);
    const e = (await m.complete(request()).catch((x: unknown) => x)) as WarrantError;
    expect(e).toBeInstanceOf(WarrantError);
    expect(e.code).toBe("model/unavailable");
    expect((server as WireServer).requests).toHaveLength(3);
  });

  it("never lets an echoed key into an error", async () => {
    const m = await model([fixture("anthropic/invalid-key")]);
    const e = (await m.complete(request()).catch((x: unknown) => x)) as WarrantError;
    expect(e.code).toBe("model/auth");
    expect(e.message).toContain("[redacted]");
    expect(`${e.message} ${e.stack} ${JSON.stringify(e)}`).not.toContain(KEY);
  });
});

describe("anthropic adapter in a passage", () => {
  it("returns tool results as tool_result blocks and ends on the message tool", async () => {
    const m = await model([fixture("anthropic/tool-use"), fixture("anthropic/message-tool")]);
    const { host, run } = passage(m);
    const out = await run();
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.message).toEqual({
      type: "Finding",
      payload: { severity: "info", claim: "1 + 2 = 3", evidence: ["math.add returned 3"] },
      paperRef: null,
    });
    expect(host.calls).toEqual([{ name: "math.add", args: { a: 1, b: 2 } }]);
    const messages = (server as WireServer).requests[1]?.body.messages as Record<string, unknown>[];
    expect(messages).toHaveLength(3);
    expect(messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "text", text: "I'll add the two numbers." },
        {
          type: "tool_use",
          id: "toolu_01A09q90qw90lq917835lq9",
          name: "math__add",
          input: { a: 1, b: 2 },
        },
      ],
    });
    expect(messages[2]).toEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_01A09q90qw90lq917835lq9",
          content: "3",
          is_error: false,
        },
      ],
    });
  });

  it("repairs an invalid payload: the errors, naming each fault, go back as an error tool_result", async () => {
    const m = await model([
      fixture("anthropic/malformed-payload"),
      fixture("anthropic/message-tool"),
    ]);
    const out = await passage(m).run();
    expect(out.ok).toBe(true);
    const messages = (server as WireServer).requests[1]?.body.messages as {
      role: string;
      content: { type: string; tool_use_id: string; content: string; is_error: boolean }[];
    }[];
    const block = messages[2]?.content[0];
    expect(block).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_01Mq3e8YvB6nT2wXc9Pk4Lz",
      is_error: true,
    });
    expect(block?.content).toContain("turn/payload-invalid");
    expect(block?.content).toContain('the Finding payload: (root): unknown property "bogus"');
    expect(block?.content).toContain(
      'the Finding payload: /severity: "huge" is not one of info, low, medium, high, critical',
    );
  });

  it("a refusal ends the passage after one call", async () => {
    const m = await model([fixture("anthropic/refusal"), fixture("anthropic/message-tool")]);
    const out = await passage(m).run();
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.code).toBe("turn/refusal");
    expect((server as WireServer).requests).toHaveLength(1);
  });

  it("a truncated answer ends the passage after one call", async () => {
    const m = await model([fixture("anthropic/truncated"), fixture("anthropic/message-tool")]);
    const out = await passage(m).run();
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.code).toBe("turn/truncated");
    expect((server as WireServer).requests).toHaveLength(1);
  });
});
