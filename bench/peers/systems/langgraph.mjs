// The loop in LangGraph.js: the documented tool-calling graph (StateGraph over MessagesAnnotation,
// an agent node, the prebuilt ToolNode, toolsCondition) with a custom BaseChatModel that answers at
// once, one zod-checked `add` tool, LangSmith tracing off.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { ARGUMENTS_JSON, PROMPT, TOOL_DESCRIPTION, TOOL_NAME } from "../script.mjs";

export const system = "langgraph";
export const packageName = "@langchain/langgraph";

/** Sum of the `add` results among the messages the graph sent to this call. */
function seenSum(messages) {
  let sum = 0;
  for (const m of messages) if (ToolMessage.isInstance(m)) sum += Number(m.content);
  return sum;
}

/** LangChain's extension point for a chat model: `BaseChatModel._generate`. */
class InstantChatModel extends BaseChatModel {
  constructor(script) {
    super({});
    this.script = script;
  }

  _llmType() {
    return "instant";
  }

  bindTools() {
    return this;
  }

  async _generate(messages) {
    const i = this.script.next();
    const message =
      i >= 0
        ? new AIMessage({
            content: "",
            // A provider integration parses the model's arguments JSON into `args`.
            tool_calls: [
              {
                id: `call_${i}`,
                name: TOOL_NAME,
                args: JSON.parse(ARGUMENTS_JSON),
                type: "tool_call",
              },
            ],
          })
        : new AIMessage({ content: this.script.finalText(seenSum(messages)) });
    return {
      generations: [{ text: typeof message.content === "string" ? message.content : "", message }],
    };
  }
}

export async function create(script) {
  const add = tool(async ({ a, b }) => String(script.add(a, b)), {
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    schema: z.object({ a: z.number().int(), b: z.number().int() }).strict(),
  });
  const model = new InstantChatModel(script).bindTools([add]);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", new ToolNode([add]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile();
  return {
    async runLoop() {
      const state = await graph.invoke(
        { messages: [new HumanMessage(PROMPT)] },
        { recursionLimit: 2 * script.n + 1 },
      );
      const last = state.messages.at(-1);
      return typeof last?.content === "string" ? last.content : undefined;
    },
    async close() {},
  };
}
