// The passage executor (docs/spec/turns.md repair, docs/spec/records.md transcript) over the scripted model.
import { describe, expect, it } from "vitest";
import {
  createScriptedModel,
  type ScriptedAnswer,
} from "../../src/adapters/models/scripted-model.js";
import type { ConversationEntry } from "../../src/core/ports/model-provider.js";
import { type PassageInput, runPassage } from "../../src/runtime/passage.js";
import { transcriptRecord } from "../../src/runtime/passage-transcript.js";
import { ADD, addHost, addRegistry, addTurn, findingTurn, LIMITS } from "./helpers.js";

function setup(answers: readonly ScriptedAnswer[], extra: Partial<PassageInput> = {}) {
  const provider = createScriptedModel(answers);
  const host = addHost();
  const input: PassageInput = {
    role: "implementer",
    agentId: "agent:a1",
    system: "You add numbers.",
    evidence: [{ ref: "task:sum", content: "Add 1 and 2." }],
    registry: addRegistry(),
    toolHost: host,
    provider,
    limits: LIMITS,
    ...extra,
  };
  return { provider, host, input };
}

describe("a passage", () => {
  it("runs tool calls through the host, feeds results back and ends on a message", async () => {
    const { provider, host, input } = setup([addTurn(1, 2), addTurn(3, 4), findingTurn()]);
    const out = await runPassage(input);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.message).toEqual({
      type: "Finding",
      payload: { severity: "info", claim: "the sum is right", evidence: [] },
      paperRef: null,
    });
    expect(host.calls).toEqual([
      { name: "math.add", args: { a: 1, b: 2 } },
      { name: "math.add", args: { a: 3, b: 4 } },
    ]);
    expect(provider.requests).toHaveLength(3);
    const [r0, r1, r2] = provider.requests;
    // One shared, append-only conversation: each request covers a longer prefix.
    expect(r1?.conversation).toBe(r0?.conversation);
    expect([r0?.length, r1?.length, r2?.length]).toEqual([1, 3, 5]);
    const conv = r2?.conversation as readonly ConversationEntry[];
    expect(conv[0]).toEqual({ kind: "user", text: "## task:sum\n\nAdd 1 and 2." });
    expect(conv[2]).toEqual({
      kind: "tool-results",
      results: [{ name: "math.add", content: "3", isError: false }],
    });
    expect(conv[4]).toEqual({
      kind: "tool-results",
      results: [{ name: "math.add", content: "7", isError: false }],
    });
    expect(r0?.tools).toEqual([
      { name: ADD.name, description: ADD.description, inputSchema: ADD.inputSchema },
    ]);
    expect(r0?.messageTypes).toEqual(["Plan", "Question", "DeadEnd", "Finding"]);
    expect(r0?.system).toBe("You add numbers.");
  });

  it("records every model call and tool call in the transcript, with usage", async () => {
    const { input } = setup([
      { turn: addTurn(1, 2), usage: { input: 10, output: 5 } },
      { turn: findingTurn(), usage: { input: 20, output: 7 } },
    ]);
    const out = await runPassage(input);
    const t = out.transcript;
    expect(t.entries.map((e) => e.kind)).toEqual(["model-call", "tool-call", "model-call"]);
    expect(t.usage).toMatchObject({
      inputTokens: 30,
      outputTokens: 12,
      modelCalls: 2,
      toolCalls: 1,
      repairs: 0,
    });
    const [call0, tool, call1] = t.entries;
    expect(call0).toMatchObject({
      kind: "model-call",
      index: 0,
      stop: "complete",
      validation: { valid: true, errors: [] },
      turn: addTurn(1, 2),
      usage: { inputTokens: 10, outputTokens: 5 },
    });
    expect(tool).toMatchObject({
      kind: "tool-call",
      turn: 0,
      name: "math.add",
      args: { a: 1, b: 2 },
      result: { ok: true, content: "3", isError: false },
    });
    expect(call1).toMatchObject({ kind: "model-call", index: 1, turn: findingTurn() });
    expect(t.outcome).toEqual({ ok: true, type: "Finding" });
    expect(t["agent/id"]).toBe("agent:a1");
    expect(t.role).toBe("implementer");
    expect(t.provider).toBe("scripted");
    expect(t.evidenceRefs).toEqual(["task:sum"]);
    expect(t.evidenceDigest).toMatch(/^sha256:[A-Za-z0-9_-]{43}$/);
    // The raw provider output is kept beside the parsed turn.
    expect(call0?.kind === "model-call" && call0.raw).toEqual({
      turn: addTurn(1, 2),
      usage: { input: 10, output: 5 },
    });
  });

  it("gives each request its own digest, deterministically, bound to the evidence", async () => {
    const answers = [addTurn(1, 2), findingTurn()];
    const a = await runPassage(setup(answers).input);
    const b = await runPassage(setup(answers).input);
    const c = await runPassage(
      setup(answers, { evidence: [{ ref: "task:sum", content: "Add 1 and 3." }] }).input,
    );
    const digests = (t: typeof a) =>
      t.transcript.entries.flatMap((e) => (e.kind === "model-call" ? [e.requestDigest] : []));
    expect(digests(a)).toHaveLength(2);
    expect(new Set(digests(a)).size).toBe(2);
    for (const d of digests(a)) expect(d).toMatch(/^sha256:[A-Za-z0-9_-]{43}$/);
    expect(digests(b)).toEqual(digests(a));
    expect(digests(c)[0]).not.toBe(digests(a)[0]);
    expect(c.transcript.evidenceDigest).not.toBe(a.transcript.evidenceDigest);
  });

  it("a transcript is a content-addressed record", async () => {
    const out = await runPassage(setup([findingTurn()]).input);
    const record = transcriptRecord("query:q1", out.transcript);
    expect(record.kind).toBe("transcript");
    expect(record.query).toBe("query:q1");
    expect(record.ref).toMatch(/^passage-transcript:sha256:[A-Za-z0-9_-]{43}$/);
    expect(JSON.parse(JSON.stringify(record.body))).toEqual({
      ...out.transcript,
      "query/id": "query:q1",
    });
    const again = await runPassage(setup([findingTurn()]).input);
    // Latency differs run to run only for real providers; the scripted model reports 0.
    expect(transcriptRecord("query:q1", again.transcript).ref).toBe(record.ref);
    // The same passage in another loop, or as another passage, is another record.
    expect(transcriptRecord("query:q2", again.transcript).ref).not.toBe(record.ref);
    const named = transcriptRecord("query:q1", again.transcript, "passage:p1");
    expect(named.ref).not.toBe(record.ref);
    expect(named.body).toMatchObject({ "query/id": "query:q1", "passage/ref": "passage:p1" });
  });

  it("uses the definition's output-token setting for each call", async () => {
    const { provider, input } = setup([findingTurn()], {
      definition: { models: [{ settings: { maxTokens: 321 } }] },
    });
    await runPassage(input);
    expect(provider.requests[0]?.maxOutputTokens).toBe(321);
  });

  it("a tool's failure is fed back to the model, not thrown", async () => {
    const { provider, input } = setup([addTurn(1, 2), findingTurn()], {
      toolHost: {
        call: async () => {
          throw new Error("boom");
        },
      },
    });
    const out = await runPassage(input);
    expect(out.ok).toBe(true);
    const conv = provider.requests[1]?.conversation as readonly ConversationEntry[];
    expect(conv[2]).toEqual({
      kind: "tool-results",
      results: [{ name: "math.add", content: "the tool failed (tool/failed)", isError: true }],
    });
  });
});

