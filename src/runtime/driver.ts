// Drives one loop from wherever its ledger stands: every iteration re-reads the ledger, decides the
// next action from it alone (ledger-view.ts) and takes it. Charges are durable before the effect
// they pay for; a passage charged but not ended is redone under the same ref (its charge replays);
// a run with a step started but no execution record concludes `unknown`.

import type { CycleView, LedgerView } from "../core/loop/next-action.js";
import { ADMISSION_STEP, nextAction, unfinishedPassage } from "../core/loop/next-action.js";
import type { Decision, LimitKey, LoopCommand, LoopDocument, Role } from "../core/loop/types.js";
import type { LedgerRecord } from "../core/ports/ledger-store.js";
import { digestOf } from "../core/records/canonical.js";
import { toLedgerRecord } from "../core/records/ledger-record.js";
import { passageRef } from "../core/records/passage-ref.js";
import { buildProposal } from "../core/records/proposal.js";
import { buildReview } from "../core/records/review.js";
import type { Problem } from "../core/result.js";
import { WarrantError } from "../core/result.js";
import { checkPlan } from "../core/taskpack/plan-check.js";
import { admittedBy } from "./admitted-by.js";
import type { RuntimeContext } from "./context.js";
import type { BlockReason } from "./events.js";
import {
  criticEvidence,
  implementerEvidence,
  reviewerEvidence,
  summarizerEvidence,
} from "./evidence.js";
import { readLedger } from "./ledger-view.js";
import type { PassageEndBody, StepRecord } from "./records.js";
import { makeRecord, runRecords, signed } from "./records.js";
import { environmentNameOf, executeRun } from "./run-executor.js";
import type { LoadedPack } from "./task-pack.js";

export type DriveResult =
  | { readonly status: "stopped"; readonly document: LoopDocument }
  | {
      readonly status: "blocked";
      readonly reason: BlockReason;
      readonly counter?: LimitKey;
      readonly detail: string;
      readonly document: LoopDocument;
    };

export interface DriveOptions {
  readonly query: string;
  readonly pack: LoadedPack;
}

class Blocked extends Error {
  constructor(
    readonly reason: BlockReason,
    readonly detail: string,
    readonly counter?: LimitKey,
  ) {
    super(detail);
  }
}

export async function drive(ctx: RuntimeContext, opts: DriveOptions): Promise<DriveResult> {
  const result = await driveLoop(ctx, opts);
  // However a drive ends, the host signs the head it leaves the chain at.
  await ctx.sealHead?.(opts.query, result.status === "stopped" ? "stop" : "block");
  return result;
}

async function driveLoop(ctx: RuntimeContext, opts: DriveOptions): Promise<DriveResult> {
  const { query, pack } = opts;
  for (;;) {
    const document = await readDocument(ctx, query);
    const [records, acts] = await Promise.all([
      ctx.store.listRecords(query),
      ctx.store.readOperatorActs(query),
    ]);
    const view = readLedger(document.facts, records, acts);
    const action = nextAction(view, {
      admission: pack.pack.admission,
      critic: pack.agents["adversarial-critic"] !== undefined,
    });
    const runBound =
      action.kind === "run" || action.kind === "abandon-run" || action.kind === "finish-run";
    if (document.state === "stopped" && !runBound) return stopped(ctx, document);
    try {
      switch (action.kind) {
        case "implement":
          await implement(ctx, opts, view);
          break;
        case "review":
          await review(ctx, opts, view, action.cycle);
          break;
        case "criticize":
          await passage(
            ctx,
            opts,
            view,
            "adversarial-critic",
            criticEvidence(pack.pack, view, action.cycle),
            action.cycle.proposalRef,
          );
          break;
        case "await-admission": {
          const answer = await ctx.approver.approve({
            query,
            run: action.cycle.proposalRef,
            step: ADMISSION_STEP,
            kind: "admission",
            description: `admit the run of ${action.cycle.proposalRef}`,
          });
          if (answer === "expired")
            throw new Blocked("admission", "the admission was not approved before the deadline");
          break;
        }
        case "admit":
          await charge(ctx, query, { op: "admit-run", proposal: action.cycle.proposalRef });
          break;
        case "run":
          await run(ctx, opts, document, action.cycle);
          break;
        case "abandon-run":
          await abandon(ctx, opts, action.cycle);
          break;
        case "finish-run":
          await finish(ctx, opts, view, action.cycle);
          break;
        case "await-answer":
          throw new Blocked(
            "operator-question",
            `the implementer asks (${action.question.ref}): ${JSON.stringify(action.question.end?.message?.payload ?? {})}`,
          );
        default:
          action satisfies never;
      }
    } catch (e) {
      if (!(e instanceof Blocked)) throw e;
      const doc = await readDocument(ctx, query);
      if (doc.state === "stopped") return stopped(ctx, doc);
      ctx.emit({
        kind: "blocked",
        query,
        reason: e.reason,
        ...(e.counter === undefined ? {} : { counter: e.counter }),
        detail: e.detail,
        document: doc,
      });
      return {
        status: "blocked",
        reason: e.reason,
        ...(e.counter === undefined ? {} : { counter: e.counter }),
        detail: e.detail,
        document: doc,
      };
    }
  }
}

