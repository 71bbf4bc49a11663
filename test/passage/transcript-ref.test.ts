import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sha256 } from "@noble/hashes/sha2.js";
import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createScriptedModel } from "../../src/adapters/models/scripted-model.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import type {
  ConversationEntry,
  ModelRequest,
  ModelResponse,
} from "../../src/core/ports/model-provider.js";
import { digestOf } from "../../src/core/records/canonical.js";
import { runPassage } from "../../src/runtime/passage.js";
import { RequestDigests, stepBytesRoom } from "../../src/runtime/passage-digest.js";
import {
  CHUNK_BYTES,
  type PassageTranscript,
  spareChunks,
  type TranscriptEntry,
  type TranscriptHead,
  TranscriptLog,
  transcriptRecord,
} from "../../src/runtime/passage-transcript.js";
import { repoRoot } from "../helpers/cli.js";
import { ADD, addHost, addRegistry, addTurn, findingTurn, referenceDigests } from "./helpers.js";

const encoder = new TextEncoder();

/** The content-ref rule, computed the reference way over the whole body. */
function referenceRef(body: unknown): string {
  const text = canonicalize(body) as string;
  return `passage-transcript:sha256:${Buffer.from(sha256(encoder.encode(text))).toString("base64url")}`;
}

function logged(head: TranscriptHead, entries: readonly TranscriptEntry[]): PassageTranscript {
  const log = new TranscriptLog();
  for (const e of entries) log.append(e);
  return log.finish(head);
}

const json = fc.jsonValue({ maxDepth: 3 });
const text = fc.string({ unit: "grapheme", maxLength: 12 });
const digest = fc.constant("sha256:KpgAqwfDXU8Z1DdUsdTHsyKWcRHgsk97mTens4ELcXI");
const problem = fc.record({ code: text, path: text, message: text });

const modelCall = fc.record(
  {
    kind: fc.constant("model-call" as const),
    index: fc.nat(),
    requestDigest: digest,
    raw: json,
    stop: fc.constantFrom("complete" as const, "refusal" as const, "truncated" as const),
    refusal: text,
    candidate: json,
    turn: json,
    validation: fc.option(
      fc.record({ valid: fc.boolean(), errors: fc.array(problem, { maxLength: 2 }) }),
    ),
    usage: fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat() }),
    latencyMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
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
      "latencyMs",
    ],
  },
);

const modelError = fc.record({
  kind: fc.constant("model-error" as const),
  index: fc.nat(),
  requestDigest: digest,
  code: text,
  message: text,
});

const toolCall = fc.record({
  kind: fc.constant("tool-call" as const),
  turn: fc.nat(),
  name: text,
  args: fc.dictionary(text, json, { maxKeys: 3 }),
  result: fc.record(
    {
      ok: fc.boolean(),
      content: fc.string({ unit: "binary-ascii" }),
      isError: fc.boolean(),
      code: text,
    },
    { requiredKeys: ["ok", "content", "isError"] },
  ),
  latencyMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
});

const entry = fc.oneof(modelCall, modelError, toolCall) as fc.Arbitrary<TranscriptEntry>;

const head = fc.record(
  {
    schema: fc.constant("warrant.passage-transcript.v1" as const),
    role: fc.constantFrom("implementer" as const, "reviewer" as const, "summarizer" as const),
    "agent/id": text,
    provider: text,
    systemDigest: digest,
    evidenceDigest: digest,
    evidenceRefs: fc.array(text, { maxLength: 3 }),
    usage: fc.record({
      inputTokens: fc.nat(),
      outputTokens: fc.nat(),
      cachedInputTokens: fc.nat(),
      reasoningTokens: fc.nat(),
      latencyMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
      modelCalls: fc.nat(),
      toolCalls: fc.nat(),
      repairs: fc.nat(),
    }),
    outcome: fc.oneof(
      fc.record({ ok: fc.constant(true as const), type: text }),
      fc.record({ ok: fc.constant(false as const), code: text, message: text }),
    ),
  },
  {
    requiredKeys: [
      "schema",
      "role",
      "agent/id",
      "provider",
      "systemDigest",
      "evidenceDigest",
      "usage",
      "outcome",
    ],
  },
) as fc.Arbitrary<TranscriptHead>;

