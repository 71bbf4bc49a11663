// The audit's head rules: every signed chain head matches the stored chain (nothing after it
// removed, nothing up to it edited), no head counts more operator acts than the store holds, and no
// conclusion, stop or operator act lies after the last signed head (`audit/unsigned-tail`). A head
// is signed after each of those, so rolling a loop back leaves a tail no head covers unless every
// head after the cut is deleted with the facts, acts and records it vouched for; a tail of charges,
// cycle openings and admissions alone is work in flight (a running drive, or a crash) and passes.

import type { OperatorAct, StoredFact } from "../ports/ledger-store.js";
import { operatorActRef } from "../records/operator-act.js";
import type { AuditedRecord, Findings } from "./audit-findings.js";
import type { Fact } from "./types.js";

/**
 * A verified head's body as the store holds it: its `sequence` is checked (a safe integer of at
 * least 1); its other fields (`hash`, `acts`, `signed-at`, …) are read as they are, whatever they
 * hold, and judged where they are read.
 */
export type StoredHead = Readonly<Record<string, unknown>> & { readonly sequence: number };

/** Whether a record body is a head the audit counts: one whose sequence is a fact's (1 or more). */
function isCountedHead(body: Readonly<Record<string, unknown>> | undefined): body is StoredHead {
  return (
    body !== undefined &&
    typeof body.sequence === "number" &&
    Number.isSafeInteger(body.sequence) &&
    body.sequence >= 1
  );
}

/** What the verified heads cover. */
export interface HeadCoverage {
  /** The highest sequence a head that matches the chain covers (0 when none). */
  readonly signedThrough: number;
  /** The most operator acts a head within the facts counts (heads may be signed concurrently). */
  readonly actsCovered: number;
  /** The latest head that matches the chain: highest sequence, then most acts, then latest. */
  readonly last?: StoredHead;
}

/** The fact kinds a head must follow: conclusions, stops and the operator's acts on the loop. */
const SEALED = new Set<Fact["step"]["kind"]>(["concluded", "cancelled", "renewed"]);

const actsOf = (h: StoredHead) =>
  Number.isSafeInteger(h.acts) && (h.acts as number) >= 0 ? (h.acts as number) : 0;

/** Whether head `a` vouches for more than `b`: a later fact, else more acts, else signed later. */
const later = (a: StoredHead, b: StoredHead) =>
  a.sequence !== b.sequence
    ? a.sequence > b.sequence
    : actsOf(a) !== actsOf(b)
      ? actsOf(a) > actsOf(b)
      : String(a["signed-at"]) > String(b["signed-at"]);

/** The verified heads (sound, signed by a key of the loop), in order of sequence. */
export function verifiedHeads(records: readonly AuditedRecord[]): StoredHead[] {
  return records
    .filter((r) => r.kind === "head" && r.sound && r.signed)
    .map((r) => r.body)
    .filter(isCountedHead)
    .sort((a, b) => a.sequence - b.sequence || actsOf(a) - actsOf(b));
}

/**
 * The fact an operator act is about: the passage an answer answers; for an approval or denial, the
 * conclusion of its run, else the run's admission or cycle; else the loop's last fact.
 */
export function actFactOf(facts: readonly Fact[]): (act: OperatorAct) => number {
  const byPassage = new Map<string, number>();
  const byRun = new Map<string, number>();
  const rank = { "cycle-opened": 1, "run-admitted": 2, concluded: 3 } as const;
  const runRank = new Map<string, number>();
  facts.forEach((f, i) => {
    const s = f.step;
    if (s.kind === "passage-charged" && !byPassage.has(s["passage/ref"]))
      byPassage.set(s["passage/ref"], i);
    if (s.kind === "cycle-opened" || s.kind === "run-admitted" || s.kind === "concluded") {
      const run = s["proposal/ref"];
      if ((runRank.get(run) ?? 0) < rank[s.kind]) {
        runRank.set(run, rank[s.kind]);
        byRun.set(run, i);
      }
    }
  });
  const last = Math.max(0, facts.length - 1);
  return (act) => {
    if (act.kind === "answer") return byPassage.get(act.target) ?? last;
    const space = act.target.indexOf(" ");
    return byRun.get(space < 0 ? act.target : act.target.slice(0, space)) ?? last;
  };
}

