// Proposal records (`corpus-experiment:sha256:…`): one implementer's Plan for one query, stored with
// its `cycle-opened` fact.
import type * as Wire from "../contracts/types/ledger-records.v1.js";
import { withContentRef } from "./content-ref.js";
import type { Unsigned } from "./unsigned.js";

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

/**
 * The proposal record, as contracts/ledger-records.v1.json types it; its candidate (the Plan
 * payload) is kept as the passage gave it, validated there.
 */
export type ProposalRecord = Unsigned<Omit<Wire.Proposal, "candidate" | "evidence">> & {
  readonly candidate: unknown;
  readonly evidence: readonly string[];
};

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
