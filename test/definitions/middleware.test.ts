// Middleware around a passage's model: model-fallback answers from the next model when the first
// is unreachable (a closed port), refuses or is cut, and not on other failures; a model is shown
// another model's turns as text; call-limit stops a passage at its limit; history-summary compacts
// the earlier turns with the referenced model past its threshold. Each acts on the record.
import { describe, expect, it } from "vitest";
import { createModelFromUri } from "../../src/adapters/models/model-uri.js";
import { createScriptedModel } from "../../src/adapters/models/scripted-model.js";
import type { MiddlewareSpec } from "../../src/core/definition/middleware-config.js";
import type { ModelProvider } from "../../src/core/ports/model-provider.js";
import { MODEL_SPECIFICATION_VERSION } from "../../src/core/ports/model-provider.js";
import { WarrantError } from "../../src/core/result.js";
import { type Notes, withMiddleware } from "../../src/runtime/model-middleware.js";
import { runPassage } from "../../src/runtime/passage.js";
import { fixture, startWireServer } from "../models/wire-server.js";
import { addHost, addRegistry, addTurn, findingTurn, LIMITS } from "../passage/helpers.js";

const FALLBACK: MiddlewareSpec = {
  name: "model-fallback",
  models: [1],
  on: ["unreachable", "unavailable", "timeout", "refusal", "truncation"],
};

function compatible(url: string): ModelProvider {
  const made = createModelFromUri(`openai-compatible:${url}/v1#m`, { env: {}, maxRetries: 0 });
  if (!made.ok) throw new Error("no model");
  return made.value;
}

/** A provider that counts its calls. */
function counted(inner: ModelProvider): ModelProvider & { calls: number } {
  const c = {
    specificationVersion: inner.specificationVersion,
    id: inner.id,
    calls: 0,
    complete: (
      r: Parameters<ModelProvider["complete"]>[0],
      o?: Parameters<ModelProvider["complete"]>[1],
    ) => {
      c.calls++;
      return inner.complete(r, o);
    },
  };
  return c;
}

function passage(provider: ModelProvider) {
  return runPassage({
    role: "adversarial-critic",
    agentId: "agent:a1",
    system: "You add numbers.",
    evidence: "Add 1 and 2, then 3 and 4.",
    registry: addRegistry(),
    toolHost: addHost(),
    provider,
    limits: LIMITS,
  });
}

async function closedUrl(): Promise<string> {
  const server = await startWireServer([]);
  await server.close();
  return server.url;
}

