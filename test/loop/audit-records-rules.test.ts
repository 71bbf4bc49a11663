// The audit's record rules (audit-records.ts) as pure calls over the records of a cached loop
// (audited-rows.json): every record a fact names is there and agrees with what names it. Each
// test changes one record (or fact, or act) of a loop that passes every rule, so the rule under
// test is the one that refuses; each problem is asserted by code and by the fact it is reported at.
import { describe, expect, it } from "vitest";
import { type AuditedRecord, Findings, type Located } from "../../src/core/loop/audit-findings.js";
import { recordProblems } from "../../src/core/loop/audit-records.js";
import type { Fact } from "../../src/core/loop/types.js";
import type { OperatorAct } from "../../src/core/ports/ledger-store.js";
import { operatorActRef } from "../../src/core/records/operator-act.js";
import { cachedLoops } from "./audited-rows.js";

type Body = Record<string, unknown>;
interface Loop {
  facts: Fact[];
  records: AuditedRecord[];
  acts: OperatorAct[];
}

const LOOPS = cachedLoops();
const PROPOSAL = LOOPS.failed.proposal;

/** A loop of the cache as the record rules see it: facts, records with their bodies, acts. */
function loop(which: "failed" | "verified" = "failed"): Loop {
  const c = cachedLoops()[which];
  return {
    facts: c.rows.facts.map((f) => JSON.parse(f.text) as Fact),
    records: c.rows.records.map((r, index) => {
      const { signature: _s, ...body } = JSON.parse(r.text) as Body;
      return { index, ref: r.ref, kind: r.kind, body, sound: true, signed: true };
    }),
    acts: [...c.acts],
  };
}

/** The loop with the `nth` record of `kind` changed by `f` (undefined: the record is gone). */
function edit(l: Loop, kind: string, f: (b: Body) => Body | undefined, nth = 0): Loop {
  let seen = -1;
  const records = l.records.flatMap((r) => {
    if (r.kind !== kind || ++seen !== nth) return [r];
    const body = f({ ...(r.body as Body) });
    return body === undefined ? [] : [{ ...r, body }];
  });
  expect(seen, `no record ${kind} #${nth}`).toBeGreaterThanOrEqual(nth);
  return { ...l, records };
}
const drop = (l: Loop, kind: string, nth = 0) => edit(l, kind, () => undefined, nth);
const body = (l: Loop, kind: string, nth = 0) =>
  l.records.filter((r) => r.kind === kind)[nth]?.body as Body;

/** The loop with a record added. */
function add(l: Loop, kind: string, b: Body | undefined, ref = `${kind}:added`): Loop {
  const index = l.records.length;
  return {
    ...l,
    records: [...l.records, { index, ref, kind, body: b, sound: true, signed: true }],
  };
}

/** Each record is located at fact 100 + its row, so that a problem names the record it is about. */
const byRow = (r: AuditedRecord): Located => ({ fact: 100 + r.index });

function problems(l: Loop, touch: (r: AuditedRecord) => Located = byRow): string[][] {
  const found = new Findings();
  recordProblems(l.facts, l.records, l.acts, touch, found);
  return found.sorted().map((p) => [p.code, p.path]);
}

/** The fact of the given step kind (its index). */
const at = (l: Loop, kind: string, nth = 0) =>
  `/facts/${l.facts.map((f, i) => [f.step.kind, i] as const).filter(([k]) => k === kind)[nth]?.[1]}`;

const MISSING = "records/missing";
const MISMATCH = "records/mismatch";

describe("the cached loops pass every record rule", () => {
  it("a failed run and a verified one (with its changeset)", () => {
    expect(problems(loop())).toEqual([]);
    expect(problems(loop("verified"))).toEqual([]);
  });
});

