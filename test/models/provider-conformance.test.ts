// One conversation, every provider adapter: each model URI (openai, openai-compatible in tool and
// JSON mode, anthropic, scripted) runs the same two passages through its real SDK against the local
// wire server. The implementer reads a file, emits a Plan with an unknown step property (repaired),
// then a valid Plan with a patch; the reviewer emits a Verdict with a decision outside the enum
// (repaired), then a valid one. Asserted for each: the request bodies carry the payload schemas and
// the role's rules, the repairs name the fault, and usage is kept per call and summed.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createModelFromUri } from "../../src/adapters/models/model-uri.js";
import type { ScriptedModel } from "../../src/adapters/models/scripted-model.js";
import type { Role } from "../../src/core/loop/types.js";
import { messageTools } from "../../src/core/turn/message-tools.js";
import type { ModelProvider } from "../../src/core/turn/model-provider.js";
import { providerPayloadSchema, strictForm } from "../../src/core/turn/provider-payload-schema.js";
import { encodeToolName } from "../../src/core/turn/provider-schema.js";
import { toolAnswer } from "../../src/core/turn/tool-host.js";
import { createToolRegistry, type ToolSpec } from "../../src/core/turn/tool-registry.js";
import { type MessageType, ROLE_MESSAGE_TYPES } from "../../src/core/turn/types.js";
import { runPassage } from "../../src/runtime/passage.js";
import { SLUGIFY_DIFF } from "../taskpack/fixtures.js";
import { startWireServer, type WireReply, type WireServer } from "./wire-server.js";

const OPENAI_KEY = "sk-conformance-openai-5d1c7a9e";
const ANTHROPIC_KEY = "sk-ant-conformance-2b8f4e6a";

const READ_FILE: ToolSpec = {
  name: "workspace.read_file",
  description: "Read a workspace file",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["path"],
    properties: { path: { type: "string" } },
  },
  effect: "observation",
};

const FILE_TEXT = "export function slugify(s) {\n  return s.toLowerCase();\n}\n";

const PLAN = {
  hypothesis: "slugify does not replace spaces",
  steps: [
    { id: "s1", action: "observe", read: ["src/slugify.js"] },
    { id: "s2", action: "patch", path: "src/slugify.js", diff: SLUGIFY_DIFF },
  ],
};
const BAD_PLAN = {
  ...PLAN,
  steps: [PLAN.steps[0], { ...PLAN.steps[1], bogus: true }],
};
const VERDICT = {
  decision: "accept",
  findings: [
    { severity: "info", claim: "the patch fixes the cause", evidence: ["src/slugify.js:2"] },
  ],
};
const BAD_VERDICT = { ...VERDICT, decision: "approve" };

const PLAN_FAULT = 'the Plan payload: /steps/1: unknown property "bogus"';
const VERDICT_FAULT =
  'the Verdict payload: /decision: "approve" is not one of accept, reject, request-regeneration';

interface Usage {
  readonly input: number;
  readonly output: number;
  readonly cached: number;
  readonly reasoning: number;
}

/** One answer of the conversation, in no provider's spelling. */
type Answer =
  | { readonly call: string; readonly args: object; readonly usage: Usage }
  | { readonly message: MessageType; readonly payload: object; readonly usage: Usage };

const IMPLEMENTER: readonly Answer[] = [
  { call: READ_FILE.name, args: { path: "src/slugify.js" }, usage: u(900, 40, 0, 10) },
  { message: "Plan", payload: BAD_PLAN, usage: u(1100, 220, 896, 30) },
  { message: "Plan", payload: PLAN, usage: u(1400, 210, 1024, 0) },
];
const REVIEWER: readonly Answer[] = [
  { message: "Verdict", payload: BAD_VERDICT, usage: u(700, 60, 0, 12) },
  { message: "Verdict", payload: VERDICT, usage: u(820, 64, 512, 0) },
];

function u(input: number, output: number, cached: number, reasoning: number): Usage {
  return { input, output, cached, reasoning };
}

function sum(answers: readonly Answer[], reasoningReported: boolean) {
  const total = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 };
  for (const a of answers) {
    total.inputTokens += a.usage.input;
    total.outputTokens += a.usage.output;
    total.cachedInputTokens += a.usage.cached;
    total.reasoningTokens += reasoningReported ? a.usage.reasoning : 0;
  }
  return total;
}

