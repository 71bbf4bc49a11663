// The text sent back to a model whose turn was invalid: what is wrong, one line per distinct fault,
// each naming the tool or message type it concerns and the JSON Pointer inside it; capped, so a turn
// with thousands of faults still gets a short answer.
import type { Problem } from "../result.js";

export const MAX_REPAIR_LINES = 20;
/** A line quotes what the model wrote (a tool name, a JSON error): it is cut at this length. */
const MAX_LINE_CHARS = 400;

function line(e: Problem): string {
  const text =
    e.message.length <= MAX_LINE_CHARS ? e.message : `${e.message.slice(0, MAX_LINE_CHARS)}…`;
  return `- ${text} [${e.code}]`;
}

export function repairText(errors: readonly Problem[]): string {
  const lines = [...new Set(errors.map(line))];
  const listed = lines.slice(0, MAX_REPAIR_LINES);
  if (lines.length > MAX_REPAIR_LINES) {
    listed.push(`- … and ${lines.length - MAX_REPAIR_LINES} more`);
  }
  return [
    "Your last answer was invalid, and nothing in it was executed:",
    ...listed,
    "Answer again with these fixed: tool calls, or one message alone.",
  ].join("\n");
}
