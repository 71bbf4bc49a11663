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
import type { ScriptedModel } from "../../src/adapters/models/scripted-model.js";
import type { Role } from "../../src/core/loop/types.js";
import type { ModelProvider } from "../../src/core/ports/model-provider.js";
import { toolAnswer } from "../../src/core/ports/tool-host.js";
import { createToolRegistry, type ToolSpec } from "../../src/core/turn/tool-registry.js";
import { ROLE_MESSAGE_TYPES } from "../../src/core/turn/types.js";
import { runPassage } from "../../src/runtime/passage.js";
import { SLUGIFY_DIFF } from "../taskpack/fixtures.js";
import { ADAPTERS, type Answer, provider, scriptLine, u } from "./provider-subjects.js";
import { startWireServer, type WireServer } from "./wire-server.js";

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

const IMPLEMENTER: readonly Answer[] = [
  { call: READ_FILE.name, args: { path: "src/slugify.js" }, usage: u(900, 40, 0, 10) },
  { message: "Plan", payload: BAD_PLAN, usage: u(1100, 220, 896, 30) },
  { message: "Plan", payload: PLAN, usage: u(1400, 210, 1024, 0) },
];
const REVIEWER: readonly Answer[] = [
  { message: "Verdict", payload: BAD_VERDICT, usage: u(700, 60, 0, 12) },
  { message: "Verdict", payload: VERDICT, usage: u(820, 64, 512, 0) },
];

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

const dirs: string[] = [];
let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

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