/** The wire spelling of one answer, and the payload schemas a request body carries. */
interface Adapter {
  readonly name: string;
  /** `(server URL) → model URI`. */
  uri(url: string): string;
  reply(answer: Answer, n: number): WireReply;
  /** Type → payload schema, as the request body carries them. */
  payloadSchemas(body: Record<string, unknown>): Record<string, unknown>;
  /** The schema each message type is expected to be sent with. */
  expectedSchema(type: MessageType, role: Role): unknown;
  system(body: Record<string, unknown>): string;
  /** Whether the provider reports reasoning tokens apart. */
  readonly reasoningReported: boolean;
}

function openaiUsage(x: Usage) {
  return {
    prompt_tokens: x.input,
    completion_tokens: x.output,
    total_tokens: x.input + x.output,
    prompt_tokens_details: { cached_tokens: x.cached },
    completion_tokens_details: { reasoning_tokens: x.reasoning },
  };
}

function completion(n: number, message: object, finish: string, usage: Usage): WireReply {
  return {
    status: 200,
    body: {
      id: `chatcmpl-conf-${n}`,
      object: "chat.completion",
      created: 1_764_000_000 + n,
      model: "served-model-2026",
      choices: [
        {
          index: 0,
          message: { role: "assistant", refusal: null, ...message },
          finish_reason: finish,
        },
      ],
      usage: openaiUsage(usage),
    },
  };
}

function openaiTools(name: string, uri: (url: string) => string): Adapter {
  return {
    name,
    uri,
    reasoningReported: true,
    reply(a, n) {
      const [fn, args] = "call" in a ? [encodeToolName(a.call), a.args] : [a.message, a.payload];
      const call = {
        id: `call_${n}`,
        type: "function",
        function: { name: fn, arguments: JSON.stringify(args) },
      };
      return completion(n, { content: null, tool_calls: [call] }, "tool_calls", a.usage);
    },
    payloadSchemas(body) {
      const tools = body.tools as { function: { name: string; parameters: unknown } }[];
      return Object.fromEntries(tools.map((t) => [t.function.name, t.function.parameters]));
    },
    expectedSchema(type, role) {
      const tool = messageTools(ROLE_MESSAGE_TYPES[role]).find((t) => t.name === type);
      return tool?.strictSchema ?? tool?.schema;
    },
    system: (body) => (body.messages as { content: string }[])[0]?.content ?? "",
  };
}

/** An answer as one whole turn (JSON mode, scripted), the payload spelled by `payload`. */
function wholeTurn(a: Answer, payload: (p: object) => object): object {
  return "call" in a
    ? {
        kind: "tool_calls",
        summary: "look",
        tool_calls: [{ name: a.call, arguments_json: JSON.stringify(a.args) }],
        message: null,
      }
    : {
        kind: "message",
        summary: "done",
        tool_calls: [],
        message: { type: a.message, ...payload(a.payload), paper_ref: null },
      };
}

const ADAPTERS: readonly Adapter[] = [
  openaiTools("openai", () => "openai:gpt-4.1"),
  openaiTools("openai-compatible, tool mode", (url) => `openai-compatible:${url}/v1#served-model`),
  {
    name: "openai-compatible, JSON mode",
    uri: (url) => `openai-compatible:${url}/v1#served-model?mode=json_schema`,
    reasoningReported: true,
    reply(a, n) {
      const turn = wholeTurn(a, (payload) => ({ payload }));
      return completion(n, { content: JSON.stringify(turn) }, "stop", a.usage);
    },
    payloadSchemas(body) {
      const format = body.response_format as { json_schema: { schema: Record<string, unknown> } };
      const message = (format.json_schema.schema.properties as Record<string, { anyOf: object[] }>)
        .message;
      return Object.fromEntries(
        (message?.anyOf ?? []).flatMap((b) => {
          const props = (b as { properties?: { type: { const: string }; payload: unknown } })
            .properties;
          return props === undefined ? [] : [[props.type.const, props.payload]];
        }),
      );
    },
    expectedSchema(type, role) {
      const strict = ROLE_MESSAGE_TYPES[role].every((t) => t !== "Plan");
      return strict ? strictForm(providerPayloadSchema(type)) : providerPayloadSchema(type);
    },
    system: (body) => (body.messages as { content: string }[])[0]?.content ?? "",
  },
  {
    name: "anthropic",
    uri: () => "anthropic:claude-sonnet-4-5",
    reasoningReported: false,
    reply(a, n) {
      const [name, input] = "call" in a ? [encodeToolName(a.call), a.args] : [a.message, a.payload];
      return {
        status: 200,
        body: {
          id: `msg_conf_${n}`,
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5-20250929",
          content: [{ type: "tool_use", id: `toolu_${n}`, name, input }],
          stop_reason: "tool_use",
          stop_sequence: null,
          usage: {
            input_tokens: a.usage.input - a.usage.cached,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: a.usage.cached,
            output_tokens: a.usage.output,
          },
        },
      };
    },
    payloadSchemas(body) {
      const tools = body.tools as { name: string; input_schema: unknown }[];
      return Object.fromEntries(tools.map((t) => [t.name, t.input_schema]));
    },
    expectedSchema: (type) => providerPayloadSchema(type),
    system: (body) => String(body.system),
  },
];