describe("an opening has its binding", () => {
  it("the binding gone, of another ref, or unreadable: records/missing at the opening", () => {
    const l = loop();
    expect(problems(drop(l, "binding"))).toEqual([[MISSING, "/facts/0"]]);
    expect(problems(edit(l, "binding", (b) => ({ ...b, "binding/ref": "other" })))).toEqual([
      [MISSING, "/facts/0"],
    ]);
    const unreadable = {
      ...l,
      records: l.records.map((r) => (r.kind === "binding" ? { ...r, body: undefined } : r)),
    };
    expect(problems(unreadable)).toEqual([[MISSING, "/facts/0"]]);
    // A body of the binding's ref under another kind is not a binding.
    expect(problems(add(drop(l, "binding"), "review", body(l, "binding")))).toEqual([
      [MISSING, "/facts/0"],
    ]);
  });
});

describe("a passage followed by later work has its end, and the end agrees", () => {
  it("the end gone while later work shows it ended: records/missing at the charge", () => {
    const l = loop();
    expect(problems(drop(l, "passageEnd", 1))).toEqual([[MISSING, at(l, "passage-charged", 1)]]);
  });

  it("the end of the last work not yet there: no problem (a passage in flight)", () => {
    const l = loop();
    const inFlight = { ...drop(l, "passageEnd", 1), facts: l.facts.slice(0, 4) };
    // The reviewer's passage is the last work; its review and the run are not named by any fact.
    expect(problems(inFlight).filter(([c]) => c === MISSING)).toEqual([]);
    // An opening or a renewal after it is not work.
    const renewed = {
      ...inFlight,
      facts: [...inFlight.facts, { ...l.facts[0], step: { kind: "renewed" } } as Fact],
    };
    expect(problems(renewed).filter(([c]) => c === MISSING)).toEqual([]);
  });

  it("an end of another role or of another agent: records/mismatch", () => {
    const l = loop();
    expect(problems(edit(l, "passageEnd", (b) => ({ ...b, role: "reviewer" }), 0))).toEqual([
      [MISMATCH, "/facts/1"],
    ]);
    expect(problems(edit(l, "passageEnd", (b) => ({ ...b, "agent/id": "agent:a2" }), 0))).toEqual([
      [MISMATCH, "/facts/1"],
    ]);
  });

  it("the end's transcript gone: records/missing; another passage's: records/mismatch; one naming no passage passes", () => {
    const l = loop();
    expect(problems(drop(l, "transcript"))).toEqual([[MISSING, "/facts/1"]]);
    expect(problems(edit(l, "transcript", (b) => ({ ...b, "passage/ref": "passage:r1" })))).toEqual(
      [[MISMATCH, "/facts/1"]],
    );
    expect(
      problems(
        edit(l, "transcript", (b) => {
          const { "passage/ref": _p, ...rest } = b;
          return rest;
        }),
      ),
    ).toEqual([]);
    // An end naming a transcript that is not text names none.
    expect(
      problems(
        edit(drop(l, "transcript"), "passageEnd", (b) => ({ ...b, "transcript/ref": 7 }), 0),
      ),
    ).toEqual([]);
    // The transcript found by its ref, not by its kind alone.
    expect(
      problems(
        edit(l, "passageEnd", (b) => ({ ...b, "transcript/ref": "passage-transcript:other" }), 0),
      ),
    ).toEqual([[MISSING, "/facts/1"]]);
  });

  it("a memory write of the passage by another agent: records/mismatch; by its agent, or of another passage: none", () => {
    const l = loop();
    const write = (passage: string, agent: string) => ({
      "passage/ref": passage,
      "agent/id": agent,
    });
    expect(problems(add(l, "memoryWrite", write("passage:p1", "agent:a1")))).toEqual([]);
    expect(problems(add(l, "memoryWrite", write("passage:p1", "agent:zz")))).toEqual([
      [MISMATCH, "/facts/1"],
    ]);
    expect(problems(add(l, "memoryWrite", write("passage:p9", "agent:zz")))).toEqual([]);
    // Of another kind, the same body is no memory write.
    expect(problems(add(l, "runStarted", write("passage:p1", "agent:zz")))).toEqual([]);
  });

  it("a reviewer's Verdict without its review: records/missing; a review of another proposal or verdict: records/mismatch", () => {
    const l = loop();
    const r = at(l, "passage-charged", 1);
    const noReview = drop(l, "review");
    expect(problems(noReview)).toContainEqual([MISSING, r]);
    expect(
      problems(edit(l, "review", (b) => ({ ...b, "passage/ref": "passage:p1" }))),
    ).toContainEqual([MISSING, r]);
    expect(problems(edit(l, "passageEnd", (b) => ({ ...b, subject: "other" }), 1))).toEqual([
      [MISMATCH, r],
    ]);
    expect(
      problems(
        edit(
          l,
          "passageEnd",
          (b) => ({
            ...b,
            message: { type: "Verdict", payload: { decision: "reject", findings: [] } },
          }),
          1,
        ),
      ),
    ).toEqual([[MISMATCH, r]]);
  });

  it("a verdict that is not a reviewer's, or a reviewer's end that is not a Verdict, needs no review", () => {
    const l = loop();
    const other = { ...l, records: l.records.filter((x) => x.kind !== "review") };
    const roleless = edit(
      {
        ...other,
        facts: l.facts.map((f, i) =>
          i === 3 ? ({ ...f, step: { ...f.step, role: "adversarial-critic" } } as Fact) : f,
        ),
      },
      "passageEnd",
      (b) => ({ ...b, role: "adversarial-critic" }),
      1,
    );
    expect(problems(roleless).filter(([, p]) => p === "/facts/3")).toEqual([]);
    const notVerdict = edit(
      other,
      "passageEnd",
      (b) => ({ ...b, message: { type: "Note", payload: {} } }),
      1,
    );
    expect(problems(notVerdict).filter(([, p]) => p === "/facts/3")).toEqual([]);
    const notObject = edit(other, "passageEnd", (b) => ({ ...b, message: ["Verdict"] }), 1);
    expect(problems(notObject).filter(([, p]) => p === "/facts/3")).toEqual([]);
  });
});

