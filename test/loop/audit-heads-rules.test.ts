// The audit's head and act-signature rules (audit-heads.ts) as pure calls over audited records:
// no loop is built or signed, each input is the record rows as the signature pass leaves them
// (sound, signed or not), so each rule is the one that decides. Every problem is asserted by code
// and by the fact it is reported at.
import { describe, expect, it } from "vitest";
import { type AuditedRecord, Findings } from "../../src/core/loop/audit-findings.js";
import {
  actFactOf,
  actSignatureProblems,
  headProblems,
  verifiedHeads,
} from "../../src/core/loop/audit-heads.js";
import type { Fact } from "../../src/core/loop/types.js";
import type { OperatorAct, StoredFact } from "../../src/core/ports/ledger-store.js";
import { operatorActRef } from "../../src/core/records/operator-act.js";

type Step = Record<string, unknown> & { kind: string };

/** Facts of the given steps, numbered from 1, each with the hash `h<sequence>`. */
const stored = (...steps: Step[]): StoredFact[] =>
  steps.map((step, i) => ({
    fact: { sequence: i + 1, step } as unknown as Fact,
    chargeKey: "",
    hash: `h${i + 1}`,
  }));
const facts = (...steps: Step[]) => stored(...steps).map((s) => s.fact);

const OPENED: Step = { kind: "opened" };
const charge = (p: string, role = "implementer"): Step => ({
  kind: "passage-charged",
  "passage/ref": p,
  role,
});
const cycle = (r: string): Step => ({ kind: "cycle-opened", "proposal/ref": r });
const admit = (r: string): Step => ({ kind: "run-admitted", "proposal/ref": r });
const conclude = (r: string): Step => ({ kind: "concluded", "proposal/ref": r });
const RENEWED: Step = { kind: "renewed" };
const CANCELLED: Step = { kind: "cancelled" };

let n = 0;
/** An audited record row (sound and signed unless told). */
function row(
  kind: string,
  body: Record<string, unknown> | undefined,
  o: { sound?: boolean; signed?: boolean } = {},
): AuditedRecord {
  n += 1;
  return {
    index: n,
    ref: `${kind}:${n}`,
    kind,
    body,
    sound: o.sound ?? true,
    signed: o.signed ?? true,
  };
}
const head = (
  sequence: unknown,
  hash: string,
  acts?: unknown,
  signedAt = "2026-12-01T10:00:00Z",
  o: { sound?: boolean; signed?: boolean; kind?: string } = {},
) =>
  row(
    o.kind ?? "head",
    { sequence, hash, ...(acts === undefined ? {} : { acts }), "signed-at": signedAt },
    o,
  );

const act = (kind: string, target: string, operator = "op:alice"): OperatorAct =>
  ({ query: "query:q", kind, target, operator, at: "2026-12-01T10:00:00Z" }) as OperatorAct;

/** The problems found, as [code, path]. */
function run(
  s: StoredFact[],
  records: AuditedRecord[],
  acts: OperatorAct[] = [],
): { problems: string[][]; coverage: ReturnType<typeof headProblems> } {
  const found = new Findings();
  const coverage = headProblems(s, records, acts, found);
  return { problems: found.sorted().map((p) => [p.code, p.path]), coverage };
}

describe("verifiedHeads: the sound, signed heads of a sequence of at least 1, in order", () => {
  it("keeps only heads that are sound and signed, and orders them by sequence, then acts", () => {
    const a = head(3, "x", 2);
    const b = head(1, "y", 5);
    const c = head(3, "z", 1);
    const d = head(2, "w");
    const unsound = head(1, "u", 0, "t", { sound: false });
    const unsigned = head(1, "u", 0, "t", { signed: false });
    const notHead = head(1, "u", 0, "t", { kind: "actSignature" });
    expect(verifiedHeads([a, unsound, b, c, unsigned, d, notHead])).toEqual([
      b.body,
      d.body,
      c.body,
      a.body,
    ]);
  });

  it("drops a head whose sequence is not a safe integer of at least 1 (1 is kept)", () => {
    const kept = head(1, "k");
    const dropped = [0, -1, 1.5, "2", 2 ** 53, undefined].map((s) => head(s, "d"));
    expect(verifiedHeads([...dropped, kept])).toEqual([kept.body]);
  });

  it("orders heads of one sequence by acts, counting acts that are not a count as 0", () => {
    const many = head(2, "a", 3);
    const none = head(2, "b", "7");
    const one = head(2, "c", 1);
    const neg = head(2, "d", -4);
    const byActs = verifiedHeads([many, one, none]).map((h) => h.hash);
    expect(byActs).toEqual(["b", "c", "a"]);
    expect(verifiedHeads([one, neg]).map((h) => h.hash)).toEqual(["d", "c"]);
    // A negative count is 0: equal to a head without acts, whose order is kept.
    const zero = head(2, "e");
    expect(verifiedHeads([zero, neg]).map((h) => h.hash)).toEqual(["e", "d"]);
    expect(verifiedHeads([neg, zero]).map((h) => h.hash)).toEqual(["d", "e"]);
  });
});

