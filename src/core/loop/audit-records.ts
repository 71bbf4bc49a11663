// The audit's record rules: every record a fact or another record names is there and agrees with
// what names it. An opening has its binding; a passage followed by later work has its end, the end
// its transcript, a reviewer's Verdict its review, an answered question its answer; a cycle its
// proposal, made by the passage that planned it; an admission an accepting review; a conclusion its
// execution and run report (and a verified one its changeset), the execution naming the review and the approvals that admitted it and
// the step journal of every step it ran; a memory write is of a charged passage of its agent. A
// record nothing names is an orphan.
import { isSubAgentId } from "../definition/id.js";
import type { OperatorAct } from "../ports/ledger-store.js";
import { canonicalJson } from "../records/canonical.js";
import { operatorActRef } from "../records/operator-act.js";
import type { AuditedRecord, Findings, Located } from "./audit-findings.js";
import type { Fact, Step } from "./types.js";

type Body = Readonly<Record<string, unknown>>;

const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);
const str = (x: unknown) => (typeof x === "string" ? x : undefined);
const obj = (x: unknown): Body | undefined =>
  typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Body) : undefined;

/** Kinds that must be named by a fact (directly or through their passage or run). */
const BOUND_KINDS = new Set([
  "proposal",
  "review",
  "passageEnd",
  "transcript",
  "runStarted",
  "stepStarted",
  "execution",
  "runReport",
  "memoryWrite",
  "changeset",
]);

/** After one of these, every passage charged before it has ended. */
const WORK = new Set(["passage-charged", "cycle-opened", "run-admitted", "concluded"]);

/** A step of one kind. */
type StepOf<K extends Step["kind"]> = Extract<Step, { readonly kind: K }>;

/** Where one fact's problems are reported: a record it names is missing, or disagrees with it. */
interface FactCheck {
  readonly missing: (what: string) => void;
  readonly mismatch: (what: string) => void;
}

export function recordProblems(
  facts: readonly Fact[],
  records: readonly AuditedRecord[],
  acts: readonly OperatorAct[],
  touch: (r: AuditedRecord) => Located,
  found: Findings,
): void {
  const r = indexRecords(records, acts);
  const lastWork = facts.reduce((last, f, i) => (WORK.has(f.step.kind) ? i : last), -1);
  /** The role of each passage charged so far. */
  const charged = new Map<string, string>();
  const passages: Passages = { facts, acts, lastWork, charged };

  facts.forEach((fact, i) => {
    const at = { fact: i };
    const missing = (what: string) =>
      found.add(
        at,
        "records/missing",
        `fact ${fact.sequence} (${fact.step.kind}): ${what} is not in the ledger`,
      );
    const mismatch = (what: string) =>
      found.add(at, "records/mismatch", `fact ${fact.sequence} (${fact.step.kind}): ${what}`);
    const check: FactCheck = { missing, mismatch };
    const s = fact.step;
    switch (s.kind) {
      case "opened":
        opened(s, r, check);
        break;
      case "passage-charged":
        passageCharged(s, i, passages, r, check);
        break;
      case "cycle-opened":
        cycleOpened(s, charged, r, check);
        break;
      case "run-admitted":
        runAdmitted(s, r, check);
        break;
      case "concluded":
        concluded(fact, i, r, missing, mismatch, found);
        break;
      case "renewed":
      case "cancelled":
        break;
      default:
        s satisfies never;
    }
  });

  changesetProblems(records, r.executions, touch, found);
  orphans(records, touch, found);
}

/** The records the rules look up: each kind's bodies, by the ref or the field that names them. */
interface LedgerRecords extends RunRecords {
  readonly bodies: (kind: string) => Body[];
  readonly ends: ReadonlyMap<string, Body>;
  readonly transcripts: ReadonlyMap<string, Body>;
  readonly proposals: ReadonlyMap<string, Body>;
  readonly memoryWrites: readonly Body[];
}

function indexRecords(
  records: readonly AuditedRecord[],
  acts: readonly OperatorAct[],
): LedgerRecords {
  const bodies = (kind: string) =>
    records.filter((r) => r.kind === kind && r.body !== undefined).map((r) => r.body as Body);
  const byField = (kind: string, field: string) => {
    const m = new Map<string, Body>();
    for (const b of bodies(kind)) {
      const k = str(b[field]);
      if (k !== undefined && !m.has(k)) m.set(k, b);
    }
    return m;
  };
  const byRef = (kind: string) =>
    new Map(
      records
        .filter((r) => r.kind === kind && r.body !== undefined)
        .map((r) => [r.ref, r.body as Body]),
    );
  return {
    bodies,
    ends: byField("passageEnd", "passage/ref"),
    transcripts: byRef("transcript"),
    reviews: bodies("review"),
    proposals: byRef("proposal"),
    executions: byRef("execution"),
    reports: byField("runReport", "execution/ref"),
    changesets: byField("changeset", "execution/ref"),
    runsStarted: bodies("runStarted"),
    stepsStarted: bodies("stepStarted"),
    actByRef: new Map(acts.map((a) => [operatorActRef(a), a])),
    memoryWrites: bodies("memoryWrite"),
  };
}