describe("a question an implementer asked before later implementer work has the operator's answer", () => {
  /** The loop with the planner's end a Question (or DeadEnd) and `after` charged after it. */
  function asked(type: string, after: { role: string; agent: string }, agent = "agent:a1") {
    const l = loop();
    const facts = l.facts
      .slice(0, 2)
      .map((f, i) => (i === 1 ? ({ ...f, step: { ...f.step, "agent/id": agent } } as Fact) : f));
    const charge = {
      ...l.facts[1],
      sequence: 3,
      step: {
        kind: "passage-charged",
        "passage/ref": "passage:p2",
        "agent/id": after.agent,
        role: after.role,
      },
    } as Fact;
    const base = { ...l, facts: [...facts, charge], acts: [] };
    const records = edit(
      base,
      "passageEnd",
      (b) => ({ ...b, "agent/id": agent, message: { type, payload: {} } }),
      0,
    );
    return {
      ...records,
      records: records.records.filter(
        (r) => r.kind !== "passageEnd" || r.body?.["passage/ref"] === "passage:p1",
      ),
    };
  }
  const answer = (target: string, kind = "answer") =>
    ({ query: "q", kind, target, operator: "op", at: "t" }) as OperatorAct;
  const only = (l: Loop) => problems(l).filter(([c, p]) => c === MISSING && p === "/facts/1");

  it("a Question or a DeadEnd, then another implementer passage, without an answer: records/missing at the question", () => {
    for (const type of ["Question", "DeadEnd"]) {
      expect(only(asked(type, { role: "implementer", agent: "agent:a1" })), type).toEqual([
        [MISSING, "/facts/1"],
      ]);
    }
  });

  it("answered, not a question, asked by a sub-agent, or followed by no implementer's own passage: none", () => {
    const l = asked("Question", { role: "implementer", agent: "agent:a1" });
    expect(only({ ...l, acts: [answer("passage:p1")] })).toEqual([]);
    expect(only({ ...l, acts: [answer("passage:p2")] })).toEqual([[MISSING, "/facts/1"]]);
    expect(only({ ...l, acts: [answer("passage:p1", "approve")] })).toEqual([
      [MISSING, "/facts/1"],
    ]);
    expect(only(asked("Plan", { role: "implementer", agent: "agent:a1" }))).toEqual([]);
    expect(
      only(asked("Question", { role: "implementer", agent: "agent:a1" }, "agent:a1#sub")),
    ).toEqual([]);
    expect(only(asked("Question", { role: "reviewer", agent: "agent:a1" }))).toEqual([]);
    expect(only(asked("Question", { role: "implementer", agent: "agent:a1#sub" }))).toEqual([]);
  });

  it("a reviewer's Question needs no answer", () => {
    const l = asked("Question", { role: "implementer", agent: "agent:a1" });
    const reviewer = {
      ...l,
      facts: l.facts.map((f, i) =>
        i === 1 ? ({ ...f, step: { ...f.step, role: "reviewer" } } as Fact) : f,
      ),
    };
    expect(only(edit(reviewer, "passageEnd", (b) => ({ ...b, role: "reviewer" })))).toEqual([]);
  });
});