function describeAct(a: OperatorAct): string {
  return `${a.kind} of ${a.target} by ${a.operator} at ${a.at} (${operatorActRef(a)})`;
}

/**
 * Every head checked against the stored chain and acts, and the tail after the last head checked
 * for what must be covered. Each problem is reported at the first fact it touches.
 */
export function headProblems(
  stored: readonly StoredFact[],
  records: readonly AuditedRecord[],
  acts: readonly OperatorAct[],
  found: Findings,
): HeadCoverage {
  const heads = verifiedHeads(records);
  let signedThrough = 0;
  let actsCovered = 0;
  let last: StoredHead | undefined;
  let reported = 0;
  // What the tail check counts from: every head within the facts, matching or not (a head that no
  // longer matches is reported as a rewrite, not again as a rollback).
  let sealedThrough = 0;
  for (const head of heads) {
    const n = head.sequence;
    if (n > stored.length) continue;
    sealedThrough = n;
    actsCovered = Math.max(actsCovered, actsOf(head));
    if (stored[n - 1]?.hash === head.hash) {
      signedThrough = n;
      if (last === undefined || later(head, last)) last = head;
      continue;
    }
    if (n === reported) continue;
    reported = n;
    found.add(
      { fact: n - 1 },
      "store/head-mismatch",
      `the chain was rewritten between facts ${signedThrough + 1} and ${n}: fact ${n}'s hash is not the one signed at ${String(head["signed-at"])}`,
    );
  }
  const beyond = heads.filter((h) => h.sequence > stored.length).at(-1);
  if (beyond !== undefined) {
    found.add(
      { fact: stored.length },
      "store/truncated",
      `facts ${stored.length + 1} to ${beyond.sequence} are missing: a head signed at ${String(beyond["signed-at"])} covers fact ${beyond.sequence}`,
    );
  }
  const mostActs = heads.reduce<StoredHead | undefined>(
    (m, h) => (m === undefined || actsOf(h) > actsOf(m) ? h : m),
    undefined,
  );
  if (mostActs !== undefined && actsOf(mostActs) > acts.length) {
    found.add(
      { fact: Math.min(mostActs.sequence, stored.length) - 1 },
      "store/truncated",
      `operator acts were removed: a head signed at ${String(mostActs["signed-at"])} counts ${actsOf(mostActs)} acts that count, the store holds ${acts.length}`,
    );
  }
  for (let i = sealedThrough; i < stored.length; i++) {
    const fact = (stored[i] as StoredFact).fact;
    if (!SEALED.has(fact.step.kind)) continue;
    found.add(
      { fact: i },
      "audit/unsigned-tail",
      `fact ${fact.sequence} (${fact.step.kind}) lies after the last signed head (${sealedThrough === 0 ? "there is none" : `at fact ${sealedThrough}`}): the host signs a head after every conclusion, stop and operator act, and none covers this one (removed, or never signed)`,
    );
  }
  const actFact = actFactOf(stored.map((s) => s.fact));
  for (const act of acts.slice(actsCovered)) {
    found.add(
      { fact: actFact(act) },
      "audit/unsigned-tail",
      `the operator act ${describeAct(act)} lies after the last signed head, which counts ${actsCovered} acts: the host signs a head after every act, and none covers this one`,
    );
  }
  return last === undefined ? { signedThrough, actsCovered } : { signedThrough, actsCovered, last };
}

/**
 * Every operator act that counts is signed by a key of the loop: a sound, signed act signature
 * names its ref (which binds every field of the act). Reported at the act's fact.
 */
export function actSignatureProblems(
  facts: readonly Fact[],
  records: readonly AuditedRecord[],
  acts: readonly OperatorAct[],
  found: Findings,
): void {
  const signed = new Set<string>();
  for (const r of records) {
    if (r.kind !== "actSignature" || !r.sound || !r.signed) continue;
    const ref = r.body?.["act/ref"];
    if (typeof ref === "string") signed.add(ref);
  }
  const actFact = actFactOf(facts);
  for (const act of acts) {
    if (signed.has(operatorActRef(act))) continue;
    found.add(
      { fact: actFact(act) },
      "records/act-unsigned",
      `the operator act ${describeAct(act)} is not signed by a host key of this loop (posted by another hand, or edited)`,
    );
  }
}
