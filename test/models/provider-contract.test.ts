// The contract every ModelProvider meets, run unchanged against each: openai, openai-compatible
// (tool and JSON mode) and anthropic through their SDKs against the local wire server, the scripted
// model, and a library ModelFunction. One call answers with the candidate turn and its raw output;
// a refusal and a truncation are reported as such and end a passage after one call; a failure is a
// WarrantError with a `model/…` code and no credential in its text; a cancelled call rejects with
// `model/aborted`; the id is printable and keyless. (provider-conformance.test.ts runs the whole
// two-passage conversation, repairs and usage through each adapter.)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ModelProvider } from "../../src/core/ports/model-provider.js";
import { type ModelRequest, NO_USAGE } from "../../src/core/ports/model-provider.js";
import { createToolRegistry } from "../../src/core/turn/tool-registry.js";
import { type MessageType, ROLE_MESSAGE_TYPES } from "../../src/core/turn/types.js";
import { type ModelFunction, providerOf } from "../../src/library/model.js";
import { runPassage } from "../../src/runtime/passage.js";
import {
  ADAPTERS,
  type Adapter,
  ANTHROPIC_KEY,
  OPENAI_KEY,
  provider,
  scriptLine,
  u,
  wholeTurn,
} from "./provider-subjects.js";
import { fixture, startWireServer, type WireReply } from "./wire-server.js";

const VERDICT = { decision: "reject", findings: [] };

/** What a subject is asked to answer, in no provider's spelling. */
type Reply =
  | { readonly message: MessageType; readonly payload: object }
  | "refusal"
  | "truncated"
  | "failure";

/** The expectations a subject may not be able to meet; each skip carries its reason. */
type Expectation = "refusal" | "truncation" | "cancel";

interface Made {
  readonly provider: ModelProvider;
  /** How many calls reached the provider's backend (the wire server, the script, the function). */
  calls(): number;
  close(): Promise<void>;
}