function stopped(ctx: RuntimeContext, document: LoopDocument): DriveResult {
  const reason = document.stop?.reason;
  if (reason !== undefined)
    ctx.emit({ kind: "stop", query: document["query/id"], reason, document });
  return { status: "stopped", document };
}

async function readDocument(ctx: RuntimeContext, query: string): Promise<LoopDocument> {
  const doc = await ctx.loop.document(query, ctx.clock.now());
  if (doc === undefined)
    throw new WarrantError("loop/not-opened", `no loop ${query} in ${ctx.store.uri}`);
  return doc;
}

/** Appends a charge (with its records); a refusal blocks the loop with what refused it. */
async function charge(
  ctx: RuntimeContext,
  query: string,
  command: LoopCommand,
  records?: readonly LedgerRecord[],
): Promise<Decision> {
  const decision = await ctx.loop.execute(query, command, ctx.clock.now(), records);
  if (decision.result === "refused") {
    const { code, message, counter } = decision.refusal;
    if (code === "loop/budget-exhausted") throw new Blocked("budget", message, counter);
    if (code === "loop/deadline-passed") throw new Blocked("deadline", message);
    if (code === "loop/not-open") throw new Blocked("deadline", message);
    throw new WarrantError(code, message);
  }
  if (decision.result === "appended") {
    const doc = await readDocument(ctx, query);
    const { fact } = decision;
    ctx.emit({
      kind: "fact",
      query,
      sequence: fact.sequence,
      step: fact.step,
      summary: describeCommand(command),
      document: doc,
    });
  }
  return decision;
}

function describeCommand(c: LoopCommand): string {
  switch (c.op) {
    case "charge-passage":
      return `passage-charged ${c.role} ${c.passage}`;
    case "open-cycle":
      return `cycle-opened ${c.proposal}`;
    case "admit-run":
      return `run-admitted ${c.proposal}`;
    case "conclude":
      return `concluded ${c.outcome}${c.refusal === undefined ? "" : ` (${c.refusal})`}`;
    case "open":
      return `opened ${c.query}`;
    case "renew":
      return `renewed until ${c.deadline}`;
    case "cancel":
      return "cancelled";
    default:
      return c satisfies never;
  }
}

