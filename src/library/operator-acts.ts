// Operator acts on a loop, from any process: `renew` and `cancel` append loop facts; `approve`,
// `deny` and `answer` post acts that a waiting drive polls for. Each answers what it did, or why it
// was refused, with a stable code.
import type { LedgerStore } from "../core/loop/ledger-store.js";
import type { LoopCommand } from "../core/loop/types.js";
import { ADMISSION_STEP, approvalTarget, readLedger } from "../runtime/ledger-view.js";
import { LoopLedger } from "../runtime/loop-ledger.js";

export type ActResult =
  | {
      readonly ok: true;
      /** `appended` a fact, `replayed` one already there, or `posted` an act. */
      readonly result: "appended" | "replayed" | "posted";
      readonly message: string;
    }
  | { readonly ok: false; readonly code: string; readonly message: string };

export interface ActContext {
  readonly store: LedgerStore;
  readonly operator: string;
  readonly now: () => Date;
}

const refused = (code: string, message: string): ActResult => ({ ok: false, code, message });
const done = (result: "appended" | "replayed" | "posted", message: string): ActResult => ({
  ok: true,
  result,
  message,
});

async function loopAct(
  c: ActContext,
  query: string,
  command: LoopCommand,
  message: string,
): Promise<ActResult> {
  const d = await new LoopLedger(c.store).execute(query, command, c.now());
  if (d.result === "refused") return refused(d.refusal.code, d.refusal.message);
  if (d.result === "appended") return done("appended", message);
  return done("replayed", `${message} (already recorded: nothing appended)`);
}

/** Moves the loop's deadline (refused: not later than now's, or past its max/wall-time-ms). */
export async function renewLoop(c: ActContext, query: string, deadline: Date): Promise<ActResult> {
  if (Number.isNaN(deadline.getTime()))
    return refused("loop/renewal-invalid", "the new deadline is not a time");
  const at = deadline.toISOString();
  const command: LoopCommand = { op: "renew", deadline: at, operator: c.operator };
  return loopAct(c, query, command, `renewed ${query} until ${at}`);
}

/** Stops the loop `cancelled`; a running run stops at its next step boundary. */
export function cancelLoop(c: ActContext, query: string): Promise<ActResult> {
  return loopAct(c, query, { op: "cancel", operator: c.operator }, `cancelled ${query}`);
}

/** Approves or denies STEP of RUN (a proposal ref; `admission` for an operator-admitted run). */
export async function decideStep(
  c: ActContext,
  run: string,
  step: string,
  kind: "approve" | "deny",
): Promise<ActResult> {
  const proposal = await c.store.readRecord(run);
  if (proposal === undefined || proposal.kind !== "proposal")
    return refused("loop/run-missing", `no run ${run} in ${c.store.uri}`);
  const candidate = (proposal.body as { candidate?: { steps?: { id?: unknown }[] } }).candidate;
  const steps = (candidate?.steps ?? []).map((s) => s.id);
  if (step !== ADMISSION_STEP && !steps.includes(step))
    return refused(
      "loop/run-missing",
      `run ${run} has no step ${step} (steps: ${steps.join(", ")})`,
    );
  await c.store.postOperatorAct({
    query: proposal.query,
    kind,
    target: approvalTarget(run, step),
    operator: c.operator,
    at: c.now().toISOString(),
  });
  return done("posted", `${kind === "approve" ? "approved" : "denied"} ${step} of ${run}`);
}

/** Answers the question (or dead end) the loop's implementer is blocked on. */
export async function answerLoop(c: ActContext, query: string, text: string): Promise<ActResult> {
  const [facts, records, acts] = await Promise.all([
    c.store.readFacts(query),
    c.store.listRecords(query),
    c.store.readOperatorActs(query),
  ]);
  const view = readLedger(
    facts.map((f) => f.fact),
    records,
    acts,
  );
  const pending = [...view.passages].reverse().find((p) => {
    const type = p.end?.message?.type;
    return (
      (type === "Question" || type === "DeadEnd") &&
      !acts.some((a) => a.kind === "answer" && a.target === p.ref)
    );
  });
  if (pending === undefined) return refused("runtime/no-question", `${query} waits for no answer`);
  await c.store.postOperatorAct({
    query,
    kind: "answer",
    target: pending.ref,
    text,
    operator: c.operator,
    at: c.now().toISOString(),
  });
  return done("posted", `answered ${pending.ref}; continue with: warrant resume ${query}`);
}