describe("transcript records", () => {
  it("the ref and text of a logged transcript are the reference content ref and JCS of its body", () => {
    fc.assert(
      fc.property(
        head,
        fc.array(entry, { maxLength: 8 }),
        text,
        fc.option(text),
        (h, entries, query, passageRef) => {
          const body = {
            ...h,
            entries,
            "query/id": query,
            ...(passageRef === null ? {} : { "passage/ref": passageRef }),
          };
          const record = transcriptRecord(query, logged(h, entries), passageRef ?? undefined);
          expect(record.ref).toBe(referenceRef(body));
          expect(record.text).toBe(canonicalize(body));
          expect(record.body).toEqual(JSON.parse(JSON.stringify(body)));
          // A transcript that was not logged (read back from a store) gives the same record.
          const plain = transcriptRecord(query, { ...h, entries }, passageRef ?? undefined);
          expect(plain.ref).toBe(record.ref);
          expect(plain.text).toBe(record.text);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("holds for transcripts larger than the log's chunks, with entries larger than a chunk", () => {
    const big = (n: number, i: number): TranscriptEntry => ({
      kind: "tool-call",
      turn: i,
      name: "workspace.read_file",
      args: { path: `f${i}` },
      result: { ok: true, isError: false, content: `ą😀"\\\n${"x".repeat(n)}` },
      latencyMs: i + 0.25,
    });
    const entries = [big(10, 0), big(20_000, 1), big(50_000, 2), big(5, 3), big(30_000, 4)];
    for (let i = 5; i < 400; i++) entries.push(big(100, i));
    fc.assert(
      fc.property(head, text, (h, query) => {
        const record = transcriptRecord(query, logged(h, entries));
        expect(record.ref).toBe(referenceRef({ ...h, entries, "query/id": query }));
        expect(record.text).toBe(canonicalize({ ...h, entries, "query/id": query }));
      }),
      { numRuns: 5 },
    );
  });

  it("a logged transcript's entries read back equal to what was appended", () => {
    fc.assert(
      fc.property(head, fc.array(entry, { maxLength: 6 }), (h, entries) => {
        expect(logged(h, entries).entries).toEqual(JSON.parse(JSON.stringify(entries)));
      }),
      { numRuns: 200 },
    );
  });

  it("a frozen transcript keeps its ref, logged or not", () => {
    const fixture = JSON.parse(
      readFileSync(
        path.join(repoRoot, "test/fixtures/transcript/passage-transcript.v1.json"),
        "utf8",
      ),
    ) as { query: string; passageRef: string; transcript: PassageTranscript; ref: string };
    const { entries, ...h } = fixture.transcript;
    expect(transcriptRecord(fixture.query, fixture.transcript, fixture.passageRef).ref).toBe(
      fixture.ref,
    );
    expect(transcriptRecord(fixture.query, logged(h, entries), fixture.passageRef).ref).toBe(
      fixture.ref,
    );
    expect(
      referenceRef({
        ...fixture.transcript,
        "query/id": fixture.query,
        "passage/ref": fixture.passageRef,
      }),
    ).toBe(fixture.ref);
  });

  it("memory and SQLite stores keep the record's canonical text and read its body back", async () => {
    const fixture = JSON.parse(
      readFileSync(
        path.join(repoRoot, "test/fixtures/transcript/passage-transcript.v1.json"),
        "utf8",
      ),
    ) as { query: string; transcript: PassageTranscript };
    const { entries, ...h } = fixture.transcript;
    const record = transcriptRecord(fixture.query, logged(h, entries));
    const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-transcript-"));
    try {
      for (const uri of ["memory:", `sqlite:${path.join(dir, "ledger.db")}`]) {
        const store = await openStore(uri);
        await store.putRecords([record]);
        await store.putRecords([record]);
        const back = await store.readRecord(record.ref);
        expect(back?.body).toEqual(JSON.parse(JSON.stringify(record.body)));
        expect(canonicalize(back?.body)).toBe(record.text);
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a finished log's chunks go to the next log, and what the first one recorded stays as it was", () => {
    const h = fc.sample(head, { seed: 7, numRuns: 1 })[0] as TranscriptHead;
    const call = (i: number, fill: string): TranscriptEntry => ({
      kind: "tool-call",
      turn: i,
      name: "workspace.read_file",
      args: { path: `f${i}` },
      result: { ok: true, isError: false, content: fill.repeat(100) },
      latencyMs: i,
    });
    // More than one chunk each, so the second log writes over every chunk the first one used.
    const firstEntries = Array.from({ length: 600 }, (_, i) => call(i, "a"));
    const secondEntries = Array.from({ length: 600 }, (_, i) => call(i, "b"));
    expect(JSON.stringify(firstEntries).length).toBeGreaterThan(2 * CHUNK_BYTES);
    const first = logged(h, firstEntries);
    const spare = spareChunks();
    expect(spare).toBeGreaterThanOrEqual(2);
    const log = new TranscriptLog();
    expect(spareChunks()).toBe(spare - 1);
    for (const e of secondEntries) log.append(e);
    const second = log.finish(h);
    for (const [t, entries] of [
      [first, firstEntries],
      [second, secondEntries],
    ] as const) {
      expect(t.entries).toEqual(JSON.parse(JSON.stringify(entries)));
      const record = transcriptRecord("query:q", t);
      expect(record.text).toBe(canonicalize({ ...h, entries, "query/id": "query:q" }));
      expect(record.ref).toBe(referenceRef({ ...h, entries, "query/id": "query:q" }));
    }
  });

  it("a finished log takes no more entries, and finishing it again gives the same entries", () => {
    const h = fc.sample(head, { seed: 8, numRuns: 1 })[0] as TranscriptHead;
    const e: TranscriptEntry = {
      kind: "tool-call",
      turn: 0,
      name: "t",
      args: {},
      result: { ok: true, isError: false, content: "c" },
      latencyMs: 0,
    };
    const log = new TranscriptLog();
    log.append(e);
    const once = log.finish(h);
    expect(() => log.append(e)).toThrow(/finished transcript/);
    expect(log.finish(h).entries).toEqual(once.entries);
    expect(once.entries).toEqual([JSON.parse(JSON.stringify(e))]);
  });

  it("an entry JSON cannot carry is refused when appended, not at the finish", () => {
    const log = new TranscriptLog();
    expect(() =>
      log.append({
        kind: "tool-call",
        turn: 0,
        name: "t",
        args: {},
        result: { ok: true, isError: false, content: "lone \uD800" },
        latencyMs: 0,
      }),
    ).toThrow();
  });
});

type PassageInput = Parameters<typeof runPassage>[0];

/** The request digests an adding passage of `provider` recorded, the passage checked to end well. */
async function recordedDigests(
  provider: PassageInput["provider"],
  evidence: PassageInput["evidence"],
): Promise<string[]> {
  const out = await runPassage({
    role: "implementer",
    agentId: "agent:a1",
    system: "You add numbers.",
    evidence,
    registry: addRegistry(),
    toolHost: addHost(),
    provider,
    limits: { maxTurns: 8, maxTokens: 10_000 },
  });
  expect(out.ok).toBe(true);
  return out.transcript.entries.flatMap((e) => (e.kind === "model-call" ? [e.requestDigest] : []));
}

/** A model's answer of `raw`, complete, with no meta. */
const response = (raw: unknown): ModelResponse => ({
  raw,
  candidate: raw,
  stop: "complete",
  usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, reasoningTokens: 0 },
  meta: { id: null, model: null, finishReason: null },
  latencyMs: 0,
});

describe("request digests", () => {
  it("reuse the raw outputs' texts and still equal the rule computed from scratch", async () => {
    // Raw outputs with keys out of order, a repair, and tool calls.
    const raw = (turn: unknown) => ({ turn, zeta: { b: 1, a: [2, { d: 0, c: "é" }] }, alpha: 1 });
    const provider = createScriptedModel([
      { turn: addTurn(1, 2), usage: { input: 3, output: 1 } },
      "not json",
      { turn: addTurn(3, 4) },
      findingTurn(),
    ]);
    const wrapped = {
      specificationVersion: provider.specificationVersion,
      id: provider.id,
      complete: async (request: ModelRequest) => {
        const r = await provider.complete(request);
        return { ...r, raw: raw(r.raw) };
      },
    };
    const recorded = await recordedDigests(wrapped, "Add.");
    expect(recorded).toHaveLength(4);
    expect(recorded).toEqual(referenceDigests(provider.requests));
    expect(provider.requests[0]?.tools.map((t) => t.name)).toEqual([ADD.name]);
  });

  it("equal the rule when a raw output needs the reference JCS (toJSON, a date) or is text", async () => {
    const provider = createScriptedModel([
      { turn: addTurn(1, 2) },
      { turn: addTurn(3, 4) },
      `not json ${"é€\n".repeat(30)}`,
      findingTurn(),
    ]);
    let n = 0;
    const wrapped = {
      specificationVersion: provider.specificationVersion,
      id: provider.id,
      complete: async (request: ModelRequest) => {
        const r = await provider.complete(request);
        const shaped = [
          { turn: r.raw, at: new Date(n * 1000) },
          { turn: r.raw, note: { toJSON: () => ({ z: 1, a: [2] }) } },
          r.raw,
          r.raw,
        ][n++];
        return { ...r, raw: shaped };
      },
    };
    const recorded = await recordedDigests(wrapped, [
      { ref: "file:a.txt", content: `ą\u0000"${"x".repeat(100)}` },
    ]);
    expect(recorded).toHaveLength(4);
    expect(recorded).toEqual(referenceDigests(provider.requests));
  });

  it("equal the rule, without the log's texts, on entries only the reference JCS writes", () => {
    const repair = {
      kind: "repair" as const,
      errors: [{ code: "turn/json", path: "", message: "m", detail: { at: new Date(0) } }],
      text: "fix it",
    };
    const conversation: ConversationEntry[] = [
      { kind: "user", text: `ą\u0000"${"x".repeat(100)}` },
      { kind: "model", response: response({ b: [1, { toJSON: () => "t" }], a: "é" }) },
      repair,
      { kind: "model", response: response("text") },
      { kind: "tool-results", results: [{ name: "n", content: "c", isError: false }] },
      { kind: "model", response: response(undefined) },
    ];
    const at = (length: number, maxOutputTokens: number): ModelRequest => ({
      role: "implementer",
      system: "s",
      conversation,
      length,
      tools: [],
      messageTypes: ["Finding"],
      maxOutputTokens,
    });
    const requests = [at(1, 100), at(3, 99), at(5, 98), at(6, 1.5)];
    const digests = new RequestDigests({ system: "s", tools: [], messageTypes: ["Finding"] });
    expect(requests.map((r) => digests.digest(r))).toEqual(referenceDigests(requests));
  });

  it("of passages taken in turns equal each passage's rule; a large step's room is not kept", () => {
    const passage = (system: string, content: string) => {
      const conversation: ConversationEntry[] = [
        { kind: "user", text: system },
        { kind: "model", response: response({ kind: "tool_calls", n: system }) },
        { kind: "tool-results", results: [{ name: "n", content, isError: false }] },
        { kind: "model", response: response({ kind: "message", n: system }) },
      ];
      return [1, 3, 4].map(
        (length): ModelRequest => ({
          role: "implementer",
          system,
          conversation,
          length,
          tools: [],
          messageTypes: ["Finding"],
          maxOutputTokens: 100,
        }),
      );
    };
    const a = passage("a", "x".repeat(600_000));
    const b = passage("b", "y");
    const da = new RequestDigests({ system: "a", tools: [], messageTypes: ["Finding"] });
    const db = new RequestDigests({ system: "b", tools: [], messageTypes: ["Finding"] });
    const got: string[][] = [[], []];
    for (let i = 0; i < 3; i++) {
      got[0]?.push(da.digest(a[i] as ModelRequest));
      got[1]?.push(db.digest(b[i] as ModelRequest));
    }
    expect(got).toEqual([referenceDigests(a), referenceDigests(b)]);
    expect(stepBytesRoom()).toBeLessThanOrEqual(256 * 1024);
  });

  it("a passage's seed and head digests, kept from the agent's last passage, equal the rule", async () => {
    // One registry (one tool list) across passages whose prompts, evidence and types change.
    const registry = addRegistry();
    const passages: { system: string; evidence: string; messageTypes?: ["Finding"] }[] = [
      { system: "You add numbers.", evidence: "Add." },
      { system: "You add numbers.", evidence: "Add." },
      { system: "You add numbers twice.", evidence: "Add." },
      { system: "You add numbers twice.", evidence: "Add again.", messageTypes: ["Finding"] },
      { system: "You add numbers.", evidence: "Add again." },
    ];
    for (const p of passages) {
      const provider = createScriptedModel([{ turn: addTurn(1, 2) }, findingTurn()]);
      const out = await runPassage({
        role: "implementer",
        agentId: "agent:a1",
        ...p,
        registry,
        toolHost: addHost(),
        provider,
        limits: { maxTurns: 8, maxTokens: 10_000 },
      });
      expect(out.ok).toBe(true);
      const recorded = out.transcript.entries.flatMap((e) =>
        e.kind === "model-call" ? [e.requestDigest] : [],
      );
      expect(recorded).toEqual(referenceDigests(provider.requests));
      expect(out.transcript.systemDigest).toBe(digestOf(p.system));
      expect(out.transcript.evidenceDigest).toBe(digestOf(p.evidence));
    }
  });
});