/** An opening's binding record. */
function opened(s: StepOf<"opened">, r: LedgerRecords, c: FactCheck): void {
  if (!r.bodies("binding").some((b) => b["binding/ref"] === s["binding/ref"]))
    c.missing(`the binding record of ${s["binding/ref"]}`);
}

/** What a passage's rules look at beyond its own fact. */
interface Passages {
  readonly facts: readonly Fact[];
  readonly acts: readonly OperatorAct[];
  /** The index of the last fact of work (WORK), -1 if none. */
  readonly lastWork: number;
  /** The role of each passage charged so far. */
  readonly charged: Map<string, string>;
}

/** A main implementer's passage is charged after fact `i`. */
function laterImplementer(facts: readonly Fact[], i: number): boolean {
  return facts.some(
    (f, j) =>
      j > i &&
      f.step.kind === "passage-charged" &&
      f.step.role === "implementer" &&
      !isSubAgentId(f.step["agent/id"]),
  );
}

/**
 * A charged passage's end (once later work shows it ended), its transcript, its memory writes, the
 * review of a reviewer's Verdict and the operator's answer to a main implementer's question.
 */
function passageCharged(
  s: StepOf<"passage-charged">,
  i: number,
  p: Passages,
  r: LedgerRecords,
  c: FactCheck,
): void {
  const { missing, mismatch } = c;
  const ref = s["passage/ref"];
  p.charged.set(ref, s.role);
  const end = r.ends.get(ref);
  if (end === undefined) {
    if (i < p.lastWork) missing(`the end of passage ${ref}, which later work shows ended`);
    return;
  }
  if (end.role !== s.role || end["agent/id"] !== s["agent/id"])
    mismatch(`the end of passage ${ref} names another role or agent`);
  const transcript = str(end["transcript/ref"]);
  if (transcript !== undefined) {
    const t = r.transcripts.get(transcript);
    if (t === undefined) missing(`the transcript ${transcript} of passage ${ref}`);
    else if (t["passage/ref"] !== undefined && t["passage/ref"] !== ref)
      mismatch(`the transcript ${transcript} is another passage's`);
  }
  for (const w of r.memoryWrites) {
    if (w["passage/ref"] === ref && w["agent/id"] !== s["agent/id"])
      mismatch(`a memory write of passage ${ref} names another agent`);
  }
  const message = obj(end.message);
  if (s.role === "reviewer" && message?.type === "Verdict") {
    const review = r.reviews.find((x) => x["passage/ref"] === ref);
    if (review === undefined) missing(`the review that passage ${ref} gave`);
    else if (review["proposal/ref"] !== end.subject || !same(review.verdict, message.payload))
      mismatch(`the review of passage ${ref} is not the Verdict its passage ended with`);
  }
  if (
    s.role === "implementer" &&
    !isSubAgentId(s["agent/id"]) &&
    (message?.type === "Question" || message?.type === "DeadEnd") &&
    laterImplementer(p.facts, i) &&
    !p.acts.some((a) => a.kind === "answer" && a.target === ref)
  ) {
    missing(`the operator's answer to the question of passage ${ref}`);
  }
}

/** A cycle's proposal, the Plan of an implementer passage charged before it. */
function cycleOpened(
  s: StepOf<"cycle-opened">,
  charged: ReadonlyMap<string, string>,
  r: LedgerRecords,
  c: FactCheck,
): void {
  const ref = s["proposal/ref"];
  const proposal = r.proposals.get(ref);
  if (proposal === undefined) {
    c.missing(`the proposal ${ref}`);
    return;
  }
  const passage = str(proposal["passage/ref"]) ?? "";
  const planned = obj(r.ends.get(passage)?.message);
  if (charged.get(passage) !== "implementer")
    c.mismatch(`the proposal ${ref} names no implementer passage charged before it`);
  else if (planned?.type !== "Plan" || !same(planned.payload, proposal.candidate))
    c.mismatch(`the proposal ${ref} is not the Plan its passage ${passage} ended with`);
}

/** An admission's accepting review. */
function runAdmitted(s: StepOf<"run-admitted">, r: LedgerRecords, c: FactCheck): void {
  const ref = s["proposal/ref"];
  if (!r.reviews.some((x) => x["proposal/ref"] === ref && obj(x.verdict)?.decision === "accept"))
    c.missing(`a review accepting ${ref}`);
}

/** A changeset is the change of a verified run: its execution concluded verified, for its run. */
function changesetProblems(
  records: readonly AuditedRecord[],
  executions: ReadonlyMap<string, Body>,
  touch: (r: AuditedRecord) => Located,
  found: Findings,
): void {
  for (const r of records) {
    if (r.kind !== "changeset" || r.body === undefined) continue;
    const b = r.body as Body;
    const execution = executions.get(str(b["execution/ref"]) ?? "");
    if (
      execution !== undefined &&
      (execution.outcome !== "verified" || execution["proposal/ref"] !== b["proposal/ref"])
    )
      found.add(
        touch(r),
        "records/mismatch",
        `the changeset ${r.ref} names ${str(b["execution/ref"])}, which is not a verified execution of ${str(b["proposal/ref"])}`,
      );
  }
}