describe("a cycle has its proposal, planned by an implementer passage charged before it", () => {
  it("the proposal gone: records/missing at the cycle", () => {
    const l = loop();
    expect(problems(drop(l, "proposal"))).toEqual([[MISSING, "/facts/2"]]);
  });

  it("a proposal naming a passage not charged, or not an implementer's: records/mismatch", () => {
    const l = loop();
    expect(problems(edit(l, "proposal", (b) => ({ ...b, "passage/ref": "passage:p9" })))).toEqual([
      [MISMATCH, "/facts/2"],
    ]);
    // The reviewer's passage is charged only after the cycle.
    expect(problems(edit(l, "proposal", (b) => ({ ...b, "passage/ref": "passage:r1" })))).toEqual([
      [MISMATCH, "/facts/2"],
    ]);
    expect(problems(edit(l, "proposal", (b) => ({ ...b, "passage/ref": 1 })))).toEqual([
      [MISMATCH, "/facts/2"],
    ]);
    const reviewerPlanned = {
      ...l,
      facts: l.facts.map((f, i) =>
        i === 1 ? ({ ...f, step: { ...f.step, role: "reviewer" } } as Fact) : f,
      ),
    };
    expect(
      problems(edit(reviewerPlanned, "passageEnd", (b) => ({ ...b, role: "reviewer" }), 0)),
    ).toEqual([[MISMATCH, "/facts/2"]]);
  });

  it("a proposal that is not the Plan its passage ended with: records/mismatch", () => {
    const l = loop();
    expect(
      problems(edit(l, "proposal", (b) => ({ ...b, candidate: { hypothesis: "other" } }))),
    ).toEqual([[MISMATCH, "/facts/2"]]);
    expect(
      problems(
        edit(
          l,
          "passageEnd",
          (b) => ({ ...b, message: { ...(b.message as Body), type: "Question" } }),
          0,
        ),
      ),
    ).toEqual([[MISMATCH, "/facts/2"]]);
    // A plan without a payload is not a plan without a candidate's content.
    expect(
      problems(
        edit(
          edit(l, "passageEnd", (b) => ({ ...b, message: { type: "Plan" } }), 0),
          "proposal",
          (b) => ({ ...b, candidate: null }),
        ),
      ),
    ).toEqual([]);
  });
});

describe("an admission has a review accepting its run", () => {
  it("no review, a review of another run, or one that does not accept: records/missing at the admission", () => {
    const l = loop();
    const admitted = at(l, "run-admitted");
    // Without the review the reviewer's Verdict and the execution miss it too.
    expect(problems(drop(l, "review"))).toContainEqual([MISSING, admitted]);
    const other = edit(l, "review", (b) => ({ ...b, "proposal/ref": "corpus-experiment:other" }));
    expect(problems(other)).toContainEqual([MISSING, admitted]);
    const rejects = edit(l, "review", (b) => ({
      ...b,
      verdict: { decision: "reject", findings: [] },
    }));
    expect(problems(rejects)).toContainEqual([MISSING, admitted]);
    const noVerdict = edit(l, "review", (b) => ({ ...b, verdict: "accept" }));
    expect(problems(noVerdict)).toContainEqual([MISSING, admitted]);
    // A second, accepting review of the run suffices.
    expect(
      problems(add(rejects, "review", body(l, "review"))).filter(([, p]) => p === admitted),
    ).toEqual([]);
  });
});

