// `node bench/peers/profile-warrant.mjs [N]`: where Warrant's start-up, memory and per-loop time go
// in the peers workload (import, store, tool registry, first passage; then passage, transcript
// record and store write per loop). One JSON object on stdout; figures are for reading, not gating.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const n = Number(process.argv[2] ?? 1000);
const rssMB = () => Math.round((process.memoryUsage().rss / 2 ** 20) * 10) / 10;
const ms = (x) => Math.round(x * 100) / 100;
const phases = [{ phase: "node started", atMs: ms(performance.now()), rssMB: rssMB() }];
const mark = (phase) => phases.push({ phase, atMs: ms(performance.now()), rssMB: rssMB() });

const { runPassage } = await import("../../dist/src/runtime/passage.js");
mark("import runtime/passage");
const { createScriptedModel } = await import("../../dist/src/adapters/models/scripted-model.js");
const { registryOf, toolAnswer } = await import("../../dist/src/core/ports/tool-host.js");
const { transcriptRecord } = await import("../../dist/src/runtime/passage-transcript.js");
mark("import scripted model, tool host, transcript");
const { openStore } = await import("../../dist/src/adapters/store/open-store.js");
mark("import adapters/store/open-store");
const memory = await openStore("memory:");
const dir = mkdtempSync(join(os.tmpdir(), "warrant-profile-"));
const sqlite = await openStore(`sqlite:${join(dir, "ledger.db")}`);
mark("open memory: and sqlite: stores");
const toolHost = {
  specs: () => [
    {
      name: "add",
      description: "Add two integers and return their sum.",
      inputSchema: {
        type: "object",
        properties: { a: { type: "integer" }, b: { type: "integer" } },
        required: ["a", "b"],
        additionalProperties: false,
      },
      effect: "observation",
    },
  ],
  call: async (_name, args) => toolAnswer(String(args.a + args.b)),
};
const registry = registryOf(toolHost).value;
mark("tool registry (Ajv loaded, the tool schema compiled)");

const call = {
  kind: "tool_calls",
  summary: "add",
  tool_calls: [{ name: "add", arguments_json: '{"a":1,"b":2}' }],
  message: null,
};
const final = {
  kind: "message",
  summary: "done",
  tool_calls: [],
  message: {
    type: "Result",
    payload_json: JSON.stringify({ summary: "done", outcome: "done", evidence: [] }),
    paper_ref: null,
  },
};
const answers = [...Array.from({ length: n - 1 }, () => call), final];
const passage = (i) =>
  runPassage({
    role: "summarizer",
    agentId: "agent:bench-adder",
    system: "profile",
    evidence: `loop ${i}`,
    registry,
    toolHost,
    provider: createScriptedModel(answers),
    limits: { maxTurns: n, maxTokens: 1_000_000 },
    repairs: 0,
  });

const loops = [];
const LOOPS = Math.max(5, Math.ceil(3000 / n));
for (let i = 0; i < LOOPS; i++) {
  const t0 = performance.now();
  const out = await passage(i);
  const t1 = performance.now();
  const record = transcriptRecord(`query:profile-${i}`, out.transcript);
  const t2 = performance.now();
  await memory.putRecords([record]);
  const t3 = performance.now();
  await sqlite.putRecords([record]);
  const t4 = performance.now();
  if (i === 0) mark("first loop (code warming up; contract validators are precompiled)");
  loops.push({
    passageMs: t1 - t0,
    transcriptRecordMs: t2 - t1,
    memoryPutMs: t3 - t2,
    sqlitePutMs: t4 - t3,
    transcriptBytes: record.body === undefined ? 0 : JSON.stringify(record.body).length,
  });
}
await sqlite.close();
rmSync(dir, { recursive: true, force: true });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const warm = loops.slice(Math.ceil(loops.length / 2));
const perLoop = Object.fromEntries(
  Object.keys(warm[0]).map((k) => [k, ms(median(warm.map((l) => l[k])))]),
);
process.stdout.write(
  `${JSON.stringify(
    {
      n,
      phases,
      warmLoopMedians: perLoop,
      warmUsPerStep: {
        passage: ms((perLoop.passageMs * 1000) / n),
        transcriptRecord: ms((perLoop.transcriptRecordMs * 1000) / n),
        memoryPut: ms((perLoop.memoryPutMs * 1000) / n),
        sqlitePut: ms((perLoop.sqlitePutMs * 1000) / n),
      },
      peakRssMB: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10,
    },
    null,
    2,
  )}\n`,
);
