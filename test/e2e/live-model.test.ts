// `warrant run --model implementer=openai-compatible:URL#MODEL` drives a live model over the OpenAI
// wire format, here a local server on 127.0.0.1 answering with the demo's plans.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/cli.js";
import { startWireServer, type WireReply } from "../models/wire-server.js";
import { demoPack, scripted, startRun } from "./cli-run.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A chat completion that calls a message tool (named after the type) with one of the demo implementer's turns. */
function completion(
  turn: { message: { type: string; payload_json: string } },
  n: number,
): WireReply {
  return {
    status: 200,
    headers: { "content-type": "application/json" },
    body: {
      id: `chatcmpl-${n}`,
      object: "chat.completion",
      created: 1_764_000_000 + n,
      model: "local-model",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: `call_${n}`,
                type: "function",
                function: { name: turn.message.type, arguments: turn.message.payload_json },
              },
            ],
            refusal: null,
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 500, completion_tokens: 120, total_tokens: 620 },
    },
  };
}

describe("warrant run with a live model", () => {
  it("drives the implementer over the OpenAI wire format to a verified run", async () => {
    const turns = readFileSync(
      path.join(repoRoot, "examples/fix-failing-test/scripted/implementer.jsonl"),
      "utf8",
    )
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { message: { type: string; payload_json: string } | null })
      // The plans alone: the scripted turn that reads a file first is not replayed here.
      .flatMap((t) => (t.message === null ? [] : [{ message: t.message }]));
    const server = await startWireServer(turns.map(completion));
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-live-"));
    dirs.push(cwd);
    try {
      const run = startRun(
        [
          demoPack,
          "--model",
          `implementer=openai-compatible:${server.url}/v1#local-model`,
          "--model",
          scripted("reviewer"),
          "--model",
          scripted("summarizer"),
          "--yes",
        ],
        cwd,
        { OPENAI_API_KEY: "sk-test-secret-0000" },
      );
      const r = await run.done;
      expect(r.stdout).toContain("loop stopped: succeeded");
      expect(r.code).toBe(0);
      expect(server.requests).toHaveLength(3);
      const first = server.requests[0];
      expect(first?.path).toBe("/v1/chat/completions");
      expect(first?.body.model).toBe("local-model");
      expect(JSON.stringify(first?.body.messages)).toContain("slugify");
      // The implementer's first request carries the Plan payload schema as the Plan tool.
      const tools = first?.body.tools as { function: { name: string; parameters: unknown } }[];
      expect(tools.map((t) => t.function.name)).toEqual(
        expect.arrayContaining(["Plan", "Question", "DeadEnd", "Finding"]),
      );
      const plan = JSON.stringify(
        tools.find((t) => t.function.name === "Plan")?.function.parameters,
      );
      expect(plan).toContain('"hypothesis"');
      expect(plan).toContain('"enum":["observe","patch","command"]');
      // The second request carries the first run's failed verification back to the model.
      expect(JSON.stringify(server.requests[1]?.body.messages)).toContain("tests-pass: failed");
      // The key went to the server, and nowhere else.
      expect(r.stdout + r.stderr).not.toContain("sk-test-secret-0000");
      expect(
        readFileSync(path.join(cwd, ".warrant/ledger.db")).includes("sk-test-secret-0000"),
      ).toBe(false);
    } finally {
      await server.close();
    }
  });
});
