// Operator acts on a loop, from any process: `renew` and `cancel` append loop facts; `approve`,
// `deny` and `answer` post acts that a waiting drive polls for. Each answers what it did, or why it
// was refused, with a stable code. An act says `posted` only when it is the one that counts: the
// first for its target, as the store decides atomically; a later one is refused
// `hil/already-answered` with the act that counts, and an act on a stopped loop (or a run already
// concluded) is refused before it is posted.

import { ADMISSION_STEP, approvalTarget } from "../core/loop/next-action.js";
import { fold } from "../core/loop/state.js";
import type { LoopCommand } from "../core/loop/types.js";
import type {
  LedgerStore,
  OperatorAct,
  PostedAct,
  StoredFact,
} from "../core/ports/ledger-store.js";
import { readLedger } from "../runtime/ledger-view.js";
import { LoopLedger } from "../runtime/loop-ledger.js";
import { discardLeftEnvironments } from "./leftovers.js";
import { resolveRunRef } from "./run-ref.js";

export type ActResult =
  | {
      readonly ok: true;
      /** `appended` a fact, `replayed` one already there, or `posted` an act. */
      readonly result: "appended" | "replayed" | "posted";
      readonly message: string;
    }
  | {
      readonly ok: false;
      readonly code: string;
      readonly message: string;
      /** With `hil/already-answered`: the act that counts. */
      readonly answer?: OperatorAct;
      /** With `hil/ambiguous-ref`: the runs the prefix names. */
      readonly candidates?: readonly string[];
    };

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

/** `posted` when the act counts; else `hil/already-answered` with the act that does. */
function posted(outcome: PostedAct, message: string): ActResult {
  if (outcome.posted) return done("posted", message);
  const c = outcome.counting;
  const what = c.kind === "answer" ? `answered ${JSON.stringify(c.text ?? "")}` : `${c.kind}d`;
  return {
    ok: false,
    code: "hil/already-answered",
    message: `not posted: ${c.target} was already ${what} by ${c.operator} at ${c.at}; that act counts`,
    answer: c,
  };
}

/** A refusal when the loop has stopped, or (for a run) when the run was already concluded. */
function closed(facts: readonly StoredFact[], query: string, run?: string): ActResult | undefined {
  const state = fold(facts.map((f) => f.fact));
  if (state.stop !== undefined) {
    return refused(
      "loop/already-stopped",
      `${query} stopped ${state.stop.reason} at fact ${state.stop.sequence}: nothing waits for this act`,
    );
  }
  const concluded = state.facts.find(
    (f) => f.step.kind === "concluded" && f.step["proposal/ref"] === run,
  );
  if (run !== undefined && concluded !== undefined) {
    return refused(
      "loop/already-concluded",
      `the run of ${run} was concluded at fact ${concluded.sequence}: nothing waits for this act`,
    );
  }
  return undefined;
}

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

/**
 * Stops the loop `cancelled`; a running run stops at its next step boundary. Once it is stopped
 * and no live process drives it, the environments its runs left on this host (a driver killed
 * mid-run) are removed.
 */
export async function cancelLoop(c: ActContext, query: string): Promise<ActResult> {
  const r = await loopAct(c, query, { op: "cancel", operator: c.operator }, `cancelled ${query}`);
  if (!r.ok && r.code !== "loop/already-stopped") return r;
  const sweep = await discardLeftEnvironments(c.store, query);
  if (!sweep.swept || sweep.left === 0 || !r.ok) return r;
  return done(
    r.result,
    `${r.message}; ${sweep.left} environment(s) its runs left could not be removed`,
  );
}

/**
 * Approves or denies STEP of RUN (a proposal ref, or a unique prefix of at least 8 characters of its
 * digest; STEP `admission` for an operator-admitted run). `text` is recorded with the act: a
 * denial's reason.
 */
export async function decideStep(
  c: ActContext,
  given: string,
  step: string,
  kind: "approve" | "deny",
  text?: string,
): Promise<ActResult> {
  const resolved = await resolveRunRef(c.store, given);
  if (!resolved.ok) {
    const { code, message, candidates } = resolved;
    return { ok: false, code, message, ...(candidates === undefined ? {} : { candidates }) };
  }
  const run = resolved.ref;
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
  const closedRun = closed(await c.store.readFacts(proposal.query), proposal.query, run);
  if (closedRun !== undefined) return closedRun;
  const outcome = await c.store.postOperatorAct({
    query: proposal.query,
    kind,
    target: approvalTarget(run, step),
    ...(text === undefined ? {} : { text }),
    operator: c.operator,
    at: c.now().toISOString(),
  });
  const why = text === undefined ? "" : `: ${text}`;
  return posted(outcome, `${kind === "approve" ? "approved" : "denied"} ${step} of ${run}${why}`);
}

/** Answers the question (or dead end) the loop's implementer is blocked on. */
export async function answerLoop(c: ActContext, query: string, text: string): Promise<ActResult> {
  const [facts, records, acts] = await Promise.all([
    c.store.readFacts(query),
    c.store.listRecords(query),
    c.store.readOperatorActs(query),
  ]);
  const closedLoop = closed(facts, query);
  if (closedLoop !== undefined) return closedLoop;
  const view = readLedger(
    facts.map((f) => f.fact),
    records,
    acts,
  );
  // The latest question is the one the loop waits on; once answered, a later answer is refused
  // with the answer that counts.
  const pending = [...view.passages].reverse().find((p) => {
    const type = p.end?.message?.type;
    return type === "Question" || type === "DeadEnd";
  });
  if (pending === undefined) return refused("runtime/no-question", `${query} waits for no answer`);
  const answered = acts.find((a) => a.kind === "answer" && a.target === pending.ref);
  if (answered !== undefined) return posted({ posted: false, counting: answered }, "");
  const outcome = await c.store.postOperatorAct({
    query,
    kind: "answer",
    target: pending.ref,
    text,
    operator: c.operator,
    at: c.now().toISOString(),
  });
  return posted(outcome, `answered ${pending.ref}; continue with: warrant resume ${query}`);
}
