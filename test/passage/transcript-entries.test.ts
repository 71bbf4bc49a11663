import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ConversationEntry, ModelRequest } from "../../src/core/ports/model-provider.js";
import { canonicalJson } from "../../src/core/records/canonical.js";
import { CanonicalWriter, type KnownBytes } from "../../src/core/records/canonical-bytes.js";
import { RequestDigests } from "../../src/runtime/passage-digest.js";
import {
  type TranscriptEntry,
  TranscriptLog,
  transcriptRecord,
} from "../../src/runtime/passage-transcript.js";
import { projection, writeEntry } from "../../src/runtime/transcript-entries.js";
import { wellFormed } from "../helpers/json-arbitraries.js";
import { referenceDigests } from "./helpers.js";

const decoder = new TextDecoder();
const none: KnownBytes = { get: () => undefined };

const json = fc.jsonValue({ maxDepth: 3 });
const text = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 80 }).filter(wellFormed),
  fc.constantFrom('"\\\n\u0000', "x".repeat(70)),
);
const number = fc.oneof(
  fc.nat(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 9, 10, 2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1, 0.5, 1e21),
);
const problem = fc.record(
  { code: text, path: text, message: text, detail: fc.dictionary(text, json, { maxKeys: 2 }) },
  { requiredKeys: ["code", "path", "message"] },
);
const usage = fc.record(
  {
    inputTokens: number,
    outputTokens: number,
    cachedInputTokens: number,
    reasoningTokens: number,
  },
  { requiredKeys: [] },
);
const meta = fc.record({
  id: fc.option(text),
  model: fc.option(text),
  finishReason: fc.option(text),
});

const modelCall = fc.record(
  {
    kind: fc.constant("model-call" as const),
    index: number,
    requestDigest: text,
    raw: json,
    stop: fc.constantFrom("complete" as const, "refusal" as const, "truncated" as const),
    refusal: text,
    candidate: json,
    turn: json,
    validation: fc.option(
      fc.record({ valid: fc.boolean(), errors: fc.array(problem, { maxLength: 2 }) }),
    ),
    usage,
    response: meta,
    latencyMs: number,
  },
  {
    requiredKeys: [
      "kind",
      "index",
      "requestDigest",
      "raw",
      "stop",
      "validation",
      "usage",
      "response",
      "latencyMs",
    ],
  },
);

const modelError = fc.record({
  kind: fc.constant("model-error" as const),
  index: number,
  requestDigest: text,
  code: text,
  message: text,
});

const toolCall = fc.record({
  kind: fc.constant("tool-call" as const),
  turn: number,
  name: text,
  args: fc.dictionary(text, json, { maxKeys: 3 }),
  result: fc.record(
    { ok: fc.boolean(), content: text, isError: fc.boolean(), code: text },
    { requiredKeys: ["ok", "content", "isError"] },
  ),
  latencyMs: number,
});

const entry = fc.oneof(modelCall, modelError, toolCall) as fc.Arbitrary<TranscriptEntry>;

/** What the shape writer writes of `e`, as text. */
function written(e: TranscriptEntry, known: KnownBytes = none): string {
  const w = new CanonicalWriter(new Uint8Array(8));
  writeEntry(w, e, known);
  return decoder.decode(w.buf.subarray(0, w.pos));
}

/** The entries' text as a finished log keeps it. */
function logText(entries: readonly TranscriptEntry[]): string {
  const log = new TranscriptLog();
  for (const e of entries) log.append(e);
  const record = transcriptRecord("query:q", log.finish(head));
  const body = JSON.parse(record.text as string) as { entries: unknown[] };
  return canonicalJson(body.entries);
}

const head = {
  schema: "warrant.passage-transcript.v1" as const,
  role: "implementer" as const,
  "agent/id": "agent:a",
  provider: "scripted",
  systemDigest: "sha256:s",
  evidenceDigest: "sha256:e",
  usage: {
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    reasoningTokens: 0,
    latencyMs: 0,
    modelCalls: 0,
    toolCalls: 0,
    repairs: 0,
  },
  outcome: { ok: true as const, type: "Finding" },
};