describe("a conclusion has its execution, run report and (verified) changeset, which agree with it", () => {
  const C = "/facts/5";

  it("the execution gone: records/missing, and nothing else about it", () => {
    const l = loop();
    expect(problems(drop(l, "execution"))).toEqual([[MISSING, C]]);
  });

  it("an execution of another run, outcome or refusal code: records/mismatch", () => {
    const l = loop();
    for (const [field, value] of [
      ["proposal/ref", "corpus-experiment:other"],
      ["outcome", "verified"],
      ["refusal/code", "x/y"],
    ] as const) {
      const p = problems(edit(l, "execution", (b) => ({ ...b, [field]: value })));
      expect(
        p.filter(([c, path]) => c === MISMATCH && path === C).length,
        field,
      ).toBeGreaterThanOrEqual(1);
    }
    expect(problems(edit(l, "execution", (b) => ({ ...b, "refusal/code": "x/y" })))).toEqual([
      [MISMATCH, C],
    ]);
  });

  it("the run report gone: records/missing; of another run or outcome: records/mismatch", () => {
    const l = loop();
    expect(problems(drop(l, "runReport"))).toEqual([[MISSING, C]]);
    expect(problems(edit(l, "runReport", (b) => ({ ...b, "proposal/ref": "other" })))).toEqual([
      [MISMATCH, C],
    ]);
    expect(problems(edit(l, "runReport", (b) => ({ ...b, outcome: "verified" })))).toEqual([
      [MISMATCH, C],
    ]);
    // Found by the execution it names.
    expect(problems(edit(l, "runReport", (b) => ({ ...b, "execution/ref": "other" })))).toEqual([
      [MISSING, C],
    ]);
  });

  it("a verified run without its changeset: records/missing; a changeset of another run: records/mismatch", () => {
    const v = loop("verified");
    expect(problems(drop(v, "changeset"))).toEqual([[MISSING, C]]);
    const other = problems(edit(v, "changeset", (b) => ({ ...b, "proposal/ref": "other" })));
    expect(other).toContainEqual([MISMATCH, C]);
    // A failed run needs none; a changeset it has anyway is of a run that is not verified.
    const l = loop();
    const cs = { ...body(v, "changeset"), "execution/ref": body(l, "execution")["execution/ref"] };
    const withCs = add(l, "changeset", cs);
    expect(problems(withCs)).toEqual([[MISMATCH, `/facts/${100 + l.records.length}`]]);
  });

  it("a changeset naming a verified execution of another run: records/mismatch at the changeset", () => {
    const v = loop("verified");
    const row = v.records.findIndex((r) => r.kind === "changeset");
    expect(problems(edit(v, "changeset", (b) => ({ ...b, "proposal/ref": "other" })))).toEqual([
      [MISMATCH, C],
      [MISMATCH, `/facts/${100 + row}`],
    ]);
    // One naming an execution that is not there is judged by what names it (nothing: an orphan is the touch's).
    expect(
      problems(add(v, "changeset", { "execution/ref": "nothing", "proposal/ref": "other" })),
    ).toEqual([]);
    expect(problems(add(v, "changeset", undefined))).toEqual([]);
  });

  it("an execution that does not name its admission: records/admission-missing, and nothing after it", () => {
    const l = loop();
    for (const change of [
      { approvals: {} },
      { approvals: undefined },
      { admission: "someone" },
      { admission: undefined },
      { hil: "sometimes" },
      { hil: undefined },
    ]) {
      const p = problems(
        edit(l, "execution", (b) => ({ ...b, ...change, "review/ref": undefined })),
      );
      expect(p, JSON.stringify(change)).toEqual([["records/admission-missing", C]]);
    }
    for (const change of [{ admission: "operator" }, { hil: "none" }]) {
      const p = problems(edit(l, "execution", (b) => ({ ...b, ...change })));
      expect(p, JSON.stringify(change)).not.toContainEqual(["records/admission-missing", C]);
    }
  });

  it("the admitting review: not named, not there, of another run, or not accepting", () => {
    const l = loop();
    expect(problems(edit(l, "execution", (b) => ({ ...b, "review/ref": undefined })))).toEqual([
      [MISSING, C],
    ]);
    expect(problems(edit(l, "execution", (b) => ({ ...b, "review/ref": 5 })))).toEqual([
      [MISSING, C],
    ]);
    expect(problems(edit(l, "execution", (b) => ({ ...b, "review/ref": "review:other" })))).toEqual(
      [[MISSING, C]],
    );
    const add2 = (b: Body) =>
      add(l, "review", {
        ...body(l, "review"),
        ...b,
        "review/ref": "review:2",
        "passage/ref": "passage:none",
      });
    const names2 = (x: Loop) => edit(x, "execution", (b) => ({ ...b, "review/ref": "review:2" }));
    expect(problems(names2(add2({})))).toEqual([]);
    expect(problems(names2(add2({ "proposal/ref": "other" })))).toEqual([[MISMATCH, C]]);
    expect(problems(names2(add2({ verdict: { decision: "reject" } })))).toEqual([[MISMATCH, C]]);
    expect(problems(names2(add2({ verdict: null })))).toEqual([[MISMATCH, C]]);
  });

  it("each approval names an act of the store that approves that step of that run", () => {
    const l = loop();
    const [act] = l.acts as [OperatorAct];
    const approvals = (a: unknown) => edit(l, "execution", (b) => ({ ...b, approvals: a }));
    // The step is then not approved either.
    const unapproved = [
      [MISSING, C],
      ["records/approval-missing", C],
    ];
    expect(
      problems(approvals([{ "step/id": "fix", "act/ref": "warrant-operator-act:none" }])),
    ).toEqual(unapproved);
    expect(problems(approvals([{ "step/id": "fix" }]))).toEqual(unapproved);
    expect(problems(approvals(["fix"]))).toEqual(unapproved);
    expect(problems(approvals([{ "step/id": "other", "act/ref": operatorActRef(act) }]))).toEqual([
      [MISMATCH, C],
      ["records/approval-missing", C],
    ]);
    const deny = { ...act, kind: "deny" } as OperatorAct;
    const denied = {
      ...approvals([{ "step/id": "fix", "act/ref": operatorActRef(deny) }]),
      acts: [deny],
    };
    expect(problems(denied)).toEqual([
      [MISMATCH, C],
      ["records/approval-missing", C],
    ]);
    const elsewhere = { ...act, target: `${PROPOSAL} other` } as OperatorAct;
    const misnamed = {
      ...approvals([{ "step/id": "fix", "act/ref": operatorActRef(elsewhere) }]),
      acts: [elsewhere],
    };
    expect(problems(misnamed)).toEqual([
      [MISMATCH, C],
      ["records/approval-missing", C],
    ]);
  });

  it("admitted by the operator: an approval of the admission must be named", () => {
    const l = loop();
    const [act] = l.acts as [OperatorAct];
    const byOperator = edit(l, "execution", (b) => ({ ...b, admission: "operator" }));
    expect(problems(byOperator)).toEqual([["records/approval-missing", C]]);
    const admissionAct = { ...act, target: `${PROPOSAL} admission` } as OperatorAct;
    const approved = {
      ...edit(byOperator, "execution", (b) => ({
        ...b,
        approvals: [
          ...(b.approvals as unknown[]),
          { "step/id": "admission", "act/ref": operatorActRef(admissionAct) },
        ],
      })),
      acts: [act, admissionAct],
    };
    expect(problems(approved)).toEqual([]);
  });

  it("with each-mutation approval, every mutation step that ran is approved; with none, or a step that reads, not", () => {
    const l = loop();
    const unapproved = edit(l, "execution", (b) => ({ ...b, approvals: [] }));
    expect(problems(unapproved)).toEqual([["records/approval-missing", C]]);
    expect(problems(edit(unapproved, "execution", (b) => ({ ...b, hil: "none" })))).toEqual([]);
    const reads = edit(unapproved, "execution", (b) => ({
      ...b,
      steps: (b.steps as Body[]).map((s) => ({ ...s, class: "read" })),
    }));
    expect(problems(reads)).toEqual([]);
  });

  it("every step that ran has its journal, and the run its start, in the environment the execution names", () => {
    const l = loop();
    expect(problems(drop(l, "stepStarted"))).toEqual([[MISSING, C]]);
    expect(problems(edit(l, "stepStarted", (b) => ({ ...b, "step/id": "other" })))).toEqual([
      [MISSING, C],
    ]);
    expect(problems(edit(l, "stepStarted", (b) => ({ ...b, "proposal/ref": "other" })))).toEqual([
      [MISSING, C],
    ]);
    expect(problems(drop(l, "runStarted"))).toEqual([[MISSING, C]]);
    expect(problems(edit(l, "runStarted", (b) => ({ ...b, "proposal/ref": "other" })))).toEqual([
      [MISSING, C],
    ]);
    expect(
      problems(edit(l, "runStarted", (b) => ({ ...b, "environment/ref": "environment:e2" }))),
    ).toEqual([[MISMATCH, C]]);
    // A run that ran no step needs neither journal.
    const noSteps = edit(drop(drop(l, "stepStarted"), "runStarted"), "execution", (b) => ({
      ...b,
      steps: [],
      approvals: [],
    }));
    expect(problems(noSteps)).toEqual([]);
    const notList = edit(drop(drop(l, "stepStarted"), "runStarted"), "execution", (b) => ({
      ...b,
      steps: { fix: {} },
      approvals: [],
    }));
    expect(problems(notList)).toEqual([]);
    // A step without an id is journalled as "?".
    const unnamed = edit(drop(l, "stepStarted"), "execution", (b) => ({
      ...b,
      steps: [{ class: "read" }],
    }));
    expect(
      problems(add(unnamed, "stepStarted", { "proposal/ref": PROPOSAL, "step/id": "?" })),
    ).toEqual([]);
  });
});

