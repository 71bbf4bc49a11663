// Prompts and answers in the GenAI conventions' message shape (`{role, parts}`), for the
// `gen_ai.input.messages` / `gen_ai.output.messages` attributes. Only ever built when content
// capture was asked for; the provider's raw output is never used, only what the model said.
import type { ConversationEntry, ModelRequest } from "../../core/ports/model-provider.js";

type Part =
  | { readonly type: "text"; readonly content: string }
  | { readonly type: "tool_call"; readonly name: string; readonly arguments: unknown }
  | { readonly type: "tool_call_response"; readonly response: string };

interface Message {
  readonly role: "user" | "assistant" | "tool";
  readonly parts: readonly Part[];
  readonly finish_reason?: string;
}

function parsedOrText(text: unknown): unknown {
  if (typeof text !== "string") return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** What a candidate turn says: its tool calls, its message, or its text. */
function partsOf(candidate: unknown): Part[] {
  if (typeof candidate === "string") return [{ type: "text", content: candidate }];
  if (typeof candidate !== "object" || candidate === null) return [];
  const turn = candidate as { tool_calls?: unknown; message?: unknown; summary?: unknown };
  const parts: Part[] = [];
  if (typeof turn.summary === "string") parts.push({ type: "text", content: turn.summary });
  if (Array.isArray(turn.tool_calls)) {
    for (const call of turn.tool_calls as { name?: unknown; arguments_json?: unknown }[]) {
      parts.push({
        type: "tool_call",
        name: typeof call?.name === "string" ? call.name : "",
        arguments: parsedOrText(call?.arguments_json),
      });
    }
  }
  if (turn.message !== undefined && turn.message !== null) {
    parts.push({ type: "text", content: JSON.stringify(turn.message) });
  }
  return parts;
}

function messageOf(entry: ConversationEntry): Message {
  switch (entry.kind) {
    case "user":
    case "repair":
      return { role: "user", parts: [{ type: "text", content: entry.text }] };
    case "model":
      return { role: "assistant", parts: partsOf(entry.response.candidate) };
    case "tool-results":
      return {
        role: "tool",
        parts: entry.results.map((r) => ({ type: "tool_call_response", response: r.content })),
      };
    default:
      return entry satisfies never;
  }
}

/** The system prompt, as `gen_ai.system_instructions` holds it (JSON text). */
export function systemInstructions(request: ModelRequest): string {
  return JSON.stringify([{ type: "text", content: request.system }]);
}

/** The messages a request sends, as `gen_ai.input.messages` holds them (JSON text). */
export function inputMessages(request: ModelRequest): string {
  return JSON.stringify(request.conversation.slice(0, request.length).map(messageOf));
}

/** The model's answer, as `gen_ai.output.messages` holds it (JSON text). */
export function outputMessages(candidate: unknown, finishReason: string | undefined): string {
  const message: Message = {
    role: "assistant",
    parts: partsOf(candidate),
    ...(finishReason === undefined ? {} : { finish_reason: finishReason }),
  };
  return JSON.stringify([message]);
}
