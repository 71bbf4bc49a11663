// Token accounting from the transcripts: summed per role and over the loop, from the providers' own
// counts; a count an older transcript lacks, or that is not a count, is 0.
import { describe, expect, it } from "vitest";
import type { LedgerRecord } from "../../src/core/ports/ledger-store.js";
import { loopUsage } from "../../src/library/loop-usage.js";
import { accept, harness, plan, result, turn } from "../runtime/harness.js";

function transcript(role: string, usage: Record<string, unknown>): LedgerRecord {
  return {
    ref: `passage-transcript:${role}`,
    kind: "transcript",
    query: "q",
    text: "",
    body: { role, usage },
  };
}

describe("loop usage", () => {
  it("sums the transcripts per role and in all, and ignores other records", () => {
    const u = loopUsage([
      transcript("implementer", {
        modelCalls: 2,
        inputTokens: 100,
        outputTokens: 20,
        cachedInputTokens: 60,
        reasoningTokens: 5,
      }),
      transcript("implementer", {
        modelCalls: 1,
        inputTokens: 10,
        outputTokens: 2,
        cachedInputTokens: 0,
        reasoningTokens: 0,
      }),
      transcript("reviewer", {
        modelCalls: 1,
        inputTokens: 7,
        outputTokens: 3,
        cachedInputTokens: 1,
        reasoningTokens: 1,
      }),
      {
        ref: "corpus-experiment:x",
        kind: "proposal",
        query: "q",
        text: "",
        body: { usage: { inputTokens: 999 } },
      },
    ]);
    expect(u).toEqual({
      modelCalls: 4,
      inputTokens: 117,
      outputTokens: 25,
      cachedInputTokens: 61,
      reasoningTokens: 6,
      byRole: {
        implementer: {
          modelCalls: 3,
          inputTokens: 110,
          outputTokens: 22,
          cachedInputTokens: 60,
          reasoningTokens: 5,
        },
        reviewer: {
          modelCalls: 1,
          inputTokens: 7,
          outputTokens: 3,
          cachedInputTokens: 1,
          reasoningTokens: 1,
        },
      },
    });
  });

  it("counts 0 for fields an older transcript lacks and for anything that is not a count", () => {
    const u = loopUsage([
      // Written before cached and reasoning tokens were recorded.
      transcript("summarizer", { modelCalls: 1, inputTokens: 50, outputTokens: 9 }),
      transcript("reviewer", {
        modelCalls: "2",
        inputTokens: -5,
        outputTokens: 1.5,
        cachedInputTokens: null,
      }),
      { ref: "passage-transcript:odd", kind: "transcript", query: "q", text: "", body: null },
    ]);
    expect(u).toMatchObject({
      modelCalls: 1,
      inputTokens: 50,
      outputTokens: 9,
      cachedInputTokens: 0,
      reasoningTokens: 0,
    });
    expect(u.byRole.reviewer).toEqual({
      modelCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      reasoningTokens: 0,
    });
    expect(loopUsage([])).toEqual({
      modelCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      reasoningTokens: 0,
      byRole: {},
    });
  });

  it("show() reports the sum of every model call's usage over a whole loop", async () => {
    type Reported = { input: number; output: number; cached?: number; reasoning?: number };
    const calls: Record<"implementer" | "reviewer" | "summarizer", Reported[]> = {
      implementer: [
        { input: 900, output: 150, cached: 500, reasoning: 30 },
        { input: 1200, output: 200, cached: 800, reasoning: 0 },
      ],
      reviewer: [{ input: 700, output: 60, cached: 0, reasoning: 12 }],
      summarizer: [{ input: 400, output: 90 }],
    };
    const h = await harness({
      implementer: [
        { turn: turn("Plan", plan("unknown-action")), usage: calls.implementer[0] },
        { turn: turn("Plan", plan("good-fix")), usage: calls.implementer[1] },
      ],
      reviewer: [{ turn: accept, usage: calls.reviewer[0] }],
      summarizer: [{ turn: result, usage: calls.summarizer[0] }],
    });
    const r = await h.drive();
    expect(r.document.stop?.reason).toBe("succeeded");
    const view = await h.warrant.show(h.query);
    const all = Object.values(calls).flat();
    const sum = (f: (c: Reported) => number | undefined) =>
      all.reduce((n, c) => n + (f(c) ?? 0), 0);
    expect(view?.usage).toMatchObject({
      modelCalls: 4,
      inputTokens: sum((c) => c.input),
      outputTokens: sum((c) => c.output),
      cachedInputTokens: sum((c) => c.cached),
      reasoningTokens: sum((c) => c.reasoning),
    });
    expect(view?.usage.byRole.implementer).toEqual({
      modelCalls: 2,
      inputTokens: 2100,
      outputTokens: 350,
      cachedInputTokens: 1300,
      reasoningTokens: 30,
    });
    expect(view?.usage.byRole.summarizer).toMatchObject({ modelCalls: 1, inputTokens: 400 });
  });
});