describe("a record nothing names is an orphan", () => {
  it("records/orphan for a bound kind its touch places at no fact; other kinds and unreadable rows are not", () => {
    const l = loop();
    const nowhere = (kinds: string[]) => (r: AuditedRecord) =>
      kinds.includes(r.kind) ? { record: r.index } : { fact: 0 };
    const row = (kind: string) => `/records/${l.records.findIndex((r) => r.kind === kind)}`;
    for (const kind of [
      "proposal",
      "review",
      "passageEnd",
      "transcript",
      "runStarted",
      "stepStarted",
      "execution",
      "runReport",
    ]) {
      expect(problems(l, nowhere([kind]))[0], kind).toEqual(["records/orphan", row(kind)]);
    }
    expect(problems(add(l, "memoryWrite", {}), nowhere(["memoryWrite"]))).toEqual([
      ["records/orphan", `/records/${l.records.length}`],
    ]);
    const v = loop("verified");
    expect(problems(v, nowhere(["changeset"]))).toEqual([
      ["records/orphan", `/records/${v.records.findIndex((r) => r.kind === "changeset")}`],
    ]);
    expect(problems(l, nowhere(["binding", "hostKey", "head", "actSignature"]))).toEqual([]);
    expect(problems(add(l, "proposal", undefined), nowhere(["proposal"])).length).toBe(1);
  });
});

