// The approver port: who answers an admission or a mutation a run waits on — automatically, by
// asking at a prompt, or by waiting for an operator's act (createApprover, src/runtime/hil.ts).

/** The version of the approver port. */
export const APPROVER_PORT_VERSION = "v1";

/** What waits for approval: a run's admission, or one mutating step of it. */
export type ApprovalKind = "mutation" | "admission";

/** How an approval was answered. */
export type ApprovalAnswer = "approved" | "denied" | "expired" | "cancelled";

export interface ApprovalRequest {
  readonly query: string;
  /** The run: its proposal ref. */
  readonly run: string;
  readonly step: string;
  readonly kind: ApprovalKind;
  /** What the mutation does: a diff for a patch, the argv for a command. */
  readonly description: string;
}

export interface Approver {
  approve(request: ApprovalRequest): Promise<ApprovalAnswer>;
}
