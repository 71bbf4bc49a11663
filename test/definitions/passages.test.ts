// The agent definition drives the passage: a definition's openai-compatible model answers through
// the local wire server (so the requests show what the model was given), its skill is read with
// skill.read, its read-only memory is in the system prompt, memory.write is a record the next
// passage sees, a sub-agent call is a nested charged passage whose result reaches the parent,
// declared tools are all a passage is offered (with the built-in ones), and overrides are recorded.
import { afterEach, describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { auditLoop } from "../../src/core/loop/audit.js";
import type { LedgerRecord, LedgerStore } from "../../src/core/ports/ledger-store.js";
import { contentRef, digestOf } from "../../src/core/records/canonical.js";
import type { MemoryWriteBody } from "../../src/core/records/memory-write.js";
import { defineTool } from "../../src/library/define-tool.js";
import type { PassageEndBody } from "../../src/runtime/records.js";
import { keySigner } from "../../src/runtime/records.js";
import { startWireServer, type WireServer } from "../models/wire-server.js";
import { accept, HOST_KEY, harness, plan, reject, result } from "../runtime/harness.js";
import {
  call,
  completion,
  DEMO,
  definition,
  folder,
  jsonl,
  says,
  type Turn,
  type Written,
  writePack,
} from "./fixture.js";

const servers: WireServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const goodFix = says("Plan", plan("good-fix"));

/** An implementer on an openai-compatible model the wire server answers with `turns`. */
async function implementerPack(
  turns: readonly Turn[],
  extra: (w: Written) => Promise<Record<string, unknown>> = async () => ({}),
): Promise<{ w: Written; server: WireServer; pack: string }> {
  const server = await startWireServer(turns.map(completion));
  servers.push(server);
  const w = folder();
  w.write(
    "agents/skills/notes/SKILL.md",
    "---\nname: notes\ndescription: How to keep notes on slugify.\n---\nThe examples are in reference.md.\n",
  );
  w.write("agents/skills/notes/reference.md", "REFERENCE: slugs keep digits.\n");
  w.write("agents/memory/facts.md", "FACT: the tests are never edited.\n");
  const implementer = definition("implementer", {
    models: [{ provider: "openai-compatible", model: "local-model" }],
    skills: [{ name: "notes", cid: await w.cid("agents/skills/notes") }],
    memory: [
      {
        path: "memory/facts.md",
        backend: "filesystem",
        writable: false,
        cid: await w.cid("agents/memory/facts.md"),
      },
      { path: "notes.md", backend: "store", writable: true, scope: { kind: "shared" } },
    ],
    ...(await extra(w)),
  });
  w.write("agents/implementer.json", JSON.stringify(implementer));
  const pack = writePack(
    w,
    {
      implementer: "agents/implementer.json",
      reviewer: `${DEMO}/../agents/reviewer.json`,
      summarizer: `${DEMO}/../agents/summarizer.json`,
    },
    { openaiCompatibleBaseUrl: `${server.url}/v1` },
  );
  return { w, server, pack };
}

const systemOf = (server: WireServer, n: number): string => {
  const messages = server.requests[n]?.body.messages as { role: string; content: string }[];
  return messages[0]?.content ?? "";
};
const toolMessages = (server: WireServer, n: number): string[] =>
  ((server.requests[n]?.body.messages ?? []) as { role: string; content: string }[])
    .filter((m) => m.role === "tool")
    .map((m) => m.content);
const toolNames = (server: WireServer, n: number): string[] =>
  ((server.requests[n]?.body.tools ?? []) as { function: { name: string } }[]).map(
    (t) => t.function.name,
  );

describe("a definition drives its passages", () => {
  it("skill.read returns SKILL.md and a file it refers to, confined to the skill; skills and memory are in the system prompt", async () => {
    const { server, pack } = await implementerPack([
      call("skill.read", { name: "notes" }),
      call("skill.read", { name: "notes", path: "reference.md" }),
      call("skill.read", { name: "notes", path: "../../memory/facts.md" }),
      goodFix,
    ]);
    const h = await harness(
      { reviewer: [accept], summarizer: [result] },
      { pack, definitionRoles: ["implementer"] },
    );
    const outcome = await h.drive();
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("succeeded");

    const system = systemOf(server, 0);
    expect(system).toContain("You are implementer.");
    expect(system).toContain("- notes: How to keep notes on slugify.");
    expect(system).toContain("FACT: the tests are never edited.");
    expect(system).toContain("Memory notes.md (yours to change with memory.write; empty)");
    expect(toolNames(server, 0)).toEqual(expect.arrayContaining(["skill__read", "memory__write"]));
    expect(toolMessages(server, 1).at(-1)).toContain("The examples are in reference.md.");
    expect(toolMessages(server, 2).at(-1)).toContain("REFERENCE: slugs keep digits.");
    expect(toolMessages(server, 3).at(-1)).toMatch(/^error: skill notes has no file/);

    const records = await h.store.listRecords(h.query);
    const transcript = records.find(
      (r) => r.kind === "transcript" && (r.body as { role: string }).role === "implementer",
    )?.body as Record<string, unknown>;
    expect(transcript.skills).toEqual([
      { name: "notes", cid: expect.stringMatching(/^bagaachra/) },
    ]);
    expect(transcript.memory).toMatchObject({
      "read-only": [{ path: "memory/facts.md" }],
      writable: [{ path: "notes.md", version: 0, digest: null }],
    });
  });

  it("memory.write is a record with its digests, and the next passage reads what it wrote", async () => {
    const { server, pack } = await implementerPack([
      call("memory.write", { path: "notes.md", content: "remember: NFKD first" }),
      goodFix,
      goodFix,
    ]);
    const h = await harness(
      { reviewer: [reject, accept], summarizer: [result] },
      { pack, definitionRoles: ["implementer"] },
    );
    const outcome = await h.drive();
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("succeeded");

    const writes = (await h.store.listRecords(h.query)).filter((r) => r.kind === "memoryWrite");
    expect(writes.map((r) => r.body)).toEqual([
      expect.objectContaining({
        memory: { path: "notes.md", scope: "shared", namespace: "" },
        version: 1,
        ordinal: 1,
        "before/digest": null,
        "after/digest": digestOf("remember: NFKD first"),
      }),
    ]);
    // The first passage saw it empty; the second (after the rejection) sees what was written.
    expect(systemOf(server, 0)).not.toContain("remember: NFKD first");
    expect(systemOf(server, 2)).toContain(
      "Memory notes.md (yours to change with memory.write; version 1)",
    );
    expect(systemOf(server, 2)).toContain("remember: NFKD first");

    const audit = async () => {
      const r = await auditLoop({
        query: h.query,
        rows: await h.store.readRawLoop(h.query),
        acts: await h.store.readOperatorActs(h.query),
        now: h.clock.now(),
      });
      return r.ok ? [] : r.errors.map((e) => e.code);
    };
    expect(await audit()).toEqual([]);

    // The audit knows the record: one of no passage of the loop, or naming another agent, is found.
    const body = writes[0]?.body as MemoryWriteBody;
    const signer = keySigner(HOST_KEY);
    const forged = async (b: MemoryWriteBody) => {
      const signedBody = await signer.sign({ ...b });
      return {
        ref: contentRef("warrant-memory-write", signedBody as Record<string, unknown>, "ref"),
        kind: "memoryWrite",
        query: h.query,
        body: signedBody,
      };
    };
    await h.store.putRecords([await forged({ ...body, "passage/ref": "passage:sha256:nowhere" })]);
    expect(await audit()).toEqual(["records/orphan"]);
    const store2 = new MemoryLedgerStore();
    for (const f of await h.store.readFacts(h.query)) {
      const ok = await store2.append({
        query: h.query,
        expectedLastSequence: f.fact.sequence - 1,
        facts: [f.fact],
      });
      expect(ok.ok).toBe(true);
    }
    const kept = (await h.store.listRecords(h.query)).filter(
      (r) =>
        !(
          r.kind === "memoryWrite" &&
          (r.body as MemoryWriteBody)["passage/ref"] === "passage:sha256:nowhere"
        ),
    );
    await store2.putRecords(kept);
    await store2.putRecords([
      await forged({ ...body, "agent/id": "agent:someone-else", ordinal: 9 }),
    ]);
    const other = await auditLoop({
      query: h.query,
      rows: await store2.readRawLoop(h.query),
      acts: await h.store.readOperatorActs(h.query),
      now: h.clock.now(),
    });
    expect(other.ok ? [] : other.errors.map((e) => e.code)).toEqual(["records/mismatch"]);
  });

  it("a sub-agent call is a nested passage charged to the parent's role, its result the tool result", async () => {
    const { server, pack } = await implementerPack(
      [call("agent.helper", { task: "Explain what slugify does wrong." }), goodFix],
      async (w) => {
        w.write(
          "agents/helper.jsonl",
          jsonl([
            call("workspace.read_file", { path: "src/slugify.js" }),
            says("Result", {
              summary: "slugify replaces each separator on its own",
              outcome: "explained",
              evidence: ["src/slugify.js"],
            }),
          ]),
        );
        return {
          subAgents: [
            definition("helper", {
              description: "Explains code.",
              models: [{ provider: "scripted", model: "helper.jsonl" }],
            }),
          ],
        };
      },
    );
    const h = await harness(
      { reviewer: [accept], summarizer: [result] },
      { pack, definitionRoles: ["implementer"] },
    );
    const outcome = await h.drive();
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("succeeded");

    const implementerId = h.pack.agents.implementer?.id as string;
    const charges = (await h.store.readFacts(h.query))
      .map((f) => f.fact.step)
      .filter((s) => s.kind === "passage-charged");
    expect(charges.map((s) => [s.role, s["agent/id"]])).toEqual([
      ["implementer", implementerId],
      ["implementer", `${implementerId}#/subAgents/0`],
      ["reviewer", expect.any(String)],
      ["summarizer", expect.any(String)],
    ]);
    const ends = (await h.store.listRecords(h.query))
      .filter((r) => r.kind === "passageEnd")
      .map((r) => r.body as PassageEndBody);
    const nested = ends.find((e) => e["agent/id"].endsWith("#/subAgents/0"));
    const parent = ends.find((e) => e["agent/id"] === implementerId);
    expect(nested).toMatchObject({
      role: "implementer",
      "parent/ref": parent?.["passage/ref"],
      message: { type: "Result" },
    });
    expect(nested?.["transcript/ref"]).toMatch(/^passage-transcript:/);
    // The parent's next request carries the sub-agent's typed result, naming its passage.
    const answer = JSON.parse(toolMessages(server, 1)[0] ?? "{}") as Record<string, unknown>;
    expect(answer).toMatchObject({
      "passage/ref": nested?.["passage/ref"],
      "transcript/ref": nested?.["transcript/ref"],
      type: "Result",
      payload: { summary: "slugify replaces each separator on its own" },
    });
    expect(outcome.status === "stopped" && outcome.document.spent.passages).toBe(4);
    const audit = await auditLoop({
      query: h.query,
      rows: await h.store.readRawLoop(h.query),
      acts: await h.store.readOperatorActs(h.query),
      now: h.clock.now(),
    });
    expect(audit.ok ? [] : audit.errors).toEqual([]);
  });

  it("a definition that declares tools is offered those (as declared) and the built-in ones only", async () => {
    const schema = {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
      additionalProperties: false,
    };
    const add = defineTool({
      name: "calc.add",
      description: "Adds.",
      inputSchema: schema,
      execute: ({ a, b }) => String((a as number) + (b as number)),
    });
    const sub = defineTool({
      name: "calc.sub",
      description: "Subtracts.",
      inputSchema: schema,
      execute: ({ a, b }) => String((a as number) - (b as number)),
    });
    const { server, pack } = await implementerPack(
      [call("calc.add", { a: 2, b: 3 }), call("calc.sub", { a: 2, b: 3 }), goodFix],
      async () => ({
        tools: [
          { name: "calc.add", description: "Add two numbers (as declared).", inputSchema: schema },
        ],
      }),
    );
    const h = await harness(
      { reviewer: [accept], summarizer: [result] },
      { pack, definitionRoles: ["implementer"], tools: [add, sub] },
    );
    const outcome = await h.drive();
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("succeeded");
    const tools = server.requests[0]?.body.tools as {
      function: { name: string; description: string };
    }[];
    const names = tools.map((t) => t.function.name);
    expect(names).toContain("calc__add");
    expect(names).not.toContain("calc__sub");
    expect(names).toEqual(expect.arrayContaining(["workspace__read_file", "skill__read"]));
    expect(tools.find((t) => t.function.name === "calc__add")?.function.description).toBe(
      "Add two numbers (as declared).",
    );
    expect(toolMessages(server, 1).at(-1)).toBe("5");
    // A tool the definition does not declare is not the passage's: the turn is sent back to repair.
    expect(JSON.stringify(server.requests[2]?.body.messages)).toContain("turn/unknown-tool");
  });

  it("a role the run overrides records model/override in the binding and its passage ends; a definition's role does not", async () => {
    const { pack } = await implementerPack([goodFix]);
    const h = await harness(
      { reviewer: [accept], summarizer: [result] },
      { pack, definitionRoles: ["implementer"] },
    );
    await h.drive();
    const records = await h.store.listRecords(h.query);
    const binding = records.find((r) => r.kind === "binding")?.body as Record<string, unknown>;
    expect(binding["model/override"]).toEqual({
      reviewer: "scripted:reviewer",
      summarizer: "scripted:summarizer",
    });
    expect((binding.models as Record<string, string>).implementer).toMatch(
      /^openai-compatible:http:\/\/127\.0\.0\.1:\d+\/v1#local-model$/,
    );
    const ends = records
      .filter((r) => r.kind === "passageEnd")
      .map((r) => r.body as PassageEndBody);
    expect(ends.map((e) => [e.role, e["model/override"]])).toEqual([
      ["implementer", undefined],
      ["reviewer", "scripted:reviewer"],
      ["summarizer", "scripted:summarizer"],
    ]);
  });

  it("a parent redone after a crash replays its sub-agent's charge and answer: nothing is charged or run twice", async () => {
    const helperCall = call("agent.helper", { task: "Explain slugify." });
    const { pack } = await implementerPack([helperCall, helperCall, goodFix], async (w) => {
      w.write(
        "agents/helper.jsonl",
        jsonl([says("Result", { summary: "explained once", outcome: "explained", evidence: [] })]),
      );
      return {
        subAgents: [
          definition("helper", { models: [{ provider: "scripted", model: "helper.jsonl" }] }),
        ],
      };
    });
    class Crash extends Error {}
    // The host dies right after the nested passage's end lands, before its parent ends.
    const dieAfterNestedEnd = (store: LedgerStore): LedgerStore =>
      new Proxy(store, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver) as unknown;
          if (typeof v !== "function") return v;
          if (prop !== "putRecords") return v.bind(target);
          return async (records: readonly LedgerRecord[], ...rest: unknown[]) => {
            await (v as (...a: unknown[]) => Promise<void>).apply(target, [records, ...rest]);
            const nestedEnd = records.some(
              (r) =>
                r.kind === "passageEnd" && (r.body as PassageEndBody)["parent/ref"] !== undefined,
            );
            if (nestedEnd) throw new Crash("the host died");
          };
        },
      });
    const store = new MemoryLedgerStore();
    const scripts = { reviewer: [accept], summarizer: [result] };
    const first = await harness(scripts, {
      pack,
      store,
      wrapStore: dieAfterNestedEnd,
      definitionRoles: ["implementer"],
    });
    await expect(first.drive()).rejects.toBeInstanceOf(Crash);
    const second = await harness(scripts, { pack, store, definitionRoles: ["implementer"] });
    const outcome = await second.drive();
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("succeeded");

    const nestedCharges = (await store.readFacts(second.query))
      .map((f) => f.fact.step)
      .filter((s) => s.kind === "passage-charged" && s["agent/id"].includes("#"));
    expect(nestedCharges).toHaveLength(1);
    const ends = (await store.listRecords(second.query))
      .filter((r) => r.kind === "passageEnd")
      .map((r) => r.body as PassageEndBody)
      .filter((e) => e["parent/ref"] !== undefined);
    expect(ends).toHaveLength(1);
    expect(ends[0]?.message).toMatchObject({
      type: "Result",
      payload: { summary: "explained once" },
    });
  });

  it("a passage redone after a crash reads memory as its first attempt did, and its write replays", async () => {
    const write = call("memory.write", { path: "notes.md", content: "written once" });
    const { server, pack } = await implementerPack([write, write, goodFix]);
    class Crash extends Error {}
    const dieAfterMemoryWrite = (store: LedgerStore): LedgerStore =>
      new Proxy(store, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver) as unknown;
          if (typeof v !== "function") return v;
          if (prop !== "appendMemory") return v.bind(target);
          return async (...args: unknown[]) => {
            await (v as (...a: unknown[]) => Promise<boolean>).apply(target, args);
            throw new Crash("the host died");
          };
        },
      });
    const store = new MemoryLedgerStore();
    const scripts = { reviewer: [accept], summarizer: [result] };
    const first = await harness(scripts, {
      pack,
      store,
      wrapStore: dieAfterMemoryWrite,
      definitionRoles: ["implementer"],
    });
    await expect(first.drive()).rejects.toBeInstanceOf(Crash);
    const second = await harness(scripts, { pack, store, definitionRoles: ["implementer"] });
    const outcome = await second.drive();
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("succeeded");
    // The redone passage saw the memory empty, as the interrupted one did.
    expect(systemOf(server, 1)).toContain(
      "Memory notes.md (yours to change with memory.write; empty)",
    );
    const writes = (await store.listRecords(second.query)).filter((r) => r.kind === "memoryWrite");
    expect(writes).toHaveLength(1);
    const key = {
      agent: second.pack.agents.implementer?.id as string,
      path: "notes.md",
      scope: "shared" as const,
      namespace: "",
    };
    expect((await store.readMemory(key, "passage:other")).latest).toMatchObject({
      version: 1,
      content: "written once",
    });
  });
});
