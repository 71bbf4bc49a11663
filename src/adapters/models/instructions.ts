// The fixed instructions each provider mode appends to a passage's system prompt: how a turn is
// given (native tool calls plus the message tool, or one JSON turn), and the tool list in JSON mode.
import type { ProviderTool } from "../../core/turn/model-provider.js";
import { MESSAGE_TOOL_NAME } from "../../core/turn/provider-schema.js";

export function toolModeInstructions(messageTypes: readonly string[]): string {
  return [
    "Every answer is a call of one or more tools.",
    `To finish, call ${MESSAGE_TOOL_NAME} alone with one of these message types: ${messageTypes.join(", ")}.`,
  ].join("\n");
}

export function jsonModeInstructions(
  messageTypes: readonly string[],
  tools: readonly ProviderTool[],
): string {
  const list = tools.map(
    (t) => `- ${t.name}: ${t.description}\n  arguments schema: ${JSON.stringify(t.inputSchema)}`,
  );
  return [
    "Answer every turn with one JSON object (a model turn):",
    '- to call tools: {"kind":"tool_calls","summary":…,"tool_calls":[{"name":…,"arguments_json":"<JSON object as text>"}],"message":null}',
    `- to finish: {"kind":"message","summary":…,"tool_calls":[],"message":{"type":…,"payload_json":"<JSON as text>","paper_ref":null}} with type one of ${messageTypes.join(", ")}`,
    tools.length === 0 ? "No tools are available." : "Tools:",
    ...list,
  ].join("\n");
}

/** What replaces the content of calls a rejected turn made: none of them ran. */
export const NOT_EXECUTED = "Not executed: the turn was invalid (see the errors).";

/** Tool results as one user text, for providers answered without native tool calls. */
export function toolResultsText(
  results: readonly { name: string; content: string; isError: boolean }[],
): string {
  return `Tool results:\n${JSON.stringify(results.map((r) => ({ name: r.name, is_error: r.isError, content: r.content })))}`;
}
