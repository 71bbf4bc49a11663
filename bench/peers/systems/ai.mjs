// The loop in the Vercel AI SDK: generateText with a hand-written LanguageModelV3 that answers at
// once, one zod-checked `add` tool, stopWhen stepCountIs(n), telemetry off.
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import { ARGUMENTS_JSON, PROMPT, TOOL_DESCRIPTION, TOOL_NAME } from "../script.mjs";

export const system = "ai";
export const packageName = "ai";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** Sum of the `add` results in the prompt the SDK built for this call. */
function seenSum(prompt) {
  let sum = 0;
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-result" && part.output.type === "json") sum += part.output.value;
    }
  }
  return sum;
}

export async function create(script) {
  // The documented shape of a custom model (what MockLanguageModelV3 implements), without the mock's
  // recording of every call, which would retain each step's prompt.
  const model = {
    specificationVersion: "v3",
    provider: "bench",
    modelId: "instant",
    supportedUrls: {},
    async doGenerate(options) {
      const i = script.next();
      if (i >= 0) {
        return {
          content: [
            {
              type: "tool-call",
              toolCallId: `call_${i}`,
              toolName: TOOL_NAME,
              input: ARGUMENTS_JSON,
            },
          ],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        };
      }
      return {
        content: [{ type: "text", text: script.finalText(seenSum(options.prompt)) }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      };
    },
    async doStream() {
      throw new Error("not used");
    },
  };
  const tools = {
    [TOOL_NAME]: tool({
      description: TOOL_DESCRIPTION,
      inputSchema: z.object({ a: z.number().int(), b: z.number().int() }).strict(),
      execute: async ({ a, b }) => script.add(a, b),
    }),
  };
  return {
    async runLoop() {
      const result = await generateText({
        model,
        tools,
        prompt: PROMPT,
        stopWhen: stepCountIs(script.n),
        maxRetries: 0,
        experimental_telemetry: { isEnabled: false },
      });
      return result.text;
    },
    async close() {},
  };
}