/** A record of a kind a fact must name that belongs to no fact. */
function orphans(
  records: readonly AuditedRecord[],
  touch: (r: AuditedRecord) => Located,
  found: Findings,
): void {
  for (const r of records) {
    if (!BOUND_KINDS.has(r.kind) || r.body === undefined) continue;
    const at = touch(r);
    if (at.fact === undefined) {
      found.add(
        at,
        "records/orphan",
        `record ${r.ref} (${r.kind}) belongs to no fact of this loop`,
      );
    }
  }
}

interface RunRecords {
  readonly executions: ReadonlyMap<string, Body>;
  readonly reports: ReadonlyMap<string, Body>;
  readonly changesets: ReadonlyMap<string, Body>;
  readonly reviews: readonly Body[];
  readonly runsStarted: readonly Body[];
  readonly stepsStarted: readonly Body[];
  readonly actByRef: ReadonlyMap<string, OperatorAct>;
}

/** A conclusion's execution and everything it names. */
function concluded(
  fact: Fact,
  i: number,
  r: RunRecords,
  missing: (what: string) => void,
  mismatch: (what: string) => void,
  found: Findings,
): void {
  const s = fact.step;
  if (s.kind !== "concluded") return;
  const run = s["proposal/ref"];
  const ref = s["execution/ref"];
  const execution = r.executions.get(ref);
  if (execution === undefined) {
    missing(`the execution ${ref}`);
    return;
  }
  if (
    execution["proposal/ref"] !== run ||
    execution.outcome !== s.outcome ||
    execution["refusal/code"] !== s["refusal/code"]
  )
    mismatch(`the execution ${ref} is not the run this fact concludes`);
  const report = r.reports.get(ref);
  if (report === undefined) missing(`the run report of ${ref}`);
  else if (report["proposal/ref"] !== run || report.outcome !== execution.outcome)
    mismatch(`the run report of ${ref} disagrees with its execution`);
  // A verified run's change is what `warrant apply` applies: it is kept with the execution.
  const changeset = r.changesets.get(ref);
  if (s.outcome === "verified" && changeset === undefined)
    missing(`the changeset of ${ref}, the change of a verified run`);
  else if (changeset !== undefined && changeset["proposal/ref"] !== run)
    mismatch(`the changeset of ${ref} names another run`);

  const approvals = execution.approvals;
  const admission = execution.admission;
  const hil = execution.hil;
  if (
    !Array.isArray(approvals) ||
    (admission !== "auto" && admission !== "operator") ||
    (hil !== "each-mutation" && hil !== "none")
  ) {
    found.add(
      { fact: i },
      "records/admission-missing",
      `fact ${fact.sequence}: the execution ${ref} does not name the review and approvals that admitted it`,
    );
    return;
  }
  const reviewRef = str(execution["review/ref"]);
  const review = r.reviews.find((x) => x["review/ref"] === reviewRef);
  if (reviewRef === undefined)
    missing(`the review that admitted ${run} (the execution names none)`);
  else if (review === undefined) missing(`the review ${reviewRef} the execution names`);
  else if (review["proposal/ref"] !== run || obj(review.verdict)?.decision !== "accept")
    mismatch(`the review ${reviewRef} the execution names does not accept ${run}`);
  const approved = new Set<string>();
  for (const a of approvals) {
    const step = str(obj(a)?.["step/id"]);
    const actRef = str(obj(a)?.["act/ref"]);
    const act = actRef === undefined ? undefined : r.actByRef.get(actRef);
    if (act === undefined) {
      missing(`the operator act ${actRef ?? "?"} approving ${step ?? "?"} of ${run}`);
      continue;
    }
    if (act.kind !== "approve" || act.target !== `${run} ${step}`)
      mismatch(`the operator act ${actRef} is not an approval of ${step} of ${run}`);
    else approved.add(step as string);
  }
  if (admission === "operator" && !approved.has("admission"))
    found.add(
      { fact: i },
      "records/approval-missing",
      `fact ${fact.sequence}: ${run} was admitted by the operator, but no approval of its admission is named`,
    );
  const steps = Array.isArray(execution.steps) ? execution.steps.map(obj) : [];
  for (const step of steps) {
    const id = str(step?.["step/id"]) ?? "?";
    if (hil === "each-mutation" && step?.class === "mutation" && !approved.has(id))
      found.add(
        { fact: i },
        "records/approval-missing",
        `fact ${fact.sequence}: mutation ${id} of ${run} ran, but no approval of it is named`,
      );
    if (!r.stepsStarted.some((j) => j["proposal/ref"] === run && j["step/id"] === id))
      missing(`the journal of step ${id} of ${run}`);
  }
  if (steps.length > 0) {
    const started = r.runsStarted.find((j) => j["proposal/ref"] === run);
    if (started === undefined) missing(`the journal of the start of ${run}`);
    else if (started["environment/ref"] !== execution["environment/ref"])
      mismatch(`the run of ${run} started in another environment than its execution names`);
  }
}