describe("transcript entries written by their shape", () => {
  it("are the JCS of every entry of the three kinds, optional members present or not", () => {
    fc.assert(
      fc.property(entry, (e) => {
        expect(written(e)).toBe(canonicalize(e));
        expect(projection(e)).toEqual(e);
      }),
      { numRuns: 2000 },
    );
  });

  it("reuse the bytes known for the model's raw output and its turn", () => {
    const raw = { b: 1, a: "é" };
    const bytes = new TextEncoder().encode('{"a":"known"}');
    const known: KnownBytes = {
      get: (o) => (o === raw ? { buf: bytes, pos: bytes.length } : undefined),
    };
    const e: TranscriptEntry = {
      kind: "model-call",
      index: 0,
      requestDigest: "sha256:d",
      raw,
      stop: "complete",
      turn: raw,
      validation: { valid: true, errors: [] },
      usage: { inputTokens: 1, outputTokens: 2, cachedInputTokens: 0, reasoningTokens: 0 },
      response: { id: null, model: null, finishReason: null },
      latencyMs: 0.25,
    };
    expect(written(e, known)).toBe(
      canonicalize({ ...e, raw: { a: "known" }, turn: { a: "known" } }),
    );
  });

  it("leave out members their types do not name, on the entry and on its typed parts", () => {
    const e = {
      kind: "model-call",
      index: 3,
      requestDigest: "sha256:d",
      raw: { extra: "kept: raw output is open" },
      stop: "complete",
      validation: { valid: true, errors: [], score: 1 },
      usage: {
        inputTokens: 1,
        outputTokens: 2,
        cachedInputTokens: 0,
        reasoningTokens: 0,
        costUsd: 0.1,
      },
      response: { id: "r", model: "m", finishReason: "stop", created: 1 },
      latencyMs: 1,
      secretHeader: "not recorded",
    } as unknown as TranscriptEntry;
    const t = {
      kind: "tool-call",
      turn: 3,
      name: "math.add",
      args: { a: 1, extra: "kept: arguments are open" },
      result: { ok: true, content: "2", isError: false, structured: { x: 1 } },
      latencyMs: 0.5,
      host: "not recorded",
    } as unknown as TranscriptEntry;
    for (const x of [e, t]) {
      const text = written(x);
      expect(text).toBe(canonicalJson(projection(x)));
      expect(logText([x])).toBe(`[${text}]`);
    }
    expect(written(e)).not.toMatch(/secretHeader|score|costUsd|created/);
    expect(written(e)).toContain("kept: raw output is open");
    expect(written(t)).not.toMatch(/"host"|structured/);
    expect(written(t)).toContain("kept: arguments are open");
  });

  it("written by the general writer when the shape writer does not vouch for them, alike", () => {
    class Usage {
      inputTokens = 1;
      outputTokens = 2;
    }
    const entries = [
      // A typed part that is not a plain object: written as it is, by the general writer.
      {
        kind: "model-call",
        index: 0,
        requestDigest: "sha256:d",
        raw: null,
        stop: "complete",
        validation: null,
        usage: new Usage(),
        response: { id: null, model: null, finishReason: null },
        latencyMs: 0,
      },
      // A raw output only the reference JCS writes (toJSON), beside a member not recorded.
      {
        kind: "model-call",
        index: 1,
        requestDigest: "sha256:d",
        raw: { at: new Date(0), b: { toJSON: () => [1, 2] } },
        stop: "complete",
        validation: { valid: true, errors: [] },
        usage: { inputTokens: 1, outputTokens: 2, cachedInputTokens: 0, reasoningTokens: 0 },
        response: { id: null, model: null, finishReason: null },
        latencyMs: 2.5,
        extra: 1,
      },
      // Typed parts of the wrong type altogether: as they are.
      {
        kind: "tool-call",
        turn: 1,
        name: "t",
        args: {},
        result: ["not", "a", "result"],
        latencyMs: 0,
      },
      // A kind the writer does not know: as it is.
      { kind: "later-kind", index: 2, note: "n" },
    ] as unknown as TranscriptEntry[];
    const text = logText(entries);
    expect(text).toBe(canonicalJson(entries.map(projection)));
    expect(text).toContain('"usage":{"inputTokens":1,"outputTokens":2}');
    expect(text).toContain('"raw":{"at":"1970-01-01T00:00:00.000Z","b":[1,2]}');
    expect(text).not.toContain('"extra"');
    expect(text).toContain('"result":["not","a","result"]');
    expect(text).toContain('"note":"n"');
  });

  it("a log of random entries holds exactly their JCS, in order", () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 5 }), (entries) => {
        expect(logText(entries)).toBe(canonicalize(entries));
      }),
      { numRuns: 300 },
    );
  });
});

describe("request digests over tool results", () => {
  const requestsOver = (results: readonly ConversationEntry[]): ModelRequest[] => {
    const conversation: ConversationEntry[] = [{ kind: "user", text: "u" }];
    const requests: ModelRequest[] = [];
    const at = (): ModelRequest => ({
      role: "implementer",
      system: "s",
      conversation,
      length: conversation.length,
      tools: [],
      messageTypes: ["Finding"],
      maxOutputTokens: 100,
    });
    requests.push(at());
    for (const r of results) {
      conversation.push(r);
      requests.push(at());
    }
    return requests;
  };

  it("equal the rule on random results, and on results the passage does not make", () => {
    const result = fc.record({ name: text, content: text, isError: fc.boolean() });
    const odd = [
      { kind: "tool-results", results: [{ name: "n", content: "c", isError: false, more: 1 }] },
      { kind: "tool-results", results: [{ name: "n", content: 5, isError: false }] },
      { kind: "tool-results", results: [{ name: "n", content: "c" }] },
      { kind: "tool-results", results: [{ name: "n", content: "c", other: true }] },
      { kind: "tool-results", results: [{ other: "n", content: "c", isError: true }] },
      { kind: "tool-results", results: [{ name: "n", other: "c", isError: true }] },
      { kind: "tool-results", results: [], note: "n" },
      { kind: "tool-results", results: [Object.assign(Object.create({ x: 1 }), { name: "n" })] },
    ] as unknown as ConversationEntry[];
    fc.assert(
      fc.property(
        fc.array(fc.array(result, { maxLength: 3 }), { maxLength: 4 }),
        fc.subarray(odd),
        (batches, extra) => {
          const entries = [
            ...batches.map((results) => ({ kind: "tool-results" as const, results })),
            ...extra,
          ];
          const requests = requestsOver(entries);
          const digests = new RequestDigests({ system: "s", tools: [], messageTypes: ["Finding"] });
          expect(requests.map((r) => digests.digest(r))).toEqual(referenceDigests(requests));
        },
      ),
      { numRuns: 300 },
    );
  });
});
