// The loop in the OpenAI Agents SDK: a Runner over one Agent whose custom `Model` answers at once,
// one zod-checked `add` function tool, maxTurns n, tracing disabled.
import { Agent, Runner, setTracingDisabled, tool, Usage } from "@openai/agents";
import { z } from "zod";
import { ARGUMENTS_JSON, PROMPT, TOOL_DESCRIPTION, TOOL_NAME } from "../script.mjs";

export const system = "openai-agents";
export const packageName = "@openai/agents";

function resultValue(output) {
  if (typeof output === "string") return Number(output);
  if (output && output.type === "text") return Number(output.text);
  return Number.NaN;
}

/** Sum of the `add` results among the input items the runner sent to this call. */
function seenSum(input) {
  let sum = 0;
  if (typeof input === "string") return sum;
  for (const item of input) {
    if (item.type === "function_call_result") sum += resultValue(item.output);
  }
  return sum;
}

function usage() {
  return new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
}

/** The SDK's extension point for any model: `Model.getResponse`. */
class InstantModel {
  constructor(script) {
    this.script = script;
  }

  async getResponse(request) {
    const i = this.script.next();
    if (i >= 0) {
      return {
        usage: usage(),
        output: [
          {
            type: "function_call",
            id: `fc_${i}`,
            callId: `call_${i}`,
            name: TOOL_NAME,
            arguments: ARGUMENTS_JSON,
            status: "completed",
          },
        ],
      };
    }
    return {
      usage: usage(),
      output: [
        {
          type: "message",
          id: "msg_final",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: this.script.finalText(seenSum(request.input)) }],
        },
      ],
    };
  }

  // biome-ignore lint/correctness/useYield: streaming is not part of this loop.
  async *getStreamedResponse() {
    throw new Error("not used");
  }
}

export async function create(script) {
  setTracingDisabled(true);
  const model = new InstantModel(script);
  const add = tool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: z.object({ a: z.number().int(), b: z.number().int() }).strict(),
    strict: true,
    execute: async ({ a, b }) => script.add(a, b),
  });
  const agent = new Agent({ name: "adder", instructions: PROMPT, model, tools: [add] });
  const runner = new Runner({
    modelProvider: { getModel: () => model },
    tracingDisabled: true,
    traceIncludeSensitiveData: false,
  });
  return {
    async runLoop() {
      const result = await runner.run(agent, PROMPT, { maxTurns: script.n });
      return result.finalOutput;
    },
    async close() {},
  };
}
