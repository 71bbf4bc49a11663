// The scripted model: replay from an array or JSONL, request recording, every answer form.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  createScriptedModel,
  loadScriptedModel,
  parseScript,
} from "../../src/adapters/models/scripted-model.js";
import type { ModelRequest } from "../../src/core/ports/model-provider.js";
import { WarrantError } from "../../src/core/result.js";
import { modelFromUri } from "../../src/library/uri-models.js";
import { tokens } from "./tokens.js";

const request: ModelRequest = {
  role: "summarizer",
  system: "s",
  conversation: [{ kind: "user", text: "hi" }],
  length: 1,
  tools: [],
  messageTypes: ["Result"],
  maxOutputTokens: 100,
};

const turn = { kind: "message", summary: "", tool_calls: [], message: null };

describe("scripted model", () => {
  it("replays answers in order and records each request", async () => {
    const m = createScriptedModel([turn, "raw text"]);
    const a = await m.complete(request);
    expect(a).toMatchObject({ candidate: turn, raw: turn, stop: "complete" });
    const b = await m.complete({ ...request, length: 1 });
    expect(b).toMatchObject({ candidate: "raw text", stop: "complete" });
    expect(m.requests).toHaveLength(2);
    expect(m.requests[0]).toBe(request);
    expect(m.remaining()).toBe(0);
  });

  it("gives refusals, truncations and usage from entries", async () => {
    const m = createScriptedModel([
      { stop: "refusal", text: "no" },
      { stop: "truncated", text: "{", usage: { input: 3, output: 9 } },
      { turn, usage: { output: 2 } },
    ]);
    expect(await m.complete(request)).toMatchObject({
      stop: "refusal",
      refusal: "no",
      meta: { finishReason: "refusal" },
    });
    expect(await m.complete(request)).toMatchObject({
      stop: "truncated",
      candidate: "{",
      usage: { inputTokens: 3, outputTokens: 9 },
    });
    expect(await m.complete(request)).toMatchObject({
      candidate: turn,
      usage: { inputTokens: 0, outputTokens: 2 },
    });
  });

  it("reports cached and reasoning tokens, and the response id and model, from entries", async () => {
    const m = createScriptedModel([
      { turn, usage: { input: 50, output: 9, cached: 40, reasoning: 4 }, id: "r-1", model: "m-1" },
      { turn, usage: { input: -1, output: 1.5 } },
    ]);
    const a = await m.complete(request);
    expect(a.usage).toEqual(tokens(50, 9, 40, 4));
    expect(a.meta).toEqual({ id: "r-1", model: "m-1", finishReason: null });
    const b = await m.complete(request);
    expect(b.usage).toEqual(tokens(0, 0));
    expect(b.meta).toEqual({ id: null, model: null, finishReason: null });
  });

  it("throws model/script-exhausted past the end, still recording the request", async () => {
    const m = createScriptedModel([]);
    await expect(m.complete(request)).rejects.toMatchObject({ code: "model/script-exhausted" });
    expect(m.requests).toHaveLength(1);
  });

  it("counts the whole script when it runs out, with the answers earlier passages used", async () => {
    const fresh = createScriptedModel([turn, turn]);
    await fresh.complete(request);
    await fresh.complete(request);
    await expect(fresh.complete(request)).rejects.toThrow(
      "the scripted model has no answer left (its script has 2 answers)",
    );
    // A later passage's model starts after the 3 answers used before: it had none left, not "0".
    const later = createScriptedModel([], { used: 3 });
    await expect(later.complete(request)).rejects.toThrow(
      "the scripted model has no answer left (its script has 3 answers, 3 of them used by earlier passages)",
    );
    const one = createScriptedModel([turn], { used: 1 });
    await one.complete(request);
    await expect(one.complete(request)).rejects.toThrow(
      "(its script has 2 answers, 1 of them used by earlier passages)",
    );
  });

  it("a scripted:PATH model of a later passage counts its whole script, not what was left", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-scripted-"));
    const file = path.join(dir, "agent.jsonl");
    writeFileSync(file, `${JSON.stringify(turn)}\n${JSON.stringify(turn)}\n`);
    for (const priorCalls of [2, 5]) {
      const m = modelFromUri(`scripted:${file}`, priorCalls, {});
      await expect(m.complete(request)).rejects.toThrow(
        "(its script has 2 answers, 2 of them used by earlier passages)",
      );
    }
  });

  it("throws model/aborted on an aborted signal", async () => {
    const m = createScriptedModel([turn]);
    await expect(m.complete(request, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: "model/aborted",
    });
  });

  it("reads JSONL scripts, skipping blank lines", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-scripted-"));
    const file = path.join(dir, "agent.jsonl");
    writeFileSync(file, `${JSON.stringify(turn)}\n\n"raw"\n{"stop":"refusal"}\n`);
    const m = loadScriptedModel(file);
    expect(m.remaining()).toBe(3);
    expect(m.id).toBe(`scripted:${file}`);
  });

  it("refuses a line that is not JSON, or neither string nor object, naming the line", () => {
    expect(() => parseScript('"ok"\n{nope')).toThrow(/line 2/);
    // Nothing of a line that is not JSON is quoted back (the file may be any file).
    expect(() => parseScript("root:x:0:0:secret")).toThrow(/^script line 1 is not JSON$/);
    expect(() => parseScript("[1]")).toThrow(WarrantError);
    let code: string | undefined;
    try {
      parseScript("3");
    } catch (e) {
      code = (e as WarrantError).code;
    }
    expect(code).toBe("model/script");
  });
});