describe("actFactOf: the fact an operator act is about", () => {
  const f = facts(
    OPENED,
    charge("p1"),
    cycle("r1"),
    charge("p1"),
    admit("r1"),
    cycle("r2"),
    conclude("r1"),
    admit("r1"),
    charge("p2"),
  );
  // Called inside each test: Stryker activates a mutant for the tests, not for describe's body.
  const of = (a: OperatorAct) => actFactOf(f)(a);

  it("an answer: the first charge of its passage, else the last fact", () => {
    expect(of(act("answer", "p1"))).toBe(1);
    expect(of(act("answer", "p2"))).toBe(8);
    expect(of(act("answer", "p9"))).toBe(8);
    expect(of(act("answer", "r1"))).toBe(8);
  });

  it("an approval or denial: its run's conclusion, else admission, else cycle (the highest, not the latest)", () => {
    expect(of(act("approve", "r1 fix"))).toBe(6);
    expect(of(act("deny", "r1 admission"))).toBe(6);
    expect(of(act("approve", "r2 fix"))).toBe(5);
    expect(of(act("approve", "r1"))).toBe(6);
    expect(of(act("approve", "r2"))).toBe(5);
    expect(of(act("approve", "r9 fix"))).toBe(8);
    expect(of(act("approve", "p1 x"))).toBe(8);
    expect(of(act("approve", " r1"))).toBe(8);
    // A target that starts with its space names the run "" (a run of that name is found).
    const unnamed = actFactOf(facts(OPENED, cycle(""), cycle("r")));
    expect(unnamed(act("approve", " fix"))).toBe(1);
    expect(unnamed(act("approve", "r fix"))).toBe(2);
  });

  it("a run admitted and not concluded: its admission; only opened: its cycle", () => {
    const g = actFactOf(facts(OPENED, cycle("r"), admit("r"), cycle("s"), charge("p")));
    expect(g(act("approve", "r x"))).toBe(2);
    expect(g(act("approve", "s x"))).toBe(3);
    expect(
      actFactOf(facts(OPENED, admit("r"), cycle("r"), charge("p")))(act("approve", "r x")),
    ).toBe(1);
  });

  it("without any fact, fact 0", () => {
    expect(actFactOf([])(act("answer", "p1"))).toBe(0);
    expect(actFactOf([])(act("approve", "r x"))).toBe(0);
  });
});

