// The text sent back to a model whose turn was invalid: its validation errors, one per line, with
// the JSON Pointer of each, and what to do next.
import type { Problem } from "../core/result.js";

const MAX_LISTED = 20;

export function repairText(errors: readonly Problem[]): string {
  const lines = errors
    .slice(0, MAX_LISTED)
    .map((e) => `- ${e.code} at ${e.path === "" ? "(root)" : e.path}: ${e.message}`);
  if (errors.length > MAX_LISTED) lines.push(`- … and ${errors.length - MAX_LISTED} more`);
  return [
    "Your last turn was invalid and nothing in it was executed:",
    ...lines,
    "Answer again with one valid turn.",
  ].join("\n");
}
