// Human approval of mutations and admissions: an approve or deny the operator posted (from this
// terminal or another: `warrant approve RUN STEP`) decides; `--yes` approves at once and records
// that it did; otherwise the run waits, polling, until an answer, a cancellation or the deadline.
// The act that decides is the one the store counts (the first for its target): when this host's
// own act loses a race, the act that won decides.
import type { LedgerStore } from "../core/loop/ledger-store.js";
import type { Clock } from "../core/ports.js";
import { approvalTarget, operatorDecision } from "./ledger-view.js";
import type { ApprovalAnswer, ApprovalRequest, Approver, LoopPort, RuntimeEvent } from "./ports.js";

export type Ask = (
  request: ApprovalRequest,
  signal: AbortSignal,
) => Promise<"approve" | "deny" | undefined>;

export interface ApproverOptions {
  readonly store: LedgerStore;
  readonly loop: LoopPort;
  readonly clock: Clock;
  readonly sleep: (ms: number) => Promise<void>;
  readonly emit: (event: RuntimeEvent) => void;
  readonly operator: string;
  /** Approve every request at once, recording an approval act that says so. */
  readonly autoApprove: boolean;
  /** Ask on this terminal while polling for acts from others (interactive runs). */
  readonly ask?: Ask;
  readonly pollMs?: number;
}

export function createApprover(o: ApproverOptions): Approver {
  const pollMs = o.pollMs ?? 200;
  return {
    async approve(request: ApprovalRequest): Promise<ApprovalAnswer> {
      const target = approvalTarget(request.run, request.step);
      /** Posts this host's act; the answer is the act that counts, this one or an earlier one. */
      const post = async (kind: "approve" | "deny", text: string): Promise<ApprovalAnswer> => {
        const posted = await o.store.postOperatorAct({
          query: request.query,
          kind,
          target,
          text,
          operator: o.operator,
          at: o.clock.now().toISOString(),
        });
        const counting = posted.posted ? kind : posted.counting.kind;
        return counting === "approve" ? "approved" : "denied";
      };
      const decided = operatorDecision(await o.store.readOperatorActs(request.query), target);
      if (decided !== undefined) return decided === "approve" ? "approved" : "denied";
      if (o.autoApprove) {
        const answer = await post("approve", "approved automatically (--yes)");
        o.emit({
          kind: "note",
          text:
            answer === "approved"
              ? `  approved ${request.step} automatically (--yes)`
              : `  ${request.step} was denied by the operator first`,
        });
        return answer;
      }
      o.emit({
        kind: "waiting",
        what: `approval of ${request.step}: warrant approve ${request.run} ${request.step} | warrant deny ${request.run} ${request.step}\n${request.description}`,
      });
      const controller = new AbortController();
      let asked: "approve" | "deny" | undefined;
      const asking = o.ask?.(request, controller.signal).then(
        (a) => {
          asked = a;
        },
        () => undefined,
      );
      try {
        for (;;) {
          if (asked !== undefined) return await post(asked, "answered at the terminal");
          const act = operatorDecision(await o.store.readOperatorActs(request.query), target);
          if (act !== undefined) return act === "approve" ? "approved" : "denied";
          const now = o.clock.now();
          const doc = await o.loop.document(request.query, now);
          if (doc?.stop !== undefined) return "cancelled";
          // The approval must arrive before the loop's deadline (renewals move it).
          if (doc === undefined || doc.state === "deadline-passed") return "expired";
          await o.sleep(pollMs);
        }
      } finally {
        controller.abort();
        await asking;
      }
    },
  };
}