describe("repair", () => {
  it("sends invalid output back with its errors and accepts the repaired turn", async () => {
    const { provider, input } = setup(["I think the answer is 3.", findingTurn()]);
    const out = await runPassage(input);
    expect(out.ok).toBe(true);
    expect(provider.requests).toHaveLength(2);
    const conv = provider.requests[1]?.conversation as readonly ConversationEntry[];
    const repair = conv[2];
    expect(repair?.kind).toBe("repair");
    if (repair?.kind !== "repair") return;
    expect(repair.errors[0]?.code).toBe("turn/json");
    expect(repair.text).toContain("turn/json");
    const [first] = out.transcript.entries;
    expect(first).toMatchObject({
      kind: "model-call",
      candidate: "I think the answer is 3.",
      validation: { valid: false },
    });
    expect(out.transcript.usage.repairs).toBe(1);
  });

  it.each([
    ["turn/schema", { kind: "message", summary: "x", tool_calls: [] }],
    ["turn/kind-mismatch", { kind: "tool_calls", summary: "", tool_calls: [], message: null }],
    [
      "turn/unknown-tool",
      {
        kind: "tool_calls",
        summary: "",
        tool_calls: [{ name: "math.mul", arguments_json: "{}" }],
        message: null,
      },
    ],
    [
      "turn/arguments-not-object",
      {
        kind: "tool_calls",
        summary: "",
        tool_calls: [{ name: "math.add", arguments_json: "[1,2]" }],
        message: null,
      },
    ],
    [
      "turn/arguments-invalid",
      {
        kind: "tool_calls",
        summary: "",
        tool_calls: [{ name: "math.add", arguments_json: '{"a":1}' }],
        message: null,
      },
    ],
    [
      "turn/payload-invalid",
      {
        kind: "message",
        summary: "",
        tool_calls: [],
        message: { type: "Finding", payload_json: "{}", paper_ref: null },
      },
    ],
    [
      "turn/type-not-allowed",
      {
        kind: "message",
        summary: "",
        tool_calls: [],
        message: {
          type: "Result",
          payload_json: '{"summary":"s","outcome":"o","evidence":[]}',
          paper_ref: null,
        },
      },
    ],
  ])("when repairs run out on %s the passage fails with that code", async (code, bad) => {
    const { provider, host, input } = setup([bad, bad, bad, findingTurn()]);
    const out = await runPassage(input);
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.code).toBe(code);
    expect(out.errors.map((e) => e.code)).toContain(code);
    // The first attempt and two repairs, each a recorded model call; nothing executed.
    expect(provider.requests).toHaveLength(3);
    expect(out.transcript.entries.filter((e) => e.kind === "model-call")).toHaveLength(3);
    expect(host.calls).toEqual([]);
    expect(out.transcript.outcome).toMatchObject({ ok: false, code });
    expect("message" in out && typeof out.message).toBe("string");
  });

  it("repairs count over the whole passage", async () => {
    const { input } = setup(["bad", addTurn(1, 2), "bad", "bad", findingTurn()]);
    const out = await runPassage(input);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.code).toBe("turn/json");
  });

  it("with repairs 0 the first invalid turn ends the passage", async () => {
    const { provider, input } = setup(["nope", findingTurn()], { repairs: 0 });
    const out = await runPassage(input);
    expect(out.ok).toBe(false);
    expect(provider.requests).toHaveLength(1);
  });

  it("a refusal is not retried", async () => {
    const { provider, input } = setup([{ stop: "refusal", text: "I can't help" }, findingTurn()]);
    const out = await runPassage(input);
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.code).toBe("turn/refusal");
    expect(provider.requests).toHaveLength(1);
    expect(out.transcript.entries[0]).toMatchObject({ stop: "refusal", validation: null });
  });

  it("a truncated answer is not retried", async () => {
    const { provider, input } = setup([{ stop: "truncated", text: '{"kind":' }, findingTurn()]);
    const out = await runPassage(input);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.code).toBe("turn/truncated");
    expect(provider.requests).toHaveLength(1);
  });
});

