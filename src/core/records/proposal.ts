// Proposal records (`corpus-experiment:sha256:…`): one implementer's Plan for one query, stored with
// its `cycle-opened` fact.
import { withContentRef } from "./content-ref.js";

export const PROPOSAL_PREFIX = "corpus-experiment";
export const PROPOSAL_REF_FIELD = "proposal/ref";

export interface ProposalInput {
  readonly query: string;
  /** `agent:<definition CID>` of the implementer. */
  readonly agentId: string;
  /** The passage that produced the Plan. */
  readonly passageRef: string;
  /** The Plan payload, as validated. */
  readonly candidate: unknown;
  /** Refs of what the implementer was shown (task statement, earlier records). */
  readonly evidence: readonly string[];
  readonly createdAt: string;
}

export interface ProposalRecord {
  readonly "schema/v": 1;
  readonly "proposal/ref": string;
  readonly "query/id": string;
  readonly "agent/id": string;
  readonly "passage/ref": string;
  readonly candidate: unknown;
  readonly evidence: readonly string[];
  readonly "created-at": string;
}

export function buildProposal(input: ProposalInput): ProposalRecord {
  return withContentRef<ProposalRecord, typeof PROPOSAL_REF_FIELD>(
    PROPOSAL_PREFIX,
    PROPOSAL_REF_FIELD,
    {
      "schema/v": 1,
      "query/id": input.query,
      "agent/id": input.agentId,
      "passage/ref": input.passageRef,
      candidate: input.candidate,
      evidence: [...input.evidence],
      "created-at": input.createdAt,
    },
  );
}