describe("headProblems: every head matches the chain, and nothing sealed lies after the last", () => {
  const chain = () => stored(OPENED, charge("p1"), cycle("r"), admit("r"), conclude("r"));

  it("heads that match: signed through the highest, the latest head by sequence, acts, then time", () => {
    const s = chain();
    const h1 = head(4, "h4", 1, "2026-12-01T10:00:01Z");
    const h2 = head(5, "h5", 1, "2026-12-01T10:00:02Z");
    const h3 = head(5, "h5", 1, "2026-12-01T10:00:03Z");
    const early = head(5, "h5", 1, "2026-12-01T10:00:00Z");
    const r = run(s, [h1, h3, early, h2], [act("approve", "r fix")]);
    expect(r.problems).toEqual([]);
    expect(r.coverage).toEqual({ signedThrough: 5, actsCovered: 1, last: h3.body });
    // Of one sequence and one count of acts, the one signed later, in whatever order it comes;
    // of two signed at the same instant, the first.
    expect(run(s, [early, h3]).coverage.last).toBe(h3.body);
    expect(run(s, [h3, early]).coverage.last).toBe(h3.body);
    const twin = row("head", { ...h3.body, reason: "stop" });
    expect(run(s, [h3, twin]).coverage.last).toBe(h3.body);
    expect(run(s, [twin, h3]).coverage.last).toBe(twin.body);
    // The latest of one sequence is the one counting most acts, though signed earlier.
    const more = head(5, "h5", 2, "2026-12-01T09:00:00Z");
    const acts = [act("approve", "r fix"), act("approve", "r other")];
    expect(run(s, [h3, more], acts).coverage).toEqual({
      signedThrough: 5,
      actsCovered: 2,
      last: more.body,
    });
    // A head of a later fact beats one with more acts.
    expect(run(s, [more, head(4, "h4", 0)], acts).coverage.last).toBe(more.body);
    const h4 = head(4, "h4", 2);
    expect(run(s, [h4, head(5, "h5", 1)], acts).coverage.last).toEqual(head(5, "h5", 1).body);
  });

  it("no head: nothing covered, no last head, and the conclusion is an unsigned tail", () => {
    const r = run(chain(), []);
    expect(r.coverage).toEqual({ signedThrough: 0, actsCovered: 0 });
    expect(Object.hasOwn(r.coverage, "last")).toBe(false);
    expect(r.problems).toEqual([["audit/unsigned-tail", "/facts/4"]]);
  });

  it("a head whose hash is not the stored one: store/head-mismatch at its fact, once per sequence", () => {
    const s = chain();
    const r = run(s, [
      head(2, "h2"),
      head(4, "forged", 0),
      head(4, "forged", 0, "t2"),
      head(5, "h5"),
    ]);
    expect(r.problems).toEqual([["store/head-mismatch", "/facts/3"]]);
    expect(r.coverage).toEqual({ signedThrough: 5, actsCovered: 0, last: head(5, "h5").body });
    // Two sequences rewritten: each reported; a later match after them does not hide them.
    const two = run(s, [head(2, "x"), head(3, "h3"), head(4, "y")]);
    expect(two.problems).toEqual([
      ["store/head-mismatch", "/facts/1"],
      ["store/head-mismatch", "/facts/3"],
      ["audit/unsigned-tail", "/facts/4"],
    ]);
    expect(two.coverage.signedThrough).toBe(3);
  });

  it("a head that no longer matches still seals what it covers: no unsigned tail before it", () => {
    const r = run(chain(), [head(5, "rewritten")]);
    expect(r.problems).toEqual([["store/head-mismatch", "/facts/4"]]);
    expect(r.coverage).toEqual({ signedThrough: 0, actsCovered: 0 });
  });

  it("a head beyond the stored facts: store/truncated at the first missing fact, for the last such head", () => {
    const s = chain();
    const r = run(s, [head(5, "h5"), head(7, "h7"), head(9, "h9", 0, "t9")]);
    expect(r.problems).toEqual([["store/truncated", "/facts/5"]]);
    expect(r.coverage.signedThrough).toBe(5);
    // A head exactly at the last fact is within the facts.
    expect(run(s, [head(5, "h5")]).problems).toEqual([]);
    // A head beyond does not seal the facts within: the conclusion is then unsigned too.
    expect(run(s, [head(6, "h6")]).problems).toEqual([
      ["audit/unsigned-tail", "/facts/4"],
      ["store/truncated", "/facts/5"],
    ]);
  });

  it("a head counting more acts than the store holds: store/truncated at that head's fact", () => {
    const s = chain();
    const one = [act("approve", "r fix")];
    expect(run(s, [head(3, "h3", 2), head(5, "h5", 1)], one).problems).toEqual([
      ["store/truncated", "/facts/2"],
    ]);
    // Exactly as many acts as the store holds: none removed.
    expect(run(s, [head(5, "h5", 1)], one).problems).toEqual([]);
    // Of heads counting the same acts, the first is named; one beyond the facts is named at the last fact.
    expect(run(s, [head(2, "h2", 1), head(5, "h5", 1)], []).problems).toEqual([
      ["store/truncated", "/facts/1"],
    ]);
    expect(run(s, [head(5, "h5", 1), head(8, "h8", 3)], one).problems).toEqual([
      ["store/truncated", "/facts/4"],
      ["store/truncated", "/facts/5"],
    ]);
  });

  it("a head counting acts it cannot count (negative, fractional, text) covers none", () => {
    const s = chain();
    const one = [act("approve", "r fix")];
    for (const bad of [-1, 0.5, "1", null]) {
      const r = run(s, [head(5, "h5", bad)], one);
      expect(r.coverage.actsCovered, String(bad)).toBe(0);
      expect(r.problems, String(bad)).toEqual([["audit/unsigned-tail", "/facts/4"]]);
    }
    expect(run(s, [head(5, "h5", 0)], []).problems).toEqual([]);
  });

  it("the covered acts are the most any head within the facts counts, not the latest head's", () => {
    const s = chain();
    const two = [act("approve", "r a"), act("approve", "r b")];
    const r = run(s, [head(4, "h4", 2), head(5, "h5", 1)], two);
    expect(r.problems).toEqual([]);
    expect(r.coverage.actsCovered).toBe(2);
    // A head beyond the facts covers no act.
    expect(run(s, [head(5, "h5", 1), head(6, "h6", 2)], two).problems).toEqual([
      ["audit/unsigned-tail", "/facts/4"],
      ["store/truncated", "/facts/5"],
    ]);
  });

  it("after the last head: a conclusion, a renewal or a cancellation is an unsigned tail; charges, cycles and admissions are not", () => {
    const s = stored(
      OPENED,
      charge("p1"),
      conclude("r"),
      RENEWED,
      CANCELLED,
      cycle("s"),
      admit("s"),
      charge("p2"),
    );
    expect(run(s, [head(2, "h2")]).problems).toEqual([
      ["audit/unsigned-tail", "/facts/2"],
      ["audit/unsigned-tail", "/facts/3"],
      ["audit/unsigned-tail", "/facts/4"],
    ]);
    // A head at the cancellation covers everything sealed; the work after it is in flight.
    expect(run(s, [head(5, "h5")]).problems).toEqual([]);
    // A head just before it leaves the cancellation alone uncovered.
    expect(run(s, [head(4, "h4")]).problems).toEqual([["audit/unsigned-tail", "/facts/4"]]);
  });

  it("operator acts beyond those the heads count: each an unsigned tail at the fact it is about", () => {
    const s = stored(OPENED, charge("p1"), cycle("r"), admit("r"), charge("p2"));
    const acts = [act("approve", "r a"), act("answer", "p1"), act("answer", "p2")];
    expect(run(s, [head(4, "h4", 1)], acts).problems).toEqual([
      ["audit/unsigned-tail", "/facts/1"],
      ["audit/unsigned-tail", "/facts/4"],
    ]);
    expect(run(s, [], acts).problems).toEqual([
      ["audit/unsigned-tail", "/facts/1"],
      ["audit/unsigned-tail", "/facts/3"],
      ["audit/unsigned-tail", "/facts/4"],
    ]);
    expect(run(s, [head(5, "h5", 3)], acts).problems).toEqual([]);
  });

  it("only verified heads count: an unsigned or unsound head is as if absent", () => {
    const s = chain();
    for (const o of [{ signed: false }, { sound: false }]) {
      expect(run(s, [head(5, "h5", 0, "t", o)]).problems).toEqual([
        ["audit/unsigned-tail", "/facts/4"],
      ]);
    }
  });
});