describe("each part decides alone", () => {
  const C = "/facts/5";

  it("work of each kind after a charge shows the passage ended: its end is then missing", () => {
    const l = loop();
    const [opened, p1, cycle, r1, admitted, concluded] = l.facts as [
      Fact,
      Fact,
      Fact,
      Fact,
      Fact,
      Fact,
    ];
    const noEnd = drop(l, "passageEnd", 0);
    for (const after of [r1, cycle, admitted, concluded]) {
      const facts = [opened, p1, after];
      expect(
        problems({ ...noEnd, facts }).filter(([, p]) => p === "/facts/1"),
        after.step.kind,
      ).toContainEqual([MISSING, "/facts/1"]);
    }
    const stopped = { ...l.facts[0], step: { kind: "cancelled" } } as Fact;
    expect(problems({ ...noEnd, facts: [opened, p1, stopped] })).toEqual([]);
  });

  it("of two ends of one passage, or two run reports of one execution, the first is the one judged", () => {
    const l = loop();
    const end = body(l, "passageEnd", 0);
    expect(problems(add(l, "passageEnd", { ...end, role: "reviewer" }))).toEqual([]);
    const report = body(l, "runReport");
    expect(problems(add(l, "runReport", { ...report, outcome: "verified" }))).toEqual([]);
    const first = edit(l, "passageEnd", (b) => ({ ...b, role: "reviewer" }), 0);
    expect(problems(add(first, "passageEnd", end))).toEqual([[MISMATCH, "/facts/1"]]);
  });

  it("a transcript is found among the transcripts only: a row of another kind under its ref is not it", () => {
    const l = loop();
    const t = l.records.find((r) => r.kind === "transcript") as AuditedRecord;
    const relabelled = {
      ...l,
      records: l.records.map((r) => (r === t ? { ...r, kind: "review" } : r)),
    };
    expect(problems(relabelled)).toContainEqual([MISSING, "/facts/1"]);
  });

  it("an end without a message, a step that is not an object: judged, not thrown on", () => {
    const l = loop();
    const silent = edit(l, "passageEnd", (b) => ({ ...b, message: undefined }), 0);
    expect(problems(silent)).toEqual([[MISMATCH, "/facts/2"]]);
    const later = {
      ...silent,
      facts: [
        ...l.facts.slice(0, 2),
        {
          ...l.facts[1],
          sequence: 3,
          step: { ...l.facts[1]?.step, "passage/ref": "passage:p2" },
        } as Fact,
      ],
    };
    expect(problems(later).filter(([, p]) => p === "/facts/1")).toEqual([]);
    const odd = edit(drop(l, "stepStarted"), "execution", (b) => ({ ...b, steps: [null] }));
    expect(problems(odd)).toEqual([[MISSING, C]]);
    expect(problems(add(odd, "stepStarted", { "proposal/ref": PROPOSAL, "step/id": "?" }))).toEqual(
      [],
    );
  });

  it("an execution naming no review is missing it, even beside a review that names no ref", () => {
    const l = loop();
    const unnamed = edit(l, "execution", (b) => ({ ...b, "review/ref": undefined }));
    const { "review/ref": _r, ...review } = body(l, "review");
    expect(problems(add(unnamed, "review", review))).toEqual([[MISSING, C]]);
  });

  it("an execution of another outcome disagrees with the fact (and its report with it); one refusal code in both agrees", () => {
    const l = loop();
    expect(problems(edit(l, "execution", (b) => ({ ...b, outcome: "verified" })))).toEqual([
      [MISMATCH, C],
      [MISMATCH, C],
    ]);
    const refused = {
      ...l,
      facts: l.facts.map((f, i) =>
        i === 5 ? ({ ...f, step: { ...f.step, "refusal/code": "a/b" } } as Fact) : f,
      ),
    };
    expect(problems(refused)).toEqual([[MISMATCH, C]]);
    expect(problems(edit(refused, "execution", (b) => ({ ...b, "refusal/code": "a/b" })))).toEqual(
      [],
    );
  });

  it("a changeset whose execution ref is not text names no execution", () => {
    const v = loop("verified");
    expect(problems(edit(v, "changeset", (b) => ({ ...b, "execution/ref": 5 })))).toEqual([
      [MISSING, C],
    ]);
  });
});