/** Charges (or re-charges, after a crash) a passage of `role` and runs it to its end record. */
async function passage(
  ctx: RuntimeContext,
  opts: DriveOptions,
  view: LedgerView,
  role: Role,
  evidence: string,
  subject: string | undefined,
  /** Records the end implies (a review), stored in the same call as the end itself. */
  implied: (end: PassageEndBody) => readonly LedgerRecord[] = () => [],
): Promise<PassageEndBody> {
  const agent = opts.pack.agents[role];
  if (agent === undefined)
    throw new WarrantError("runtime/agent-missing", `the task pack names no ${role}`);
  const pending = unfinishedPassage(view, role);
  const ordinal = view.passages.filter((p) => p.role === role && p.agentId === agent.id).length + 1;
  const ref = pending?.ref ?? passageRef(opts.query, role, agent.id, ordinal);
  await charge(ctx, opts.query, { op: "charge-passage", role, agent: agent.id, passage: ref });
  const version = (agent.definition as { version?: unknown }).version;
  ctx.emit({
    kind: "passage-start",
    query: opts.query,
    role,
    passageRef: ref,
    agentId: agent.id,
    ...(typeof version === "string" ? { agentVersion: version } : {}),
    redone: pending !== undefined,
  });
  const outcome = await ctx.passages.run({
    query: opts.query,
    role,
    agentId: agent.id,
    passageRef: ref,
    evidence,
    pack: opts.pack,
    priorCalls: view.passages
      .filter((p) => p.role === role && p.agentId === agent.id)
      .reduce((n, p) => n + (p.end?.["model/calls"] ?? 0), 0),
    ledger: { store: ctx.store, loop: ctx.loop, now: () => ctx.clock.now() },
    // A Plan the pack refuses is repaired inside the passage while its repairs last.
    ...(role === "implementer"
      ? { checkMessage: (m) => (m.type === "Plan" ? planProblems(m.payload, opts.pack) : []) }
      : {}),
  });
  const records: LedgerRecord[] = [];
  if (outcome.transcript !== undefined) records.push(outcome.transcript);
  const base = {
    "query/id": opts.query,
    "passage/ref": ref,
    role,
    "agent/id": agent.id,
    "evidence/digest": digestOf(evidence),
    ...(subject === undefined ? {} : { subject }),
    ...(outcome.transcript === undefined ? {} : { "transcript/ref": outcome.transcript.ref }),
    "model/calls": outcome.modelCalls ?? 0,
    ...(outcome.modelOverride === undefined ? {} : { "model/override": outcome.modelOverride }),
    "ended-at": ctx.clock.now().toISOString(),
  };
  let end: PassageEndBody;
  if (outcome.ok) {
    const problems =
      outcome.message.type === "Plan"
        ? planProblems(outcome.message.payload, opts.pack)
        : undefined;
    end = {
      ...base,
      message: outcome.message,
      ...(problems === undefined ? {} : { "plan/problems": problems }),
    };
    const refused = problems?.map((p) => p.code) ?? [];
    ctx.emit({
      kind: "passage-end",
      query: opts.query,
      role,
      passageRef: ref,
      agentId: agent.id,
      outcome: {
        ok: true,
        type: outcome.message.type,
        ...(refused.length === 0 ? {} : { refused }),
      },
      ...(outcome.usage === undefined ? {} : { usage: outcome.usage }),
    });
  } else {
    end = { ...base, failure: { code: outcome.code, message: outcome.message } };
    ctx.emit({
      kind: "passage-end",
      query: opts.query,
      role,
      passageRef: ref,
      agentId: agent.id,
      outcome: { ok: false, code: outcome.code, message: outcome.message },
      ...(outcome.usage === undefined ? {} : { usage: outcome.usage }),
    });
  }
  records.push(makeRecord("passageEnd", opts.query, end), ...implied(end));
  await ctx.store.putRecords(records);
  // A model that cannot answer at all would fail every passage the budget still allows: stop here.
  if (!outcome.ok && outcome.code.startsWith("model/")) {
    throw new Blocked("model", `the ${role}'s model failed: ${outcome.code}: ${outcome.message}`);
  }
  // A passage fails with a `tool/…` code only when its tools cannot be had at all (a call that fails
  // is a tool result the model reads): every later passage of the agent would fail alike.
  // So does an agent definition whose parts no longer check (a skill edited since the loop opened).
  if (!outcome.ok && outcome.code.startsWith("definition/")) {
    throw new Blocked(
      "definition",
      `the ${role}'s agent definition: ${outcome.code}: ${outcome.message}`,
    );
  }
  if (!outcome.ok && outcome.code.startsWith("tool/")) {
    throw new Blocked(
      "tool",
      `the ${role}'s tools are unavailable: ${outcome.code}: ${outcome.message}`,
    );
  }
  return end;
}