describe("limits", () => {
  it("stops at maxTurns model calls without a message", async () => {
    const answers = Array.from({ length: 10 }, (_, i) => addTurn(i, 1));
    const { provider, input } = setup(answers, { limits: { maxTurns: 4, maxTokens: 1e9 } });
    const out = await runPassage(input);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.code).toBe("passage/max-turns");
    expect(provider.requests).toHaveLength(4);
  });

  it("repair attempts count as turns", async () => {
    const { provider, input } = setup(["bad", "bad", findingTurn()], {
      limits: { maxTurns: 2, maxTokens: 1e9 },
    });
    const out = await runPassage(input);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.code).toBe("passage/max-turns");
    expect(provider.requests).toHaveLength(2);
  });

  it("stops when the token budget is spent, and never asks for more than remains", async () => {
    const answers = Array.from({ length: 10 }, (_, i) => ({
      turn: addTurn(i, 1),
      usage: { input: 30, output: 10 },
    }));
    const { provider, input } = setup(answers, {
      limits: { maxTurns: 100, maxTokens: 100 },
      maxOutputTokens: 50,
    });
    const out = await runPassage(input);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.code).toBe("passage/max-tokens");
    expect(provider.requests.map((r) => r.maxOutputTokens)).toEqual([50, 50, 20]);
    expect(out.transcript.usage.inputTokens + out.transcript.usage.outputTokens).toBe(120);
  });

  it("a cancelled signal ends the passage before the next model call", async () => {
    const controller = new AbortController();
    const { provider, input } = setup([addTurn(1, 2), findingTurn()], {
      signal: controller.signal,
      onEvent: (e) => {
        if (e.kind === "tool-call-end") controller.abort();
      },
    });
    const out = await runPassage(input);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.code).toBe("passage/cancelled");
    expect(provider.requests).toHaveLength(1);
  });

  it("a provider failure ends the passage with its code, recorded in the transcript", async () => {
    const { input } = setup([addTurn(1, 2)]);
    const out = await runPassage(input);
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.code).toBe("model/script-exhausted");
    expect(out.transcript.entries.at(-1)).toMatchObject({
      kind: "model-error",
      index: 1,
      code: "model/script-exhausted",
    });
  });

  it("reports each model call, repair and tool call as it starts and ends", async () => {
    const events: string[] = [];
    const { input } = setup(["bad", addTurn(1, 2), findingTurn()], {
      onEvent: (e) =>
        events.push(
          e.kind === "model-call-end"
            ? `model:${e.index}:${e.valid}`
            : e.kind === "tool-call-start" || e.kind === "tool-call-end"
              ? `${e.kind}:${e.turn}.${e.call}:${e.name}`
              : e.kind,
        ),
    });
    await runPassage(input);
    expect(events).toEqual([
      "model-call-start",
      "model:0:false",
      "repair",
      "model-call-start",
      "model:1:true",
      "tool-call-start:1.0:math.add",
      "tool-call-end:1.0:math.add",
      "model-call-start",
      "model:2:true",
    ]);
  });

  it("reports a failed model call's code, with no usage", async () => {
    const ends: unknown[] = [];
    const { input } = setup([], {
      onEvent: (e) => {
        if (e.kind === "model-call-end") ends.push(e);
      },
    });
    await runPassage(input);
    expect(ends).toEqual([
      {
        kind: "model-call-end",
        index: 0,
        latencyMs: expect.any(Number),
        error: "model/script-exhausted",
      },
    ]);
  });
});