describe("actSignatureProblems: every act that counts is signed by a key of the loop", () => {
  const f = facts(OPENED, charge("p1"), cycle("r"), admit("r"));
  const approve = act("approve", "r fix");
  const answer = act("answer", "p1");
  const sig = (
    a: OperatorAct | string,
    o: { sound?: boolean; signed?: boolean; kind?: string } = {},
  ) =>
    row(o.kind ?? "actSignature", { "act/ref": typeof a === "string" ? a : operatorActRef(a) }, o);
  const problems = (records: AuditedRecord[], acts: OperatorAct[]) => {
    const found = new Findings();
    actSignatureProblems(f, records, acts, found);
    return found.sorted().map((p) => [p.code, p.path]);
  };

  it("acts named by sound, signed act signatures pass", () => {
    expect(problems([sig(approve), sig(answer)], [approve, answer])).toEqual([]);
    expect(problems([], [])).toEqual([]);
  });

  it("an act without a signature: records/act-unsigned at the fact it is about", () => {
    expect(problems([sig(approve)], [approve, answer])).toEqual([
      ["records/act-unsigned", "/facts/1"],
    ]);
    expect(problems([sig(answer)], [approve, answer])).toEqual([
      ["records/act-unsigned", "/facts/3"],
    ]);
  });

  it("a signature that is unsound, unsigned, of another kind or of an edited act does not count", () => {
    for (const o of [{ sound: false }, { signed: false }, { kind: "head" }]) {
      expect(problems([sig(approve, o)], [approve]), JSON.stringify(o)).toEqual([
        ["records/act-unsigned", "/facts/3"],
      ]);
    }
    const edited = { ...approve, operator: "op:mallory" } as OperatorAct;
    expect(problems([sig(approve)], [edited])).toEqual([["records/act-unsigned", "/facts/3"]]);
    const notText = row("actSignature", { "act/ref": [operatorActRef(approve)] });
    expect(problems([notText], [approve])).toEqual([["records/act-unsigned", "/facts/3"]]);
    const noBody = row("actSignature", undefined);
    expect(problems([noBody, sig(approve)], [approve])).toEqual([]);
  });
});