async function implement(ctx: RuntimeContext, opts: DriveOptions, view: LedgerView): Promise<void> {
  // A Plan whose passage ended but whose cycle never opened (the host stopped in between) is not
  // paid for twice: its cycle opens now from the stored end.
  const last = [...view.passages].reverse().find((p) => p.role === "implementer");
  const orphan =
    last?.end?.message?.type === "Plan" &&
    (last.end["plan/problems"]?.length ?? 0) === 0 &&
    !view.cycles.some((c) => c.proposal?.["passage/ref"] === last.ref)
      ? last.end
      : undefined;
  const end =
    orphan ??
    (await passage(
      ctx,
      opts,
      view,
      "implementer",
      implementerEvidence(opts.pack.pack, view),
      undefined,
    ));
  const message = end.message;
  if (message?.type !== "Plan" || (end["plan/problems"]?.length ?? 0) > 0) return;
  const evidence = view.cycles.flatMap((c) => [
    c.proposalRef,
    ...(c.execution === undefined ? [] : [c.execution.ref]),
  ]);
  const built = buildProposal({
    query: opts.query,
    agentId: end["agent/id"],
    passageRef: end["passage/ref"],
    candidate: message.payload,
    evidence,
    createdAt: end["ended-at"],
  });
  const proposal = toLedgerRecord("proposal", await signed(built, ctx.signer));
  await charge(ctx, opts.query, { op: "open-cycle", proposal: proposal.ref }, [proposal]);
}

async function review(
  ctx: RuntimeContext,
  opts: DriveOptions,
  view: LedgerView,
  cycle: CycleView,
): Promise<void> {
  // The review record lands with the passage's end: an ended review passage always has its review.
  await passage(
    ctx,
    opts,
    view,
    "reviewer",
    reviewerEvidence(opts.pack.pack, view, cycle),
    cycle.proposalRef,
    (end) =>
      end.message?.type !== "Verdict"
        ? []
        : [
            toLedgerRecord(
              "review",
              buildReview({
                query: opts.query,
                proposalRef: cycle.proposalRef,
                agentId: end["agent/id"],
                passageRef: end["passage/ref"],
                verdict: end.message.payload,
                createdAt: end["ended-at"],
              }),
            ),
          ],
  );
}

async function run(
  ctx: RuntimeContext,
  opts: DriveOptions,
  document: LoopDocument,
  cycle: CycleView,
): Promise<void> {
  const candidate = cycle.proposal?.candidate;
  if (candidate === undefined)
    throw new WarrantError("runtime/proposal-missing", `no proposal record ${cycle.proposalRef}`);
  // The stored candidate passed this check when its cycle opened; the pack is pinned by digest.
  const checked = checkPlan(candidate, opts.pack.pack);
  if (!checked.ok)
    throw new WarrantError(
      "plan/changed-replay",
      "the stored proposal no longer checks against the task pack",
    );
  const plan = checked.value;
  // An environment made by an attempt that died before its first step is discarded, never reused:
  // the journaled one, and the one a host that died before journaling it left under the run's name.
  await discardLeftovers(ctx, opts.query, cycle);
  if (document.state === "deadline-passed") {
    throw new Blocked(
      "deadline",
      "the deadline passed before the admitted run started; renew to run it",
    );
  }
  const result = await executeRun(ctx, {
    query: opts.query,
    proposalRef: cycle.proposalRef,
    plan,
    pack: opts.pack,
    boundary: async () => {
      const doc = await readDocument(ctx, opts.query);
      if (doc.stop?.reason === "cancelled") return { outcome: "cancelled" };
      if (doc.state === "deadline-passed")
        return { outcome: "refused", refusal: "run/budget-exhausted" };
      return undefined;
    },
  });
  const { execution, report } = await runRecords(
    result.report,
    result.startedAt,
    result.endedAt,
    ctx.signer,
    admittedBy(cycle, await ctx.store.readOperatorActs(opts.query), opts.pack),
  );
  const changeset =
    result.changeset === undefined
      ? []
      : [
          makeRecord("changeset", opts.query, {
            ...result.changeset,
            "execution/ref": execution.ref,
          }),
        ];
  await ctx.store.putRecords([execution, report, ...changeset]);
}