describe("model-fallback", () => {
  it("answers from the second model when the first is unreachable, and stays there for the passage", async () => {
    const primary = counted(compatible(await closedUrl()));
    const fallback = createScriptedModel([addTurn(1, 2), findingTurn()], {
      id: "scripted:fallback",
    });
    const notes: Notes = [];
    const models = [primary, fallback];
    const out = await passage(
      withMiddleware(primary, [FALLBACK], (n) => models[n] as ModelProvider, notes),
    );
    expect(out.ok).toBe(true);
    // The first call found the server gone; the second went to the fallback at once.
    expect(primary.calls).toBe(1);
    expect(fallback.requests).toHaveLength(2);
    expect(notes[0]).toEqual({
      middleware: "model-fallback",
      call: 0,
      event: "fell-back",
      detail: { from: primary.id, to: "scripted:fallback", on: "model/unreachable" },
    });
    expect(notes.filter((n) => n.event === "answered-by")).toHaveLength(2);
  });

  it("asks the second model a turn the first refused, and goes back to the first for the next turn", async () => {
    const server = await startWireServer([
      fixture("openai/refusal"),
      fixture("openai/message-tool"),
    ]);
    try {
      const primary = compatible(server.url);
      const fallback = createScriptedModel([addTurn(1, 2)], { id: "scripted:fallback" });
      const notes: Notes = [];
      const models = [primary, fallback];
      const out = await runPassage({
        role: "adversarial-critic",
        agentId: "agent:a1",
        system: "s",
        evidence: "e",
        registry: addRegistry(),
        toolHost: addHost(),
        provider: withMiddleware(primary, [FALLBACK], (n) => models[n] as ModelProvider, notes),
        limits: LIMITS,
      });
      expect(server.requests).toHaveLength(2);
      expect(fallback.requests).toHaveLength(1);
      expect(notes[0]).toMatchObject({ event: "fell-back", detail: { on: "refusal" } });
      expect(out.transcript.usage.modelCalls).toBe(2);
    } finally {
      await server.close();
    }
  });

  it("does not fall back on a failure it is not set for (a refused key): the passage fails with it", async () => {
    const server = await startWireServer([fixture("openai/invalid-key")]);
    try {
      const fallback = createScriptedModel([findingTurn()], { id: "scripted:fallback" });
      const models = [compatible(server.url), fallback];
      const out = await passage(
        withMiddleware(
          models[0] as ModelProvider,
          [FALLBACK],
          (n) => models[n] as ModelProvider,
          [],
        ),
      );
      expect(out.ok ? "ok" : out.code).toBe("model/auth");
      expect(fallback.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it("shows the second model the first model's turns as text, never in a foreign native form", async () => {
    const primaryScript = createScriptedModel([addTurn(1, 2)], { id: "scripted:primary" });
    let calls = 0;
    const primary: ModelProvider = {
      specificationVersion: MODEL_SPECIFICATION_VERSION,
      id: "scripted:primary",
      complete: (r, o) => {
        if (calls++ === 0) return primaryScript.complete(r, o);
        throw new WarrantError("model/unreachable", "gone");
      },
    };
    const fallback = createScriptedModel([findingTurn()], { id: "scripted:fallback" });
    const models = [primary, fallback];
    const out = await passage(
      withMiddleware(primary, [FALLBACK], (n) => models[n] as ModelProvider, []),
    );
    expect(out.ok).toBe(true);
    const seen = fallback.requests[0];
    const entries = seen?.conversation.slice(0, seen.length) ?? [];
    expect(entries.map((e) => e.kind)).toEqual(["user", "user", "user"]);
    expect(JSON.stringify(entries[1])).toContain("An earlier turn (another model's)");
    expect(JSON.stringify(entries[2])).toContain("Tool results:");
  });
});

describe("call-limit", () => {
  it("fails the passage passage/call-limit instead of a call past the limit", async () => {
    const model = createScriptedModel([addTurn(1, 2), addTurn(3, 4), addTurn(5, 6), findingTurn()]);
    const notes: Notes = [];
    const out = await passage(
      withMiddleware(model, [{ name: "call-limit", maxCalls: 2 }], () => model, notes),
    );
    expect(out.ok ? "ok" : out.code).toBe("passage/call-limit");
    expect(model.requests).toHaveLength(2);
    expect(notes).toEqual([
      { middleware: "call-limit", call: 2, event: "refused", detail: { maxCalls: 2 } },
    ]);
  });
});

describe("history-summary", () => {
  const SUMMARY: MiddlewareSpec = {
    name: "history-summary",
    model: 1,
    thresholdTokens: 150,
    keepTurns: 1,
  };
  const used = (turn: Record<string, unknown>) => ({ turn, usage: { input: 100, output: 60 } });

  it("past the threshold, the turns before the last kept one become the referenced model's summary", async () => {
    const main = createScriptedModel([
      used(addTurn(1, 2)),
      used(addTurn(3, 4)),
      used(findingTurn()),
    ]);
    const summarizer = createScriptedModel([
      {
        kind: "message",
        summary: "summary",
        tool_calls: [],
        message: {
          type: "Result",
          payload_json: JSON.stringify({
            summary: "1 + 2 = 3 was added.",
            outcome: "summarized",
            evidence: [],
          }),
          paper_ref: null,
        },
      },
    ]);
    const notes: Notes = [];
    const models = [main, summarizer];
    const out = await passage(
      withMiddleware(main, [SUMMARY], (n) => models[n] as ModelProvider, notes),
    );
    expect(out.ok).toBe(true);
    // Call 2 was compacted: evidence, summary, then the kept turn and its results.
    const third = main.requests[2];
    const shown = third?.conversation.slice(0, third.length) ?? [];
    expect(shown.map((e) => e.kind)).toEqual(["user", "user", "model", "tool-results"]);
    expect(JSON.stringify(shown[1])).toContain("1 + 2 = 3 was added.");
    expect(summarizer.requests[0]?.role).toBe("summarizer");
    expect(notes).toEqual([
      expect.objectContaining({ middleware: "history-summary", call: 2, event: "compacted" }),
    ]);
    // The passage's own conversation (its transcript) is whole.
    expect(out.transcript.usage.modelCalls).toBe(3);
  });

  it("a summary that is not a Result leaves the history as it was, noted", async () => {
    const main = createScriptedModel([
      used(addTurn(1, 2)),
      used(addTurn(3, 4)),
      used(findingTurn()),
    ]);
    const summarizer = createScriptedModel(["not a turn"]);
    const notes: Notes = [];
    const models = [main, summarizer];
    const out = await passage(
      withMiddleware(main, [SUMMARY], (n) => models[n] as ModelProvider, notes),
    );
    expect(out.ok).toBe(true);
    const third = main.requests[2];
    expect(third?.length).toBe(5);
    expect(notes[0]).toMatchObject({ event: "summary-failed" });
  });
});
