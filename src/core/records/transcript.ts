// Passage transcript records (`passage-transcript:sha256:…`): every model call of a passage (request
// digest, raw response, parsed turn, validation), its tool calls and results, and its usage.
import { withContentRef } from "./content-ref.js";

export const TRANSCRIPT_PREFIX = "passage-transcript";
export const TRANSCRIPT_REF_FIELD = "transcript/ref";

export interface ToolCallInput {
  readonly name: string;
  readonly arguments: unknown;
  readonly result: unknown;
  readonly isError: boolean;
}

export interface ModelCallInput {
  readonly requestDigest: string;
  /** The provider's output as received, before parsing. */
  readonly rawResponse: unknown;
  /** The parsed model turn, or null when it did not parse. */
  readonly turn: unknown;
  readonly validation: { readonly valid: boolean; readonly errors: readonly unknown[] };
  readonly toolCalls: readonly ToolCallInput[];
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly latencyMs: number;
}

export interface TranscriptInput {
  readonly query: string;
  readonly passageRef: string;
  readonly role: string;
  readonly agentId: string;
  readonly calls: readonly ModelCallInput[];
  /** How the passage ended: its product's message type, or a failure code. */
  readonly ending: string;
  readonly startedAt: string;
  readonly endedAt: string;
}

export interface TranscriptRecord {
  readonly "schema/v": 1;
  readonly "transcript/ref": string;
  readonly "query/id": string;
  readonly "passage/ref": string;
  readonly role: string;
  readonly "agent/id": string;
  readonly calls: readonly Readonly<Record<string, unknown>>[];
  readonly usage: {
    readonly "input-tokens": number;
    readonly "output-tokens": number;
    readonly "latency-ms": number;
  };
  readonly ending: string;
  readonly "started-at": string;
  readonly "ended-at": string;
}

export function buildTranscript(input: TranscriptInput): TranscriptRecord {
  const calls = input.calls.map((c) => ({
    "request/digest": c.requestDigest,
    "raw-response": c.rawResponse,
    turn: c.turn,
    validation: { valid: c.validation.valid, errors: [...c.validation.errors] },
    "tool-calls": c.toolCalls.map((t) => ({
      name: t.name,
      arguments: t.arguments,
      result: t.result,
      "is-error": t.isError,
    })),
    usage: {
      "input-tokens": c.inputTokens,
      "output-tokens": c.outputTokens,
      "latency-ms": c.latencyMs,
    },
  }));
  const sum = (f: (c: ModelCallInput) => number) => input.calls.reduce((a, c) => a + f(c), 0);
  return withContentRef(TRANSCRIPT_PREFIX, TRANSCRIPT_REF_FIELD, {
    "schema/v": 1,
    "query/id": input.query,
    "passage/ref": input.passageRef,
    role: input.role,
    "agent/id": input.agentId,
    calls,
    usage: {
      "input-tokens": sum((c) => c.inputTokens),
      "output-tokens": sum((c) => c.outputTokens),
      "latency-ms": sum((c) => c.latencyMs),
    },
    ending: input.ending,
    "started-at": input.startedAt,
    "ended-at": input.endedAt,
  }) as unknown as TranscriptRecord;
}
