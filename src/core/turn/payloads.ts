// TypeScript shapes of the message payloads; each follows its schema in contracts/messages/.
import type { FindingV1 } from "../contracts/types/messages/finding.v1.js";
import type { MessageType } from "./types.js";

/** One step of a Plan; which fields a kind needs is the host's check, not the schema's. */
export interface PlanStep {
  readonly id: string;
  readonly action: string;
  readonly profile?: string;
  readonly args?: Record<string, unknown>;
  readonly read?: readonly string[];
  readonly path?: string;
  readonly diff?: string;
  readonly content?: string;
}

export interface PlanPayload {
  readonly hypothesis: string;
  readonly steps: readonly PlanStep[];
  readonly expected_checks?: readonly string[];
}

export type Severity = FindingV1["severity"];

export interface FindingPayload {
  readonly severity: Severity;
  readonly claim: string;
  readonly evidence: readonly string[];
}

export interface VerdictPayload {
  readonly decision: "accept" | "reject" | "request-regeneration";
  readonly findings: readonly FindingPayload[];
}

export interface QuestionPayload {
  readonly question: string;
  readonly options?: readonly string[];
}

export interface ResultPayload {
  readonly summary: string;
  readonly outcome: string;
  readonly evidence: readonly string[];
}

export interface DeadEndPayload {
  readonly reason: string;
  readonly tried: readonly string[];
}

/** The payload type of each message type. */
export interface PayloadOf {
  readonly Plan: PlanPayload;
  readonly Question: QuestionPayload;
  readonly Result: ResultPayload;
  readonly Verdict: VerdictPayload;
  readonly Finding: FindingPayload;
  readonly DeadEnd: DeadEndPayload;
}

/** A validated message narrowed by its type. */
export type TypedMessage = {
  [K in MessageType]: { readonly type: K; readonly payload: PayloadOf[K] };
}[MessageType];