/** Removes a dead attempt's environment of this run, journaled or not; true once none is left. */
async function discardLeftovers(
  ctx: RuntimeContext,
  query: string,
  cycle: CycleView,
): Promise<boolean> {
  const root = cycle.runStarted?.["environment/dir"];
  return ctx.sandbox.discard(environmentNameOf(query, cycle.proposalRef), root);
}

/**
 * A run whose step had started when the driver died: never repeated, concluded `unknown` — or
 * `refused` with `rollback/destroy-unconfirmed` when its environment cannot be removed.
 */
async function abandon(ctx: RuntimeContext, opts: DriveOptions, cycle: CycleView): Promise<void> {
  const { query } = opts;
  const destroyed = await discardLeftovers(ctx, query, cycle);
  const now = ctx.clock.now().toISOString();
  const steps: StepRecord[] = cycle.stepsStarted.map((s) => ({
    "step/id": s["step/id"],
    class: "observation",
    action: "interrupted",
    status: "interrupted",
    excerpt: "the host stopped while this step ran",
  }));
  const { execution, report } = await runRecords(
    {
      "query/id": query,
      "proposal/ref": cycle.proposalRef,
      "environment/ref": cycle.runStarted?.["environment/ref"] ?? "environment:none",
      steps,
      checks: [],
      // An environment that could not be removed is the conclusion, whatever the step did.
      outcome: destroyed ? "unknown" : "refused",
      ...(destroyed ? {} : { "refusal/code": "rollback/destroy-unconfirmed" }),
      "environment/destroyed": destroyed,
    },
    cycle.runStarted?.["started-at"] ?? now,
    now,
    ctx.signer,
    admittedBy(cycle, await ctx.store.readOperatorActs(query), opts.pack),
  );
  ctx.emit({
    kind: "run-end",
    query,
    proposalRef: cycle.proposalRef,
    environmentRef: cycle.runStarted?.["environment/ref"] ?? "environment:none",
    outcome: destroyed ? "unknown" : "refused",
    ...(destroyed ? {} : { refusal: "rollback/destroy-unconfirmed" }),
    environmentMade: true,
    environmentDestroyed: destroyed,
    interrupted: true,
  });
  await ctx.store.putRecords([execution, report]);
}

async function finish(
  ctx: RuntimeContext,
  opts: DriveOptions,
  view: LedgerView,
  cycle: CycleView,
): Promise<void> {
  const execution = cycle.execution;
  if (execution === undefined) return;
  const body = execution.body;
  const summarized = view.passages.some(
    (p) => p.role === "summarizer" && p.end?.subject === cycle.proposalRef,
  );
  if (body.outcome === "verified" && opts.pack.agents.summarizer !== undefined && !summarized) {
    try {
      await passage(
        ctx,
        opts,
        view,
        "summarizer",
        summarizerEvidence(opts.pack.pack, view, cycle),
        cycle.proposalRef,
      );
    } catch (e) {
      // A summary is not owed when no budget remains: the conclusion still lands.
      if (!(e instanceof Blocked)) throw e;
      ctx.emit({
        kind: "summary-skipped",
        query: opts.query,
        proposalRef: cycle.proposalRef,
        detail: e.detail,
      });
    }
  }
  // The execution record was stored as soon as the verdict was known (so a crash during the
  // summary loses nothing); it is stored again with its `concluded` fact, in the same append.
  const record = await ctx.store.readRecord(execution.ref);
  await charge(
    ctx,
    opts.query,
    {
      op: "conclude",
      proposal: cycle.proposalRef,
      execution: execution.ref,
      outcome: body.outcome,
      ...(body["refusal/code"] === undefined ? {} : { refusal: body["refusal/code"] }),
    },
    record === undefined ? [] : [record],
  );
}

function planProblems(plan: unknown, pack: LoadedPack): readonly Problem[] {
  const checked = checkPlan(plan, pack.pack);
  return checked.ok ? [] : checked.errors;
}
