// Turn validation cost: µs per turn for a tool-call turn and a message turn through validateTurn,
// against a floor of JSON.parse plus one compiled Ajv validator (the seed schema) per turn.
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { payloadValidators } from "../../src/core/turn/payload-schemas.js";
import { createToolRegistry } from "../../src/core/turn/tool-registry.js";
import { validateTurn } from "../../src/core/turn/validate-turn.js";
import { measureSync, round } from "../util.js";
import type { BenchSuite } from "./index.js";

const TOOL_CALL_TURN = JSON.stringify({
  kind: "tool_calls",
  summary: "read the failing test and the implementation",
  tool_calls: [
    {
      name: "workspace.read_file",
      arguments_json: JSON.stringify({ path: "test/slugify.test.js" }),
    },
    {
      name: "workspace.search_text",
      arguments_json: JSON.stringify({ pattern: "slugify", path: "src" }),
    },
  ],
  message: null,
});

const MESSAGE_TURN = JSON.stringify({
  kind: "message",
  summary: "propose the fix",
  tool_calls: [],
  message: {
    type: "Plan",
    payload_json: JSON.stringify({
      hypothesis: "slugify keeps a trailing dash when the input ends with punctuation",
      steps: [
        { id: "s1", action: "observe", profile: "npm-test", args: { filter: "slugify" } },
        {
          id: "s2",
          action: "patch",
          path: "src/slugify.js",
          diff: "--- a/src/slugify.js\n+++ b/src/slugify.js\n@@ -1 +1 @@\n-a\n+b\n",
        },
        { id: "s3", action: "command", profile: "npm-test", args: { filter: "slugify" } },
      ],
      expected_checks: ["unit-tests"],
    }),
    paper_ref: null,
  },
});

const PATH = { type: "string", minLength: 1 };

export const turnSuite: BenchSuite = {
  name: "turn",
  run: async () => {
    const registry = createToolRegistry([
      {
        name: "workspace.read_file",
        description: "",
        effect: "observation",
        inputSchema: {
          type: "object",
          properties: { path: PATH },
          required: ["path"],
          additionalProperties: false,
        },
      },
      {
        name: "workspace.search_text",
        description: "",
        effect: "observation",
        inputSchema: {
          type: "object",
          properties: { pattern: PATH, path: PATH },
          required: ["pattern"],
          additionalProperties: false,
        },
      },
    ]);
    if (!registry.ok) throw new Error("bench registry did not compile");
    const ctx = { registry: registry.value, role: "implementer" as const };
    for (const t of [TOOL_CALL_TURN, MESSAGE_TURN]) {
      if (!validateTurn(t, ctx).ok) throw new Error("bench turn is invalid");
    }
    const seed = contractValidators().modelTurn;
    const opts = { iterations: 5000, repeats: 9 };
    const floorToolCall = measureSync(() => seed(JSON.parse(TOOL_CALL_TURN)), opts);
    const floorMessage = measureSync(() => seed(JSON.parse(MESSAGE_TURN)), opts);
    // The same parses and validators validateTurn runs, with none of its bookkeeping.
    const readFile = registry.value.get("workspace.read_file")?.validate;
    const search = registry.value.get("workspace.search_text")?.validate;
    const plan = payloadValidators().Plan;
    if (readFile === undefined || search === undefined) throw new Error("bench tools missing");
    const allToolCall = measureSync(() => {
      const t = JSON.parse(TOOL_CALL_TURN);
      seed(t);
      readFile(JSON.parse(t.tool_calls[0].arguments_json));
      search(JSON.parse(t.tool_calls[1].arguments_json));
    }, opts);
    const allMessage = measureSync(() => {
      const t = JSON.parse(MESSAGE_TURN);
      seed(t);
      plan(JSON.parse(t.message.payload_json));
    }, opts);
    const toolCall = measureSync(() => validateTurn(TOOL_CALL_TURN, ctx), opts);
    const message = measureSync(() => validateTurn(MESSAGE_TURN, ctx), opts);
    return {
      unit: "µs per turn (median of 9 × 5000)",
      toolCallTurn: {
        validateTurn: toolCall,
        floor: floorToolCall,
        ratio: round(toolCall.medianUs / floorToolCall.medianUs),
        everyParseAndValidator: allToolCall,
        ratioToEvery: round(toolCall.medianUs / allToolCall.medianUs),
      },
      messageTurn: {
        validateTurn: message,
        floor: floorMessage,
        ratio: round(message.medianUs / floorMessage.medianUs),
        everyParseAndValidator: allMessage,
        ratioToEvery: round(message.medianUs / allMessage.medianUs),
      },
      floor: "JSON.parse of the turn + the compiled seed-schema validator, nothing else",
      everyParseAndValidator:
        "every JSON.parse and compiled validator validateTurn runs (turn, arguments, payload), without its checks and bookkeeping",
    };
  },
};
