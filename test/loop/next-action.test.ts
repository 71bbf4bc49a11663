// What the driver does next, read from a loop's ledger view alone (src/core/loop/next-action.ts):
// given a view (passages, cycles, operator acts) when the pack's policies are these, then this
// action — every kind, and each way back to the implementer (a rejection, a denied admission, a
// critic's objection, a concluded cycle, an answered question).
import { describe, expect, it } from "vitest";
import {
  ADMISSION_STEP,
  approvalTarget,
  type CycleView,
  critique,
  type LedgerView,
  type NextAction,
  nextAction,
  operatorDecision,
  type PassageView,
  type Policies,
  type ReviewBody,
  unfinishedPassage,
} from "../../src/core/loop/next-action.js";
import type { Role, Step } from "../../src/core/loop/types.js";
import type { OperatorAct } from "../../src/core/ports/ledger-store.js";
import type { PassageEndBody, RunReportBody } from "../../src/core/records/run-bodies.js";
import type { TypedMessage } from "../../src/core/turn/payloads.js";
import { proposal } from "./gwt.js";

const QUERY = "query:demo-1";
const P1 = proposal(1);
const AUTO: Policies = { admission: "auto", critic: false };
const OPERATOR: Policies = { admission: "operator", critic: false };
const CRITIC: Policies = { admission: "auto", critic: true };

/** A passage of `role`, ended with `message` (or not ended when `message` is null). */
function passage(
  n: number,
  role: Role,
  message: TypedMessage | null,
  subject?: string,
): PassageView {
  const ref = `passage:p${n}`;
  if (message === null) return { role, agentId: "agent:a1", ref };
  const end: PassageEndBody = {
    "query/id": QUERY,
    "passage/ref": ref,
    role,
    "agent/id": "agent:a1",
    "evidence/digest": "sha256:e",
    ...(subject === undefined ? {} : { subject }),
    message,
    "model/calls": 1,
    "ended-at": "2026-12-01T10:00:00Z",
  };
  return { role, agentId: "agent:a1", ref, end };
}

const review = (decision: "accept" | "reject" | "request-regeneration"): ReviewBody =>
  ({ "proposal/ref": P1, verdict: { decision, findings: [] } }) as unknown as ReviewBody;

const question: TypedMessage = {
  type: "Question",
  payload: { question: "which file?" },
} as TypedMessage;
const deadEnd: TypedMessage = { type: "DeadEnd", payload: { reason: "stuck" } } as TypedMessage;
const finding = (severity: string): TypedMessage =>
  ({ type: "Finding", payload: { severity, message: "x" } }) as unknown as TypedMessage;

/** The cycle of P1: opened, with these reviews and what happened since. */
function cycleOf(over: Partial<CycleView> = {}): CycleView {
  return { proposalRef: P1, reviews: [], admitted: false, stepsStarted: [], ...over };
}

const act = (kind: OperatorAct["kind"], target: string): OperatorAct =>
  ({ kind, target, query: QUERY, operator: "node-operator-binding:alice" }) as OperatorAct;

const admission = approvalTarget(P1, ADMISSION_STEP);
const started = {
  "query/id": QUERY,
  "proposal/ref": P1,
  "step/id": "s1",
  index: 0,
  "started-at": "2026-12-01T10:00:00Z",
};
const report = { "proposal/ref": P1 } as unknown as RunReportBody;
const concluded = { kind: "concluded", "proposal/ref": P1 } as Extract<Step, { kind: "concluded" }>;

interface ViewParts {
  readonly passages?: readonly PassageView[];
  readonly cycles?: readonly CycleView[];
  readonly acts?: readonly OperatorAct[];
}

function given(parts: ViewParts) {
  const view: LedgerView = {
    passages: parts.passages ?? [],
    nested: [],
    cycles: parts.cycles ?? [],
    acts: parts.acts ?? [],
    cancelled: false,
  };
  return {
    view,
    when(policies: Policies) {
      const action = nextAction(view, policies);
      return {
        action,
        // biome-ignore lint/suspicious/noThenProperty: the Given/When/Then vocabulary; never awaited.
        then(kind: NextAction["kind"], cycle?: CycleView): NextAction {
          expect(action.kind).toBe(kind);
          if (cycle !== undefined) expect(action).toEqual({ kind, cycle });
          return action;
        },
      };
    },
  };
}