describe("the host's check of a message", () => {
  /** Refuses a Finding whose claim says "guess", at its claim. */
  const noGuesses = (m: { type: string; payload: unknown }) =>
    m.type === "Finding" && (m.payload as { claim: string }).claim.includes("guess")
      ? [{ code: "test/guess", path: "/claim", message: "a claim is not a guess" }]
      : [];

  it("answers a refused message as a repair inside the passage, recorded and charged", async () => {
    const events: string[] = [];
    const { provider, input } = setup([findingTurn("a guess"), findingTurn("the sum is 3")], {
      checkMessage: noGuesses,
      onEvent: (e) => {
        if (e.kind === "repair") events.push(`repair ${e.codes.join(",")}`);
        if (e.kind === "model-call-end") events.push(`end ${e.index} ${String(e.valid)}`);
      },
    });
    const out = await runPassage(input);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect((out.message.payload as { claim: string }).claim).toBe("the sum is 3");
    expect(provider.requests).toHaveLength(2);
    const repair = provider.requests[1]?.conversation[2];
    expect(repair?.kind).toBe("repair");
    if (repair?.kind !== "repair") return;
    // The text names where and what, with the code, like a turn's own repair.
    expect(repair.text).toContain(
      "- the host refused the Finding at /claim: a claim is not a guess [test/guess]",
    );
    expect(repair.text).toContain("nothing in it was executed");
    expect(events).toEqual(["end 0 false", "repair test/guess", "end 1 true"]);
    const [first, second] = out.transcript.entries;
    expect(first).toMatchObject({
      kind: "model-call",
      index: 0,
      turn: findingTurn("a guess"),
      validation: { valid: false, errors: [{ code: "test/guess", path: "/message/payload_json" }] },
    });
    expect(second).toMatchObject({ index: 1, validation: { valid: true, errors: [] } });
    expect(out.transcript.usage.repairs).toBe(1);
  });

  it("shares the repair budget with invalid turns; with none left the passage ends on the refused message", async () => {
    const { provider, input } = setup(
      ["not a turn", findingTurn("a guess"), findingTurn("the sum is 3")],
      { checkMessage: noGuesses, repairs: 1 },
    );
    const out = await runPassage(input);
    // The one repair went to the invalid turn: the refused message ends the passage as it is, and
    // the caller acts on the refusal.
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect((out.message.payload as { claim: string }).claim).toBe("a guess");
    expect(provider.requests).toHaveLength(2);
    expect(out.transcript.usage.repairs).toBe(1);
    expect(out.transcript.entries[1]).toMatchObject({
      validation: { valid: false, errors: [{ code: "test/guess" }] },
    });
  });

  it("is asked only about messages: tool calls and invalid turns never reach it", async () => {
    const seen: string[] = [];
    const { input } = setup([addTurn(1, 2), "not a turn", findingTurn()], {
      checkMessage: (m) => {
        seen.push(m.type);
        return [];
      },
    });
    const out = await runPassage(input);
    expect(out.ok).toBe(true);
    expect(seen).toEqual(["Finding"]);
  });
});