/** The scripted answers: seed turns, with the same usage. */
function scriptLine(a: Answer): object {
  return {
    turn: wholeTurn(a, (payload) => ({ payload_json: JSON.stringify(payload) })),
    usage: a.usage,
  };
}

const dirs: string[] = [];
let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function provider(uri: string, url: string): ModelProvider {
  const made = createModelFromUri(uri, {
    env: {
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: `${url}/v1`,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: url,
    },
    maxRetries: 0,
  });
  if (!made.ok) throw new Error(JSON.stringify(made.errors));
  return made.value;
}

async function passage(role: Role, model: ModelProvider) {
  const registry = createToolRegistry([READ_FILE]);
  if (!registry.ok) throw new Error("registry");
  const calls: unknown[] = [];
  const outcome = await runPassage({
    role,
    agentId: `agent:${role}`,
    system: `You are the ${role}.`,
    evidence: "Task: slugify must replace spaces with dashes.",
    registry: registry.value,
    toolHost: {
      call: async (name, args) => {
        calls.push({ name, args });
        return toolAnswer(FILE_TEXT);
      },
    },
    provider: model,
    limits: { maxTurns: 6, maxTokens: 1_000_000 },
  });
  return { outcome, calls };
}

/** What both passages must show, whatever the adapter. */
async function converse(implementer: ModelProvider, reviewer: ModelProvider) {
  const impl = await passage("implementer", implementer);
  expect(impl.outcome.ok, JSON.stringify(impl.outcome)).toBe(true);
  if (!impl.outcome.ok) throw new Error("implementer failed");
  expect(impl.outcome.message).toEqual({ type: "Plan", payload: PLAN, paperRef: null });
  expect(impl.calls).toEqual([{ name: READ_FILE.name, args: { path: "src/slugify.js" } }]);
  const t = impl.outcome.transcript;
  expect(t.entries.map((e) => e.kind)).toEqual([
    "model-call",
    "tool-call",
    "model-call",
    "model-call",
  ]);
  expect(t.entries[2]).toMatchObject({
    validation: { valid: false, errors: [expect.objectContaining({ message: PLAN_FAULT })] },
  });
  expect(t.usage.repairs).toBe(1);

  const rev = await passage("reviewer", reviewer);
  expect(rev.outcome.ok, JSON.stringify(rev.outcome)).toBe(true);
  if (!rev.outcome.ok) throw new Error("reviewer failed");
  expect(rev.outcome.message).toEqual({ type: "Verdict", payload: VERDICT, paperRef: null });
  expect(rev.outcome.transcript.entries[0]).toMatchObject({
    validation: { valid: false, errors: [expect.objectContaining({ message: VERDICT_FAULT })] },
  });
  return { implementer: impl.outcome.transcript, reviewer: rev.outcome.transcript };
}

/** Each model call's usage, as the transcript keeps it. */
function perCall(transcript: { entries: readonly { kind: string; usage?: unknown }[] }) {
  return transcript.entries.filter((e) => e.kind === "model-call").map((e) => e.usage);
}