interface Subject {
  readonly name: string;
  make(replies: readonly Reply[]): Promise<Made>;
  /** Credentials the subject was given: none may appear in an id or an error. */
  readonly secrets: readonly string[];
  readonly cannot?: Partial<Record<Expectation, string>>;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function wireSubject(adapter: Adapter, family: "openai" | "anthropic"): Subject {
  return {
    name: adapter.name,
    secrets: [OPENAI_KEY, ANTHROPIC_KEY],
    async make(replies) {
      const wire: WireReply[] = replies.map((r, n) =>
        r === "refusal"
          ? fixture(`${family}/refusal`)
          : r === "truncated"
            ? fixture(`${family}/truncated`)
            : r === "failure"
              ? fixture(`${family}/invalid-key`)
              : adapter.reply({ ...r, usage: u(10, 5, 0, 0) }, n),
      );
      const server = await startWireServer(wire);
      return {
        provider: provider(adapter.uri(server.url), server.url),
        calls: () => server.requests.length,
        close: () => server.close(),
      };
    },
  };
}

const scripted: Subject = {
  name: "scripted",
  secrets: [],
  async make(replies) {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-provider-contract-"));
    dirs.push(dir);
    const file = path.join(dir, "script.jsonl");
    // A scripted model has no transport: its one failure is a script that has run out.
    const lines = replies.flatMap((r) =>
      r === "failure"
        ? []
        : r === "refusal" || r === "truncated"
          ? [{ stop: r }]
          : [scriptLine({ ...r, usage: u(10, 5, 0, 0) })],
    );
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n"));
    const model = provider(`scripted:${file}`, "http://127.0.0.1:1") as ModelProvider & {
      readonly requests: readonly unknown[];
    };
    return { provider: model, calls: () => model.requests.length, close: async () => {} };
  },
};

const SECRET_IN_FAILURE = "sk-function-upstream-7c1e";

const fn: Subject = {
  name: "library ModelFunction",
  secrets: [SECRET_IN_FAILURE],
  cannot: {
    refusal: "a function answers with a turn or text: it has no refusal to report",
    truncation: "a function answers with a turn or text: it has no output limit to report",
    cancel: "the function is handed the signal and honours it itself; nothing stands between",
  },
  async make(replies) {
    let calls = 0;
    const answer: ModelFunction = async () => {
      const r = replies[calls++];
      if (r === "failure" || r === undefined) {
        throw new Error(`upstream refused the key ${SECRET_IN_FAILURE}`);
      }
      if (typeof r === "string") throw new Error(`a function cannot answer ${r}`);
      return wholeTurn({ ...r, usage: u(0, 0, 0, 0) }, (p) => ({
        payload_json: JSON.stringify(p),
      })) as never;
    };
    return { provider: providerOf(answer, "reviewer"), calls: () => calls, close: async () => {} };
  },
};

const SUBJECTS: readonly Subject[] = [
  wireSubject(ADAPTERS[0] as Adapter, "openai"),
  wireSubject(ADAPTERS[1] as Adapter, "openai"),
  wireSubject(ADAPTERS[2] as Adapter, "openai"),
  wireSubject(ADAPTERS[3] as Adapter, "anthropic"),
  scripted,
  fn,
];

function request(): ModelRequest {
  return {
    role: "reviewer",
    system: "You are the reviewer.",
    conversation: [{ kind: "user", text: "Review the proposal." }],
    length: 1,
    tools: [],
    messageTypes: ROLE_MESSAGE_TYPES.reviewer,
    maxOutputTokens: 256,
  };
}

async function passage(model: ModelProvider) {
  const registry = createToolRegistry([]);
  if (!registry.ok) throw new Error("registry");
  return runPassage({
    role: "reviewer",
    agentId: "agent:reviewer",
    system: "You are the reviewer.",
    evidence: "Review the proposal.",
    registry: registry.value,
    toolHost: { call: async () => ({ ok: true, content: "", isError: false }) },
    provider: model,
    limits: { maxTurns: 4, maxTokens: 1_000_000 },
  });
}

/** Runs `body` on a subject made for `replies`, and closes it. */
async function withSubject<T>(
  subject: Subject,
  replies: readonly Reply[],
  body: (made: Made) => Promise<T>,
): Promise<T> {
  const made = await subject.make(replies);
  try {
    return await body(made);
  } finally {
    await made.close();
  }
}

describe.each(SUBJECTS)("ModelProvider contract: $name", (subject) => {
  const unless = (e: Expectation) => (subject.cannot?.[e] === undefined ? it : it.skip);

  it("answers one call with the candidate turn, its raw output kept, stop complete", async () => {
    await withSubject(subject, [{ message: "Verdict", payload: VERDICT }], async (made) => {
      const response = await made.provider.complete(request());
      expect(response.stop).toBe("complete");
      expect(response.raw).toBeDefined();
      expect(response.latencyMs).toBeGreaterThanOrEqual(0);
      expect(Object.keys(response.meta).sort()).toEqual(["finishReason", "id", "model"]);
      expect(Object.keys(response.usage).sort()).toEqual(Object.keys(NO_USAGE).sort());
      expect(made.calls()).toBe(1);
    });
    await withSubject(subject, [{ message: "Verdict", payload: VERDICT }], async (made) => {
      const out = await passage(made.provider);
      expect(out.ok, JSON.stringify(out)).toBe(true);
      if (out.ok)
        expect(out.message).toEqual({ type: "Verdict", payload: VERDICT, paperRef: null });
    });
  });

  unless("refusal")(
    `reports a refusal, which ends the passage turn/refusal after one call${subject.cannot?.refusal ? ` (skipped: ${subject.cannot.refusal})` : ""}`,
    async () => {
      await withSubject(
        subject,
        ["refusal", { message: "Verdict", payload: VERDICT }],
        async (made) => {
          expect((await made.provider.complete(request())).stop).toBe("refusal");
        },
      );
      await withSubject(
        subject,
        ["refusal", { message: "Verdict", payload: VERDICT }],
        async (made) => {
          const out = await passage(made.provider);
          expect(out).toMatchObject({ ok: false, code: "turn/refusal" });
          expect(made.calls()).toBe(1);
        },
      );
    },
  );

  unless("truncation")(
    `reports a truncated answer, which ends the passage turn/truncated after one call${subject.cannot?.truncation ? ` (skipped: ${subject.cannot.truncation})` : ""}`,
    async () => {
      await withSubject(
        subject,
        ["truncated", { message: "Verdict", payload: VERDICT }],
        async (made) => {
          const out = await passage(made.provider);
          expect(out).toMatchObject({ ok: false, code: "turn/truncated" });
          expect(made.calls()).toBe(1);
          expect(out.transcript.entries[0]).toMatchObject({
            kind: "model-call",
            stop: "truncated",
          });
        },
      );
    },
  );

  it("fails a passage with a model/… code whose text carries no credential", async () => {
    await withSubject(subject, ["failure"], async (made) => {
      const out = await passage(made.provider);
      expect(out.ok).toBe(false);
      if (out.ok) return;
      expect(out.code).toMatch(/^model\//);
      const text = JSON.stringify(out);
      for (const secret of subject.secrets) expect(text).not.toContain(secret);
    });
  });

  unless("cancel")(
    `a call cancelled before it starts rejects with model/aborted${subject.cannot?.cancel ? ` (skipped: ${subject.cannot.cancel})` : ""}`,
    async () => {
      await withSubject(subject, [{ message: "Verdict", payload: VERDICT }], async (made) => {
        const ac = new AbortController();
        ac.abort();
        await expect(
          made.provider.complete(request(), { signal: ac.signal }),
        ).rejects.toMatchObject({ code: "model/aborted" });
      });
    },
  );

  it("has a printable id that carries no credential", async () => {
    await withSubject(subject, [], async (made) => {
      expect(made.provider.id).toMatch(/^[a-z-]+:\S/);
      for (const secret of subject.secrets) expect(made.provider.id).not.toContain(secret);
    });
  });
});
