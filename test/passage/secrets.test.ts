// Keys come from the environment and reach only the provider's auth header: never a transcript,
// an event, a log line, an error or an exported span (content captured or not), on the success
// path, the repair path and the failure path.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createModelFromUri } from "../../src/adapters/models/model-uri.js";
import { runPassage } from "../../src/runtime/passage.js";
import { transcriptRecord } from "../../src/runtime/passage-transcript.js";
import {
  fixture,
  startWireServer,
  type WireReply,
  type WireServer,
} from "../models/wire-server.js";
import { tracedPassage } from "../telemetry/traced-passage.js";
import { addHost, addRegistry } from "./helpers.js";

const OPENAI_KEY = "sk-proj-SECRET-1b7e4c9d2a5f8e3b6c1d4a7e0f3b6c9d";
const ANTHROPIC_KEY = "sk-ant-api03-SECRET-7c2e9a4b1d6f3e8a5c0b7d2e9f4a1c6b";
const ENV_NAMES = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"];

let server: WireServer | undefined;
let saved: Record<string, string | undefined> = {};
let logged: string[] = [];

beforeEach(() => {
  saved = Object.fromEntries(ENV_NAMES.map((n) => [n, process.env[n]]));
  process.env.OPENAI_API_KEY = OPENAI_KEY;
  process.env.ANTHROPIC_API_KEY = ANTHROPIC_KEY;
  logged = [];
  const capture = (...args: unknown[]) => {
    logged.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
  };
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, method).mockImplementation(capture);
  }
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, "write").mockImplementation((chunk: unknown, ...rest: unknown[]) => {
      logged.push(String(chunk));
      return (write as (c: unknown, ...r: unknown[]) => boolean)(chunk, ...rest);
    });
  }
});

afterEach(async () => {
  vi.restoreAllMocks();
  for (const n of ENV_NAMES) {
    if (saved[n] === undefined) delete process.env[n];
    else process.env[n] = saved[n];
  }
  await server?.close();
  server = undefined;
});

async function passageWith(
  uri: string,
  replies: readonly WireReply[],
  baseEnv: string,
  path: string,
) {
  server = await startWireServer(replies);
  process.env[baseEnv] = `${server.url}${path}`;
  const provider = createModelFromUri(uri, { env: process.env, maxRetries: 1 });
  if (!provider.ok) throw new Error(JSON.stringify(provider.errors));
  const events: unknown[] = [];
  const outcome = await runPassage({
    role: "implementer",
    agentId: "agent:a1",
    system: "You add numbers.",
    evidence: "Add 1 and 2.",
    registry: addRegistry(),
    toolHost: addHost(),
    provider: provider.value,
    limits: { maxTurns: 6, maxTokens: 100_000 },
    onEvent: (e) => events.push(e),
  });
  return { outcome, events, id: provider.value.id };
}

function expectNowhere(key: string, ...things: unknown[]): void {
  for (const t of things) expect(JSON.stringify(t) ?? "").not.toContain(key);
  for (const line of logged) expect(line).not.toContain(key);
}

describe("keys never leave the auth header", () => {
  it("openai: a passage with a repair and tool calls", async () => {
    const { outcome, events, id } = await passageWith(
      "openai:gpt-4.1",
      [
        fixture("openai/malformed-arguments"),
        fixture("openai/rate-limited"),
        fixture("openai/tool-calls"),
        fixture("openai/message-tool"),
      ],
      "OPENAI_BASE_URL",
      "/v1",
    );
    expect(outcome.ok).toBe(true);
    const s = server as WireServer;
    expect(s.requests).toHaveLength(4);
    for (const r of s.requests) expect(r.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expectNowhere(OPENAI_KEY, outcome, transcriptRecord("query:q", outcome.transcript), events, id);
  });

  it("openai: a key echoed by the server is kept out of the failure", async () => {
    const { outcome, events } = await passageWith(
      "openai:gpt-4.1",
      [fixture("openai/invalid-key")],
      "OPENAI_BASE_URL",
      "/v1",
    );
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.code).toBe("model/auth");
    // The server did echo it: the failure would carry it without redaction.
    expect((server as WireServer).requests).toHaveLength(1);
    expectNowhere(OPENAI_KEY, outcome, events);
  });

  it("anthropic: a passage with a repair and tool calls", async () => {
    const { outcome, events } = await passageWith(
      "anthropic:claude-sonnet-4-5",
      [
        fixture("anthropic/malformed-payload"),
        fixture("anthropic/server-error"),
        fixture("anthropic/tool-use"),
        fixture("anthropic/message-tool"),
      ],
      "ANTHROPIC_BASE_URL",
      "",
    );
    expect(outcome.ok).toBe(true);
    expect((server as WireServer).requests).toHaveLength(4);
    expectNowhere(ANTHROPIC_KEY, outcome, transcriptRecord("query:q", outcome.transcript), events);
  });

  it("anthropic: a key echoed by the server is kept out of the failure", async () => {
    const { outcome } = await passageWith(
      "anthropic:claude-sonnet-4-5",
      [fixture("anthropic/invalid-key")],
      "ANTHROPIC_BASE_URL",
      "",
    );
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.code).toBe("model/auth");
      expect(outcome.message).toContain("[redacted]");
    }
    expectNowhere(ANTHROPIC_KEY, outcome);
  });

  it("openai: spans exported with every prompt and answer captured carry no key", async () => {
    server = await startWireServer([
      fixture("openai/malformed-arguments"),
      fixture("openai/rate-limited"),
      fixture("openai/tool-calls"),
      fixture("openai/message-tool"),
    ]);
    process.env.OPENAI_BASE_URL = `${server.url}/v1`;
    const provider = createModelFromUri("openai:gpt-4.1", { env: process.env, maxRetries: 1 });
    if (!provider.ok) throw new Error(JSON.stringify(provider.errors));
    const traced = await tracedPassage(provider.value, { captureContent: true });
    expect(traced.outcome.ok).toBe(true);
    // The content went out (so the key could have): the messages, the tool call and its result.
    expect(traced.exported).toContain("gen_ai.input.messages");
    expect(traced.exported).toContain("gen_ai.tool.call.result");
    expect(
      traced.receiver.spans.some((s) => s.events.some((e) => e.name === "warrant.repair")),
    ).toBe(true);
    expectNowhere(OPENAI_KEY, traced.exported, traced.warnings);
  });

  it("anthropic: a key echoed by the server stays out of the exported failure", async () => {
    server = await startWireServer([fixture("anthropic/invalid-key")]);
    process.env.ANTHROPIC_BASE_URL = server.url;
    const provider = createModelFromUri("anthropic:claude-sonnet-4-5", {
      env: process.env,
      maxRetries: 1,
    });
    if (!provider.ok) throw new Error(JSON.stringify(provider.errors));
    const traced = await tracedPassage(provider.value, { captureContent: true });
    expect(traced.outcome.ok).toBe(false);
    // The failure was exported, with its (redacted) message.
    const agent = traced.receiver.spans.find((s) => s.name === "invoke_agent implementer");
    expect(agent?.attributes["error.type"]).toBe("model/auth");
    expect(agent?.status.message).toContain("[redacted]");
    expectNowhere(ANTHROPIC_KEY, traced.exported, traced.warnings);
  });
});