describe.each(ADAPTERS)("provider conformance: $name", (adapter) => {
  it("carries the payload schemas and the role's rules, names the faults, sums the usage", async () => {
    const replies = [...IMPLEMENTER, ...REVIEWER].map((a, i) => adapter.reply(a, i));
    server = await startWireServer(replies);
    const url = server.url;
    const model = provider(adapter.uri(url), url);
    const { implementer, reviewer } = await converse(model, model);
    const bodies = server.requests.map((r) => r.body);
    expect(bodies).toHaveLength(5);

    // The implementer's first request: the Plan schema (its property names and step actions) and
    // the DeadEnd, Question and Finding schemas, as this provider takes them.
    const first = adapter.payloadSchemas(bodies[0] as Record<string, unknown>);
    for (const type of ROLE_MESSAGE_TYPES.implementer) {
      expect(first[type], type).toEqual(adapter.expectedSchema(type, "implementer"));
    }
    const plan = JSON.stringify(first.Plan);
    for (const name of [
      "hypothesis",
      "steps",
      "expected_checks",
      "action",
      "read",
      "path",
      "diff",
      "content",
    ]) {
      expect(plan).toContain(`"${name}"`);
    }
    expect(plan).toContain('"enum":["observe","patch","command"]');
    expect(first).not.toHaveProperty("Verdict");
    const implSystem = adapter.system(bodies[0] as Record<string, unknown>);
    expect(implSystem).toContain("You are the implementer.");
    expect(implSystem).toContain('The first step is an observation: action "observe".');
    expect(implSystem).toContain("Exactly one message ends the passage");

    // The request after the bad Plan carries the repair, naming the fault.
    expect(JSON.stringify(bodies[2])).toContain(JSON.stringify(PLAN_FAULT).slice(1, -1));
    // The reviewer's first request: the Verdict schema with its decision values.
    const third = adapter.payloadSchemas(bodies[3] as Record<string, unknown>);
    expect(Object.keys(third)).toEqual(expect.arrayContaining(["Verdict", "Question", "Finding"]));
    expect(third.Verdict).toEqual(adapter.expectedSchema("Verdict", "reviewer"));
    expect(JSON.stringify(third.Verdict)).toContain(
      '"enum":["accept","reject","request-regeneration"]',
    );
    expect(adapter.system(bodies[3] as Record<string, unknown>)).toContain(
      '"reject": the proposal is refused',
    );
    expect(JSON.stringify(bodies[4])).toContain(JSON.stringify(VERDICT_FAULT).slice(1, -1));

    // Usage: the provider's own counts per call, summed per passage.
    const reported = adapter.reasoningReported;
    expect(perCall(implementer)).toEqual(IMPLEMENTER.map((a) => sum([a], reported)));
    expect(implementer.usage).toMatchObject(sum(IMPLEMENTER, reported));
    expect(reviewer.usage).toMatchObject(sum(REVIEWER, reported));
    const ids = implementer.entries.flatMap((e) =>
      e.kind === "model-call" ? [e.response.id] : [],
    );
    expect(new Set(ids).size).toBe(3);
    expect(ids.every((id) => typeof id === "string")).toBe(true);
    const last = implementer.entries.at(-1);
    expect(last?.kind === "model-call" ? last.response : undefined).toMatchObject({
      model: expect.stringMatching(/./),
      finishReason: expect.stringMatching(/^(tool_calls|stop|tool_use)$/),
    });
  });
});

describe("provider conformance: scripted", () => {
  it("the same conversation: repairs name the faults, usage summed; the request names role and types", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-conformance-"));
    dirs.push(dir);
    const script = (answers: readonly Answer[], name: string) => {
      const file = path.join(dir, `${name}.jsonl`);
      writeFileSync(file, answers.map((a) => JSON.stringify(scriptLine(a))).join("\n"));
      return provider(`scripted:${file}`, "http://127.0.0.1:1") as ScriptedModel;
    };
    const implementer = script(IMPLEMENTER, "implementer");
    const reviewer = script(REVIEWER, "reviewer");
    const out = await converse(implementer, reviewer);
    // The scripted model has no wire body: what it is handed is the request every adapter derives
    // the payload schemas from (the role and its message types).
    expect(implementer.requests[0]).toMatchObject({
      role: "implementer",
      messageTypes: ROLE_MESSAGE_TYPES.implementer,
    });
    expect(reviewer.requests[0]).toMatchObject({
      role: "reviewer",
      messageTypes: ROLE_MESSAGE_TYPES.reviewer,
    });
    const repair = implementer.requests[2]?.conversation[4];
    expect(repair).toMatchObject({ kind: "repair", text: expect.stringContaining(PLAN_FAULT) });
    expect(reviewer.requests[1]?.conversation[2]).toMatchObject({
      kind: "repair",
      text: expect.stringContaining(VERDICT_FAULT),
    });
    expect(perCall(out.implementer)).toEqual(IMPLEMENTER.map((a) => sum([a], true)));
    expect(out.implementer.usage).toMatchObject(sum(IMPLEMENTER, true));
    expect(out.reviewer.usage).toMatchObject(sum(REVIEWER, true));
  });
});
