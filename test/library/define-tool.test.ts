// Tools written in code (defineTool): offered to passages beside the workspace tools as observation
// tools, their input checked against their JSON Schema (and a Standard Schema's own validator), a
// throw read by the model as an error result, and a name taken twice refusing the passage's tools.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createWarrant,
  defineTool,
  type ModelFunction,
  type ModelRequest,
  type StandardSchema,
  WarrantError,
  type WarrantEvent,
} from "../../src/index.js";
import { fakeSandbox, memoryStore } from "../../src/testing.js";
import { accept, fixtures, plan, result, turn } from "../runtime/harness.js";

const PACK = path.join(fixtures, "task-pack.json");

const callTool = (name: string, args: unknown) => ({
  kind: "tool_calls",
  summary: `call ${name}`,
  tool_calls: [{ name, arguments_json: JSON.stringify(args) }],
  message: null,
});

const lookup = defineTool({
  name: "issues.lookup",
  description: "Look up an issue by number.",
  inputSchema: {
    type: "object",
    properties: { number: { type: "integer" } },
    required: ["number"],
    additionalProperties: false,
  },
  execute: async ({ number }) => ({ number, title: `issue ${String(number)}` }),
});

describe("defineTool", () => {
  it("is an observation tool whose answer is its text, or its JSON", async () => {
    expect(lookup.spec).toMatchObject({ name: "issues.lookup", effect: "observation" });
    expect(await lookup.call({ number: 7 }, {})).toEqual({
      ok: true,
      isError: false,
      content: '{"number":7,"title":"issue 7"}',
    });
    const text = defineTool({
      name: "echo",
      description: "echo",
      inputSchema: { type: "object" },
      execute: (input) => `got ${JSON.stringify(input)}`,
    });
    expect((await text.call({ a: 1 }, {})).content).toBe('got {"a":1}');
  });

  it("turns a throw into an error result the model reads", async () => {
    const broken = defineTool({
      name: "broken",
      description: "always fails",
      inputSchema: { type: "object" },
      execute: () => {
        throw new Error("the index is offline");
      },
    });
    expect(await broken.call({}, {})).toEqual({
      ok: true,
      isError: true,
      content: "the tool failed: the index is offline",
    });
  });

  it("takes a Standard Schema (zod): its JSON Schema is offered, its validator shapes the input", async () => {
    const seen: unknown[] = [];
    const shout = defineTool({
      name: "text.shout",
      description: "Upper-cases a word.",
      inputSchema: z.object({
        word: z
          .string()
          .min(1)
          .transform((w) => w.toUpperCase()),
      }),
      execute: ({ word }) => {
        seen.push(word);
        return word;
      },
    });
    expect(shout.spec.inputSchema).toMatchObject({
      type: "object",
      properties: { word: { type: "string", minLength: 1 } },
      required: ["word"],
    });
    expect(await shout.call({ word: "quiet" }, {})).toMatchObject({
      isError: false,
      content: "QUIET",
    });
    const refused = await shout.call({ word: "" }, {});
    expect(refused.isError).toBe(true);
    expect(refused.content).toMatch(/^invalid arguments: \/word: /);
    expect(seen).toEqual(["QUIET"]);
  });

  it("refuses a Standard Schema that exposes no JSON Schema (tool/input-schema)", () => {
    const opaque: StandardSchema = {
      "~standard": {
        version: 1,
        vendor: "opaque",
        validate: (value: unknown) => ({ value }),
      },
    } as unknown as StandardSchema;
    expect(() =>
      defineTool({ name: "opaque", description: "x", inputSchema: opaque, execute: () => "" }),
    ).toThrow(expect.objectContaining({ code: "tool/input-schema" }));
  });
});

describe("code tools in passages", () => {
  it("an implementer calls a code tool, reads its answer, then plans; the events name it a code tool", async () => {
    const requests: ModelRequest[] = [];
    const turns = [callTool("issues.lookup", { number: 42 }), turn("Plan", plan("good-fix"))];
    const implementer: ModelFunction = async (request) => {
      requests.push(request);
      const next = turns.shift();
      if (next === undefined) throw new WarrantError("model/script-exhausted", "done");
      return next as never;
    };
    const events: WarrantEvent[] = [];
    const warrant = await createWarrant({
      store: memoryStore(),
      models: {
        implementer,
        reviewer: async () => accept as never,
        summarizer: async () => result as never,
      },
      tools: [lookup],
      sandbox: fakeSandbox(),
      approver: "auto",
      signer: "none",
      onEvent: (e) => events.push(e),
    });
    const outcome = await warrant.run(PACK).result;
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("succeeded");
    expect(requests[0]?.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["workspace.read_file", "issues.lookup"]),
    );
    const fedBack = requests[1]?.conversation.find((c) => c.kind === "tool-results");
    expect(fedBack).toMatchObject({
      results: [{ name: "issues.lookup", content: '{"number":42,"title":"issue 42"}' }],
    });
    const calls = events.filter((e) => e.kind === "tool-call-start" || e.kind === "tool-call-end");
    expect(calls).toMatchObject([
      { kind: "tool-call-start", name: "issues.lookup", tool: "code" },
      { kind: "tool-call-end", name: "issues.lookup", tool: "code", isError: false },
    ]);
    expect(calls[0]?.kind === "tool-call-start" && calls[0].callId).toMatch(/#0\.0$/);
  });

  it("a code tool named like a workspace tool refuses the passage's tools and blocks the loop (tool)", async () => {
    const clash = defineTool({
      name: "workspace.read_file",
      description: "shadows the workspace",
      inputSchema: { type: "object" },
      execute: () => "",
    });
    const warrant = await createWarrant({
      store: memoryStore(),
      models: { implementer: async () => "", reviewer: async () => "", summarizer: async () => "" },
      tools: [clash],
      sandbox: fakeSandbox(),
      signer: "none",
    });
    const outcome = await warrant.run(PACK).result;
    expect(outcome).toMatchObject({ status: "blocked", reason: "tool" });
    if (outcome.status === "blocked") expect(outcome.detail).toContain("tool/duplicate-name");
  });
});
