// The protocol part of a passage's system prompt, appended by every provider mode: how a turn is
// given (native tool calls plus one message tool per type, or one JSON turn), and the role's rules
// that a schema cannot state. Task-specific guidance belongs to the agent definition and the task
// pack, never here.
import type { Role } from "../../core/loop/types.js";
import type { ProviderTool } from "../../core/ports/model-provider.js";
import { PLAN_STEP_ACTIONS } from "../../core/turn/provider-payload-schema.js";
import type { MessageType } from "../../core/turn/types.js";

const PLAN_RULES = [
  "Plan rules (the host refuses a plan that breaks them):",
  `- Each step's action is one of ${PLAN_STEP_ACTIONS.join(", ")}; steps run in order, each step id unique.`,
  '- The first step is an observation: action "observe".',
  '- "observe": either profile + args (an observation command profile of the task pack, args valid against its args schema) or read (workspace paths).',
  '- "patch": path plus exactly one of diff (a unified diff of that file only) or content (its whole new text); only paths the task\'s patch policy allows, within its size limit; no renames, symlinks or mode changes.',
  '- "command": profile + args of a mutation command profile of the task pack.',
];

const VERDICT_RULES = [
  "Verdict decisions:",
  '- "accept": the proposal goes on to admission and runs.',
  '- "reject": the proposal is refused; it never runs, and your findings go back to the implementer.',
  '- "request-regeneration": the implementer is asked for a new proposal; this one never runs, and your findings go back with the request.',
];

/** What the role's messages do, beyond their schemas. */
function roleRules(role: Role): string[] {
  switch (role) {
    case "implementer":
      return [
        ...PLAN_RULES,
        "A Question stops the loop until an operator answers; ask only what the tools cannot tell you.",
        "A DeadEnd goes to the operator with what you tried.",
      ];
    case "reviewer":
      return VERDICT_RULES;
    case "adversarial-critic":
      return [
        'A Finding of severity "high" or "critical", or a DeadEnd, stops the accepted proposal from running and sends it back to the implementer; "info", "low" and "medium" let it go on.',
      ];
    case "summarizer":
      return ["The Result reports what the loop established, with its evidence."];
    default:
      return role satisfies never;
  }
}

function endRule(messageTypes: readonly MessageType[]): string {
  return `Exactly one message ends the passage: one of ${messageTypes.join(", ")}, given alone, once you are done.`;
}

export function toolModeInstructions(role: Role, messageTypes: readonly MessageType[]): string {
  return [
    "Every answer calls one or more tools.",
    "The tools named in lower case observe; their results come back to you.",
    `The tools named ${messageTypes.join(", ")} each emit that message: their arguments are its payload.`,
    endRule(messageTypes),
    ...roleRules(role),
  ].join("\n");
}

export function jsonModeInstructions(
  role: Role,
  messageTypes: readonly MessageType[],
  tools: readonly ProviderTool[],
): string {
  const list = tools.map(
    (t) => `- ${t.name}: ${t.description}\n  arguments schema: ${JSON.stringify(t.inputSchema)}`,
  );
  return [
    "Answer every turn with one JSON object (a model turn), as the response schema describes:",
    '- to call tools: {"kind":"tool_calls","summary":…,"tool_calls":[{"name":…,"arguments_json":"<JSON object as text>"}],"message":null}; their results come back to you.',
    '- to emit a message: {"kind":"message","summary":…,"tool_calls":[],"message":{"type":…,"payload":{…},"paper_ref":null}}, the payload as the schema gives it for that type.',
    endRule(messageTypes),
    ...roleRules(role),
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
