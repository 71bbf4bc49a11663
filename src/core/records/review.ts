// Review records (`corpus-experiment-review:sha256:…`): a reviewer's Verdict on an exact proposal.
import { withContentRef } from "./content-ref.js";

export const REVIEW_PREFIX = "corpus-experiment-review";
export const REVIEW_REF_FIELD = "review/ref";

export interface ReviewInput {
  readonly query: string;
  readonly proposalRef: string;
  readonly agentId: string;
  readonly passageRef: string;
  /** The Verdict payload, as validated. */
  readonly verdict: unknown;
  readonly createdAt: string;
}

export interface ReviewRecord {
  readonly "schema/v": 1;
  readonly "review/ref": string;
  readonly "query/id": string;
  readonly "proposal/ref": string;
  readonly "agent/id": string;
  readonly "passage/ref": string;
  readonly verdict: unknown;
  readonly "created-at": string;
}

export function buildReview(input: ReviewInput): ReviewRecord {
  return withContentRef<ReviewRecord, typeof REVIEW_REF_FIELD>(REVIEW_PREFIX, REVIEW_REF_FIELD, {
    "schema/v": 1,
    "query/id": input.query,
    "proposal/ref": input.proposalRef,
    "agent/id": input.agentId,
    "passage/ref": input.passageRef,
    verdict: input.verdict,
    "created-at": input.createdAt,
  });
}
