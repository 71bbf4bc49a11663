// Review records (`corpus-experiment-review:sha256:…`): a reviewer's Verdict on an exact proposal.
import type * as Wire from "../contracts/types/ledger-records.v1.js";
import { withContentRef } from "./content-ref.js";
import type { Unsigned } from "./unsigned.js";

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

/**
 * The review record, as contracts/ledger-records.v1.json types it; its verdict (the Verdict
 * payload) is kept as the passage gave it, validated there.
 */
export type ReviewRecord = Unsigned<Omit<Wire.Review, "verdict">> & { readonly verdict: unknown };

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