const implementer = (n: number, message: TypedMessage | null = null) =>
  passage(n, "implementer", message);

describe("nextAction", () => {
  it("implement: a fresh loop, with no passage and no cycle", () => {
    given({}).when(AUTO).then("implement");
  });

  it("review: a proposal with no review yet", () => {
    const c = cycleOf();
    given({ passages: [implementer(1)], cycles: [c] })
      .when(AUTO)
      .then("review", c);
  });

  it("implement: the last review rejected the proposal, or asked for another", () => {
    for (const d of ["reject", "request-regeneration"] as const)
      given({ cycles: [cycleOf({ reviews: [review(d)] })] })
        .when(AUTO)
        .then("implement");
  });

  it("the last review decides: an accepted proposal after a rejection is admitted", () => {
    const c = cycleOf({ reviews: [review("reject"), review("accept")] });
    given({ cycles: [c] })
      .when(AUTO)
      .then("admit", c);
    const back = cycleOf({ reviews: [review("accept"), review("reject")] });
    given({ cycles: [back] })
      .when(AUTO)
      .then("implement");
  });

  it("admit: an accepted proposal when the pack admits by itself", () => {
    const c = cycleOf({ reviews: [review("accept")] });
    given({ cycles: [c] })
      .when(AUTO)
      .then("admit", c);
  });

  it("await-admission: an accepted proposal the operator has not yet answered", () => {
    const c = cycleOf({ reviews: [review("accept")] });
    given({ cycles: [c] })
      .when(OPERATOR)
      .then("await-admission", c);
    // An act on another step or another proposal does not answer it.
    given({ cycles: [c], acts: [act("approve", approvalTarget(P1, "s1"))] })
      .when(OPERATOR)
      .then("await-admission", c);
  });

  it("admit: the operator approved the admission", () => {
    const c = cycleOf({ reviews: [review("accept")] });
    given({ cycles: [c], acts: [act("approve", admission)] })
      .when(OPERATOR)
      .then("admit", c);
  });

  it("implement: the operator denied the admission (the proposal goes back like a rejection)", () => {
    const c = cycleOf({ reviews: [review("accept")] });
    given({ cycles: [c], acts: [act("deny", admission)] })
      .when(OPERATOR)
      .then("implement");
    // The first decision counts: a later approval does not undo a denial.
    given({ cycles: [c], acts: [act("deny", admission), act("approve", admission)] })
      .when(OPERATOR)
      .then("implement");
  });

  it("criticize: an accepted proposal the pack's critic has not yet judged", () => {
    const c = cycleOf({ reviews: [review("accept")] });
    given({ cycles: [c] })
      .when(CRITIC)
      .then("criticize", c);
    // A critique of another proposal does not count.
    given({
      passages: [passage(2, "adversarial-critic", finding("low"), proposal(2))],
      cycles: [c],
    })
      .when(CRITIC)
      .then("criticize", c);
  });

  it("admit: the critic found nothing high (or its passage failed)", () => {
    const c = cycleOf({ reviews: [review("accept")] });
    for (const severity of ["info", "low", "medium"])
      given({ passages: [passage(2, "adversarial-critic", finding(severity), P1)], cycles: [c] })
        .when(CRITIC)
        .then("admit", c);
    // A critic passage that failed ends with no message: no objection.
    const critic = passage(2, "adversarial-critic", finding("high"), P1);
    const { message: _message, ...end } = critic.end as PassageEndBody;
    const failed = { ...end, failure: { code: "model/failed", message: "x" } };
    given({ passages: [{ ...critic, end: failed }], cycles: [c] })
      .when(CRITIC)
      .then("admit", c);
  });

  it("implement: the critic objects with a high or critical finding, or a DeadEnd", () => {
    const c = cycleOf({ reviews: [review("accept")] });
    for (const m of [finding("high"), finding("critical"), deadEnd])
      given({ passages: [passage(2, "adversarial-critic", m, P1)], cycles: [c] })
        .when(CRITIC)
        .then("implement");
    // Without a critic in the pack, a critic's passage is not heard.
    given({ passages: [passage(2, "adversarial-critic", finding("high"), P1)], cycles: [c] })
      .when(AUTO)
      .then("admit", c);
  });

  it("run: an admitted proposal whose run has not started a step", () => {
    const c = cycleOf({ reviews: [review("accept")], admitted: true });
    given({ cycles: [c] })
      .when(AUTO)
      .then("run", c);
  });

  it("abandon-run: an admitted run that started steps and left no outcome (a crash mid-run)", () => {
    const c = cycleOf({ reviews: [review("accept")], admitted: true, stepsStarted: [started] });
    given({ cycles: [c] })
      .when(AUTO)
      .then("abandon-run", c);
  });

  it("finish-run: an admitted run with its outcome recorded, not yet concluded", () => {
    const c = cycleOf({
      reviews: [review("accept")],
      admitted: true,
      stepsStarted: [started],
      execution: { ref: "corpus-task-pack-execution:sha256:x", body: report },
    });
    given({ cycles: [c] })
      .when(AUTO)
      .then("finish-run", c);
  });

  it("implement: the last cycle concluded (an earlier open one is not looked at)", () => {
    const c = cycleOf({ reviews: [review("accept")], admitted: true, concluded });
    given({ cycles: [cycleOf({ proposalRef: proposal(2) }), c] })
      .when(AUTO)
      .then("implement");
  });

  it("await-answer: the implementer's last ended passage asked a Question or reached a DeadEnd", () => {
    for (const m of [question, deadEnd]) {
      const asked = implementer(1, m);
      const action = given({ passages: [asked] })
        .when(AUTO)
        .then("await-answer");
      expect(action).toEqual({ kind: "await-answer", question: asked });
    }
    // A passage of the implementer still running does not hide the one that asked.
    const asked = implementer(1, question);
    expect(nextAction(given({ passages: [asked, implementer(2)] }).view, AUTO)).toEqual({
      kind: "await-answer",
      question: asked,
    });
  });

  it("implement: the question was answered, or the last ended passage asked nothing", () => {
    const asked = implementer(1, question);
    given({ passages: [asked], acts: [act("answer", asked.ref)] })
      .when(AUTO)
      .then("implement");
    given({ passages: [asked, implementer(2, finding("low"))] })
      .when(AUTO)
      .then("implement");
    // An answer to another passage does not answer this one.
    given({ passages: [asked], acts: [act("answer", "passage:p9")] })
      .when(AUTO)
      .then("await-answer");
  });

  it("an open cycle comes before a question: a review waits on nothing", () => {
    const c = cycleOf();
    given({ passages: [implementer(1, question)], cycles: [c] })
      .when(AUTO)
      .then("review", c);
  });
});

describe("the readings beside it", () => {
  it("critique: the ended critic passage on a proposal", () => {
    const c = cycleOf();
    const critic = passage(2, "adversarial-critic", finding("low"), P1);
    expect(critique(given({ passages: [critic] }).view, c)).toEqual(critic.end);
    expect(critique(given({ passages: [implementer(1, question)] }).view, c)).toBeUndefined();
  });

  it("operatorDecision: the first approve or deny for a target; answers and others ignored", () => {
    expect(operatorDecision([], admission)).toBeUndefined();
    expect(operatorDecision([act("answer", admission)], admission)).toBeUndefined();
    expect(operatorDecision([act("approve", "other"), act("deny", admission)], admission)).toBe(
      "deny",
    );
  });

  it("unfinishedPassage: a role's passage charged but not ended", () => {
    const open = implementer(2);
    const view = given({ passages: [implementer(1, question), open] }).view;
    expect(unfinishedPassage(view, "implementer")).toEqual(open);
    expect(unfinishedPassage(view, "reviewer")).toBeUndefined();
  });

  it("approvalTarget: the proposal and the step, separated by a space", () => {
    expect(approvalTarget(P1, ADMISSION_STEP)).toBe(`${P1} admission`);
  });
});
