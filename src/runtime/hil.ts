// Human approval of mutations and admissions: an approve or deny the operator posted (from this
// terminal or another: `warrant approve RUN STEP`) decides; `--yes` approves at once and records
// that it did; otherwise the run waits, polling, until an answer, a cancellation or the deadline.
// The act that decides is the one the store counts (the first for its target): when this host's
// own act loses a race, the act that won decides.
import { approvalTarget, operatorDecision } from "../core/loop/next-action.js";
import type { ApprovalAnswer, ApprovalRequest, Approver } from "../core/ports/approver.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import type { Clock } from "../core/ports/time.js";
import type { LoopPort } from "./context.js";
import type { ApprovalAnswerer, Emit } from "./events.js";

export type Ask = (
  request: ApprovalRequest,
  signal: AbortSignal,
) => Promise<"approve" | "deny" | undefined>;

export interface ApproverOptions {
  readonly store: LedgerStore;
  readonly loop: LoopPort;
  readonly clock: Clock;
  readonly sleep: (ms: number) => Promise<void>;
  readonly emit: Emit;
  readonly operator: string;
  /** Approve every request at once, recording an approval act that says so. */
  readonly autoApprove: boolean;
  /** Ask (on a terminal, say) while polling for acts from others. */
  readonly ask?: Ask;
  /** The text recorded with an answer `ask` gave (default `answered by the approver`). */
  readonly askedText?: string;
  readonly pollMs?: number;
}

export function createApprover(o: ApproverOptions): Approver {
  const pollMs = o.pollMs ?? 200;
  return {
    async approve(request: ApprovalRequest): Promise<ApprovalAnswer> {
      const target = approvalTarget(request.run, request.step);
      const about = {
        query: request.query,
        proposalRef: request.run,
        step: request.step,
        approval: request.kind,
      };
      const answered = (answer: ApprovalAnswer, by: ApprovalAnswerer): ApprovalAnswer => {
        o.emit({ kind: "approval-answered", ...about, answer, by });
        return answer;
      };
      /**
       * Posts this host's act: the answer is the act that counts, this one (answered by `by`) or
       * an earlier one another process posted (answered by the operator).
       */
      const post = async (
        kind: "approve" | "deny",
        text: string,
        by: ApprovalAnswerer,
      ): Promise<ApprovalAnswer> => {
        const posted = await o.store.postOperatorAct({
          query: request.query,
          kind,
          target,
          text,
          operator: o.operator,
          at: o.clock.now().toISOString(),
        });
        const counting = posted.posted ? kind : posted.counting.kind;
        return answered(
          counting === "approve" ? "approved" : "denied",
          posted.posted ? by : "operator",
        );
      };
      const decided = operatorDecision(await o.store.readOperatorActs(request.query), target);
      if (decided !== undefined)
        return answered(decided === "approve" ? "approved" : "denied", "operator");
      if (o.autoApprove) {
        return await post("approve", "approved automatically", "auto");
      }
      o.emit({ kind: "approval-requested", ...about, description: request.description });
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
          if (asked !== undefined)
            return await post(asked, o.askedText ?? "answered by the approver", "prompt");
          const act = operatorDecision(await o.store.readOperatorActs(request.query), target);
          if (act !== undefined)
            return answered(act === "approve" ? "approved" : "denied", "operator");
          const now = o.clock.now();
          const doc = await o.loop.document(request.query, now);
          if (doc?.stop !== undefined) return answered("cancelled", "loop");
          // The approval must arrive before the loop's deadline (renewals move it).
          if (doc === undefined || doc.state === "deadline-passed")
            return answered("expired", "loop");
          await o.sleep(pollMs);
        }
      } finally {
        controller.abort();
        await asking;
      }
    },
  };
}
