// The passage transcript (SPEC §5): every model request digest, raw response, parsed turn,
// validation result, tool call and tool result of one passage, and its usage. It is plain JSON,
// stored as a content-addressed record beside the facts.
import type { LedgerRecord } from "../core/loop/ledger-store.js";
import type { Role } from "../core/loop/types.js";
import { contentRef } from "../core/records/canonical.js";
import type { Problem } from "../core/result.js";
import type { ResponseMeta, StopKind, Usage } from "../core/turn/model-provider.js";
import type { ToolResult } from "../core/turn/tool-host.js";

export const TRANSCRIPT_REF_PREFIX = "passage-transcript";

export type TranscriptEntry =
  | {
      readonly kind: "model-call";
      /** 0-based ordinal of the model call in the passage (repair attempts included). */
      readonly index: number;
      readonly requestDigest: string;
      readonly raw: unknown;
      readonly stop: StopKind;
      readonly refusal?: string;
      /** The candidate as the provider gave it, when it did not validate. */
      readonly candidate?: unknown;
      /** The validated turn (seed wire shape). */
      readonly turn?: unknown;
      /** null when the answer was a refusal or truncated (nothing to validate). */
      readonly validation: { readonly valid: boolean; readonly errors: readonly Problem[] } | null;
      readonly usage: Usage;
      /** The provider's response id, responding model and finish reason. */
      readonly response: ResponseMeta;
      readonly latencyMs: number;
    }
  | {
      readonly kind: "model-error";
      readonly index: number;
      readonly requestDigest: string;
      readonly code: string;
      readonly message: string;
    }
  | {
      readonly kind: "tool-call";
      /** The model call whose turn made this tool call. */
      readonly turn: number;
      readonly name: string;
      readonly args: Record<string, unknown>;
      readonly result: ToolResult;
      readonly latencyMs: number;
    };

/** The passage's totals: the providers' token counts summed over its model calls. */
export interface TranscriptUsage extends Usage {
  readonly latencyMs: number;
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly repairs: number;
}

export interface PassageTranscript {
  readonly schema: "warrant.passage-transcript.v1";
  readonly role: Role;
  readonly "agent/id": string;
  readonly provider: string;
  /** `digestOf` (JCS + SHA-256) of the system prompt and of the evidence as the model read it. */
  readonly systemDigest: string;
  readonly evidenceDigest: string;
  /** The refs of the evidence items, when the evidence was given as items. */
  readonly evidenceRefs?: readonly string[];
  readonly entries: readonly TranscriptEntry[];
  readonly usage: TranscriptUsage;
  readonly outcome:
    | { readonly ok: true; readonly type: string }
    | { readonly ok: false; readonly code: string; readonly message: string };
}

/**
 * The transcript as a ledger record (`passage-transcript:sha256:…`) of a query. The body names its
 * query (and passage, when given), so identical passages of two loops are two records.
 */
export function transcriptRecord(
  query: string,
  transcript: PassageTranscript,
  passageRef?: string,
): LedgerRecord {
  const body: Readonly<Record<string, unknown>> = {
    ...transcript,
    "query/id": query,
    ...(passageRef === undefined ? {} : { "passage/ref": passageRef }),
  };
  return { ref: contentRef(TRANSCRIPT_REF_PREFIX, body, "ref"), kind: "transcript", query, body };
}
