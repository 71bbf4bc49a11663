// The loop in Warrant: the passage executor (runPassage) with the scripted model, one `add` tool
// whose arguments the turn validator checks against its JSON Schema, and the passage transcript
// stored as a record in the memory or the SQLite ledger store. Uses the built modules in dist/.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { createScriptedModel } from "../../../dist/src/adapters/models/scripted-model.js";
import { openStore } from "../../../dist/src/adapters/store/open-store.js";
import { registryOf, toolAnswer } from "../../../dist/src/core/ports/tool-host.js";
import { runPassage } from "../../../dist/src/runtime/passage.js";
import { transcriptRecord } from "../../../dist/src/runtime/passage-transcript.js";
import { ARGUMENTS_JSON, PROMPT, TOOL_DESCRIPTION, TOOL_NAME } from "../script.mjs";

export const system = "warrant";

const AGENT_ID = "agent:bench-adder";

/** Sum of the `add` results in the conversation the passage sent to this call. */
function seenSum(request) {
  let sum = 0;
  for (let i = 0; i < request.length; i++) {
    const entry = request.conversation[i];
    if (entry.kind === "tool-results") for (const r of entry.results) sum += Number(r.content);
  }
  return sum;
}

/** The scripted answers: n-1 turns calling `add`, then a Result message. */
function answersFor(n) {
  const call = {
    kind: "tool_calls",
    summary: "add",
    tool_calls: [{ name: TOOL_NAME, arguments_json: ARGUMENTS_JSON }],
    message: null,
  };
  const final = {
    kind: "message",
    summary: "done",
    tool_calls: [],
    message: {
      type: "Result",
      payload_json: JSON.stringify({
        summary: `total=${3 * (n - 1)}`,
        outcome: "done",
        evidence: [],
      }),
      paper_ref: null,
    },
  };
  return [...Array.from({ length: n - 1 }, () => call), final];
}

export async function create(script, { store: storeKind = "memory" } = {}) {
  let dir;
  let uri = "memory:";
  if (storeKind === "sqlite") {
    dir = mkdtempSync(join(os.tmpdir(), "warrant-bench-"));
    uri = `sqlite:${join(dir, "ledger.db")}`;
  } else if (storeKind !== "memory") {
    throw new Error(`unknown store ${storeKind}`);
  }
  const store = await openStore(uri);
  const toolHost = {
    specs: () => [
      {
        name: TOOL_NAME,
        description: TOOL_DESCRIPTION,
        inputSchema: {
          type: "object",
          properties: { a: { type: "integer" }, b: { type: "integer" } },
          required: ["a", "b"],
          additionalProperties: false,
        },
        effect: "observation",
      },
    ],
    call: async (_name, args) => toolAnswer(String(script.add(args.a, args.b))),
  };
  const registry = registryOf(toolHost);
  if (!registry.ok) throw new Error(registry.errors[0]?.message);
  const answers = answersFor(script.n);
  let stored = 0;

  return {
    async runLoop(loopIndex) {
      const scripted = createScriptedModel(answers);
      let lastRequest;
      const provider = {
        id: scripted.id,
        complete(request, opts) {
          script.next();
          lastRequest = request;
          return scripted.complete(request, opts);
        },
      };
      const query = `query:bench-${loopIndex}`;
      const outcome = await runPassage({
        role: "summarizer",
        agentId: AGENT_ID,
        system: PROMPT,
        // Distinct per loop, so every transcript is a new record (a real write, never a no-op).
        evidence: `loop ${loopIndex}`,
        registry: registry.value,
        toolHost,
        provider,
        limits: { maxTurns: script.n, maxTokens: 1_000_000 },
        repairs: 0,
      });
      if (!outcome.ok) throw new Error(`passage failed: ${outcome.code}: ${outcome.message}`);
      await store.putRecords([transcriptRecord(query, outcome.transcript)]);
      stored++;
      const payload = outcome.message.payload;
      const seen = lastRequest === undefined ? 0 : seenSum(lastRequest);
      // The scripted final answer is fixed; it counts only when the model was sent the matching sum.
      return payload.summary === `total=${seen}` ? script.finalText(seen) : payload.summary;
    },
    describe: () => ({ store: storeKind, transcriptsStored: stored }),
    async close() {
      await store.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
