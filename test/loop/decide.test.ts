// Every row of the table of docs/spec/loop.md, its check order, replays, stops and refusals.
import { describe, expect, it } from "vitest";
import { decide } from "../../src/core/loop/decide.js";
import { fold, initialState } from "../../src/core/loop/state.js";
import type { LoopCommand } from "../../src/core/loop/types.js";
import {
  admit,
  at,
  BINDING,
  cancel,
  conclude,
  cycle,
  execution,
  given,
  history,
  OPERATOR,
  open,
  passage,
  proposal,
  QUERY,
  renew,
} from "./gwt.js";

const LIMITS = {
  "max/passages": 6,
  "max/solver-passages": 6,
  "max/reviewer-passages": 6,
  "max/cycles": 4,
  "max/experiments": 2,
  "max/wall-time-ms": 3_600_000,
};
const DEADLINE_S = 3600;
const opened = () => history(open());
const withRun = () => history(open(), cycle(1), admit(1));

describe("opened", () => {
  it("opens a loop with no fact, with the effective limits and deadline = now + wall time", () => {
    const fact = given([]).when(open(), at(0)).then({
      kind: "opened",
      "binding/ref": BINDING,
      limits: LIMITS,
      deadline: "2026-12-01T11:00:00Z",
      "operator/binding-ref": OPERATOR,
    });
    expect(fact).toEqual({
      "query/id": QUERY,
      sequence: 1,
      "recorded-at": "2026-12-01T10:00:00Z",
      step: fact.step,
    });
  });
  it("replays the same opening (even later, even when stopped)", () => {
    given(opened()).when(open(), at(5)).thenReplays(1);
    given(history(open(), cancel())).when(open(), at(5)).thenReplays(1);
  });
  it("refuses another binding, operator, query or limits for the same loop: loop/key-conflict", () => {
    const facts = opened();
    const o = open() as Extract<LoopCommand, { op: "open" }>;
    given(facts)
      .when({ ...o, binding: "operator-task-local-binding:other" }, at(1))
      .thenRefuses("loop/key-conflict");
    given(facts)
      .when({ ...o, operator: "node-operator-binding:bob" }, at(1))
      .thenRefuses("loop/key-conflict");
    given(facts)
      .when({ ...o, query: "query:other" }, at(1))
      .thenRefuses("loop/key-conflict");
    given(facts)
      .when(open([{ "max/passages": 5, "max/experiments": 2, "max/wall-time-ms": 1000 }]), at(1))
      .thenRefuses("loop/key-conflict");
  });
  it("refuses a binding above the task pack: local-binding/outside-package-ceiling", () => {
    given([])
      .when(
        open([
          { "max/passages": 4, "max/experiments": 1, "max/wall-time-ms": 10 },
          { "max/passages": 5 },
        ]),
        at(0),
      )
      .thenRefuses("local-binding/outside-package-ceiling");
  });
  it("refuses when passages, experiments or wall time is stated nowhere: local-binding/incomplete", () => {
    for (const missing of ["max/passages", "max/experiments", "max/wall-time-ms"] as const) {
      const layer: Record<string, number> = {
        "max/passages": 4,
        "max/experiments": 1,
        "max/wall-time-ms": 10,
      };
      delete layer[missing];
      given([])
        .when(open([layer]), at(0))
        .thenRefuses("local-binding/incomplete");
    }
  });
});

describe("passage-charged", () => {
  it("charges an implementer passage: passages and solver +1", () => {
    const facts = opened();
    const fact = given(facts).when(passage(1), at(1)).then({
      kind: "passage-charged",
      role: "implementer",
      "agent/id": "agent:a1",
      "passage/ref": "passage:p1",
    });
    const s = fold([...facts, fact]).spent;
    expect(s).toEqual({ passages: 1, solverPassages: 1, reviewerPassages: 0, cycles: 0, runs: 0 });
  });
  it("a reviewer spends passages and reviewer; critic and summarizer only passages", () => {
    const facts = history(
      open(),
      passage(1, "reviewer"),
      passage(2, "adversarial-critic"),
      passage(3, "summarizer"),
    );
    expect(fold(facts).spent).toEqual({
      passages: 3,
      solverPassages: 0,
      reviewerPassages: 1,
      cycles: 0,
      runs: 0,
    });
  });
  it("replays the same (agent, passage) and spends nothing", () => {
    const facts = history(open(), passage(1));
    given(facts).when(passage(1), at(9)).thenReplays(2);
  });
  it("replays a charged passage even on a stopped loop or past the deadline", () => {
    given(history(open(), passage(1), cancel()))
      .when(passage(1), at(9))
      .thenReplays(2);
    given(history(open(), passage(1)))
      .when(passage(1), at(DEADLINE_S + 1))
      .thenReplays(2);
  });
  it("the same passage of another agent is another charge", () => {
    given(history(open(), passage(1)))
      .when(passage(1, "implementer", "agent:a2"), at(5))
      .then({
        kind: "passage-charged",
        role: "implementer",
        "agent/id": "agent:a2",
        "passage/ref": "passage:p1",
      });
  });
  it("refuses the same passage for another role: loop/key-conflict", () => {
    given(history(open(), passage(1)))
      .when(passage(1, "reviewer"), at(5))
      .thenRefuses("loop/key-conflict");
  });
  it("refuses before opening, when stopped, past the deadline — in that order", () => {
    given([]).when(passage(1), at(0)).thenRefuses("loop/not-opened");
    given(history(open(), cancel()))
      .when(passage(1), at(DEADLINE_S + 5))
      .thenRefuses("loop/not-open");
    given(opened()).when(passage(1), at(DEADLINE_S)).thenRefuses("loop/deadline-passed");
  });
  it("the deadline is checked before the budget", () => {
    const p = [{ "max/passages": 1, "max/experiments": 1, "max/wall-time-ms": 60_000 }];
    given(history(open(p), passage(1)))
      .when(passage(2), at(60))
      .thenRefuses("loop/deadline-passed");
    given(history(open(p), passage(1)))
      .when(passage(2), at(59))
      .thenRefuses("loop/budget-exhausted", "max/passages");
  });
  it("refuses past max/passages, max/solver-passages, max/reviewer-passages", () => {
    const p = [
      {
        "max/passages": 3,
        "max/solver-passages": 1,
        "max/reviewer-passages": 1,
        "max/experiments": 1,
        "max/wall-time-ms": 60_000,
      },
    ];
    const facts = history(open(p), passage(1), passage(2, "reviewer"));
    given(facts)
      .when(passage(3), at(5))
      .thenRefuses("loop/budget-exhausted", "max/solver-passages");
    given(facts)
      .when(passage(3, "reviewer"), at(5))
      .thenRefuses("loop/budget-exhausted", "max/reviewer-passages");
    const full = history(open(p), passage(1), passage(2, "reviewer"), passage(3, "summarizer"));
    given(full)
      .when(passage(4, "adversarial-critic"), at(5))
      .thenRefuses("loop/budget-exhausted", "max/passages");
    given(full)
      .when(passage(4, "implementer"), at(5))
      .thenRefuses("loop/budget-exhausted", "max/passages");
  });
});

describe("cycle-opened", () => {
  it("opens a cycle: cycles +1", () => {
    const facts = opened();
    const f = given(facts)
      .when(cycle(1), at(1))
      .then({ kind: "cycle-opened", "proposal/ref": proposal(1) });
    expect(fold([...facts, f]).spent.cycles).toBe(1);
  });
  it("replays the same proposal, even when stopped", () => {
    given(history(open(), cycle(1)))
      .when(cycle(1), at(3))
      .thenReplays(2);
    given(history(open(), cycle(1), cancel()))
      .when(cycle(1), at(3))
      .thenReplays(2);
  });
  it("refuses not-opened, not-open, deadline-passed, and past max/cycles", () => {
    given([]).when(cycle(1), at(0)).thenRefuses("loop/not-opened");
    given(history(open(), cancel())).when(cycle(1), at(2)).thenRefuses("loop/not-open");
    given(opened())
      .when(cycle(1), at(DEADLINE_S + 1))
      .thenRefuses("loop/deadline-passed");
    const full = history(open(), cycle(1), cycle(2), cycle(3), cycle(4));
    given(full).when(cycle(5), at(9)).thenRefuses("loop/budget-exhausted", "max/cycles");
  });
});

describe("run-admitted", () => {
  it("admits a run of a proposal with a cycle: runs +1", () => {
    const facts = history(open(), cycle(1));
    const f = given(facts)
      .when(admit(1), at(2))
      .then({ kind: "run-admitted", "proposal/ref": proposal(1) });
    expect(fold([...facts, f]).spent.runs).toBe(1);
  });
  it("refuses a proposal without a cycle: loop/cycle-missing", () => {
    given(opened()).when(admit(1), at(2)).thenRefuses("loop/cycle-missing");
  });
  it("refuses past max/experiments", () => {
    const facts = history(open(), cycle(1), cycle(2), cycle(3), admit(1), admit(2));
    given(facts).when(admit(3), at(9)).thenRefuses("loop/budget-exhausted", "max/experiments");
  });
  it("replays an admitted run while open", () => {
    given(withRun()).when(admit(1), at(5)).thenReplays(3);
  });
  it("a replayed admission is still refused when stopped or past the deadline", () => {
    given(history(open(), cycle(1), admit(1), cancel()))
      .when(admit(1), at(5))
      .thenRefuses("loop/not-open");
    given(withRun()).when(admit(1), at(DEADLINE_S)).thenRefuses("loop/deadline-passed");
  });
  it("refuses before opening", () => {
    given([]).when(admit(1), at(0)).thenRefuses("loop/not-opened");
  });
});

describe("concluded", () => {
  it("concludes an admitted run", () => {
    given(withRun())
      .when(conclude(1, "verification-failed"), at(4))
      .then({
        kind: "concluded",
        "execution/ref": execution(1),
        "proposal/ref": proposal(1),
        outcome: "verification-failed",
      });
  });
  it("concludes in any state: stopped or past the deadline", () => {
    given(history(open(), cycle(1), admit(1), cancel()))
      .when(conclude(1, "verified"), at(5))
      .then({
        kind: "concluded",
        "execution/ref": execution(1),
        "proposal/ref": proposal(1),
        outcome: "verified",
      });
    given(withRun())
      .when(conclude(1, "unknown"), at(DEADLINE_S + 100))
      .then({
        kind: "concluded",
        "execution/ref": execution(1),
        "proposal/ref": proposal(1),
        outcome: "unknown",
      });
  });
  it("refuses a run that was not admitted: loop/run-missing", () => {
    given(history(open(), cycle(1)))
      .when(conclude(1, "verified"), at(4))
      .thenRefuses("loop/run-missing");
  });
  it("replays the same conclusion; refuses a different one: loop/already-concluded", () => {
    const facts = history(open(), cycle(1), admit(1), conclude(1, "verification-failed"));
    given(facts).when(conclude(1, "verification-failed"), at(9)).thenReplays(4);
    given(facts).when(conclude(1, "verified"), at(9)).thenRefuses("loop/already-concluded");
    given(facts)
      .when(conclude(1, "verification-failed", undefined, 2), at(9))
      .thenRefuses("loop/already-concluded");
    given(facts)
      .when(conclude(1, "verification-failed", "hil/denied"), at(9))
      .thenRefuses("loop/already-concluded");
  });
  it("refuses before opening", () => {
    given([]).when(conclude(1, "verified"), at(0)).thenRefuses("loop/not-opened");
  });
});

describe("stops", () => {
  const stopOf = (...extra: LoopCommand[]) =>
    fold(history(open(), cycle(1), admit(1), ...extra)).stop;
  it("verified → succeeded", () => {
    expect(stopOf(conclude(1, "verified"))).toEqual({
      reason: "succeeded",
      executionRef: execution(1),
      sequence: 4,
    });
  });
  it("unknown → unknown", () => {
    expect(stopOf(conclude(1, "unknown"))).toEqual({
      reason: "unknown",
      executionRef: execution(1),
      sequence: 4,
    });
  });
  it.each([
    "environment/not-contained",
    "environment/runtime-egress-denied",
    "environment/impact-class-exceeded",
    "verifier/mutation-not-admitted",
    "workbench/patch-outside-policy",
  ])("refused with %s → safety-refused", (code) => {
    expect(stopOf(conclude(1, "refused", code))).toEqual({
      reason: "safety-refused",
      executionRef: execution(1),
      refusalCode: code,
      sequence: 4,
    });
  });
  it("cancelled → cancelled with the operator", () => {
    expect(stopOf(cancel())).toEqual({ reason: "cancelled", operatorRef: OPERATOR, sequence: 4 });
  });
  it.each([
    ["verification-failed", undefined],
    ["cancelled", undefined],
    ["refused", "hil/denied"],
    ["refused", "hil/expired"],
    ["refused", "verifier/timeout"],
    ["refused", undefined],
  ] as const)("%s %s leaves the loop going", (outcome, code) => {
    const facts = history(open(), cycle(1), admit(1), conclude(1, outcome, code));
    expect(fold(facts).stop).toBeUndefined();
    given(facts).when(passage(1), at(10)).then({
      kind: "passage-charged",
      role: "implementer",
      "agent/id": "agent:a1",
      "passage/ref": "passage:p1",
    });
  });
  it("the first stop wins: later conclusions never change it", () => {
    const facts = history(
      open(),
      cycle(1),
      cycle(2),
      admit(1),
      admit(2),
      conclude(1, "unknown"),
      conclude(2, "verified"),
    );
    expect(fold(facts).stop).toEqual({
      reason: "unknown",
      executionRef: execution(1),
      sequence: 6,
    });
  });
  it("cancel on a stopped loop replays the stopping fact and changes nothing", () => {
    const facts = history(open(), cycle(1), admit(1), conclude(1, "verified"));
    given(facts).when(cancel(), at(9)).thenReplays(4);
    given(history(open(), cancel())).when(cancel(), at(9)).thenReplays(2);
  });
});

describe("renewed", () => {
  const later = (s: number) => new Date(Date.parse("2026-12-01T10:00:00Z") + s * 1000);
  it("renews to a later deadline within max/wall-time-ms of now", () => {
    const facts = opened();
    const f = given(facts)
      .when(renew(later(4000)), at(1000))
      .then({
        kind: "renewed",
        deadline: "2026-12-01T11:06:40Z",
        "operator/binding-ref": OPERATOR,
      });
    const s = fold([...facts, f]);
    expect(s.deadline).toBe("2026-12-01T11:06:40Z");
    expect(s.renewals).toBe(1);
  });
  it("renews a loop whose deadline has passed", () => {
    given(opened())
      .when(renew(later(DEADLINE_S + 100)), at(DEADLINE_S + 10))
      .then({
        kind: "renewed",
        deadline: "2026-12-01T11:01:40Z",
        "operator/binding-ref": OPERATOR,
      });
  });
  it("renewing to the current deadline is a replay", () => {
    given(opened())
      .when(renew(later(DEADLINE_S)), at(5))
      .thenReplays(1);
    const facts = history(open(), renew(later(3601)));
    given(facts)
      .when(renew(later(3601)), at(9))
      .thenReplays(2);
  });
  it("refuses an earlier, past, or too distant deadline: loop/renewal-invalid", () => {
    given(opened())
      .when(renew(later(DEADLINE_S - 1)), at(5))
      .thenRefuses("loop/renewal-invalid");
    given(opened())
      .when(renew(later(DEADLINE_S + 10)), at(DEADLINE_S + 20))
      .thenRefuses("loop/renewal-invalid");
    given(opened())
      .when(renew(later(DEADLINE_S + 10)), at(DEADLINE_S + 10))
      .thenRefuses("loop/renewal-invalid");
    given(opened())
      .when(renew(later(3600 + 11)), at(10))
      .thenRefuses("loop/renewal-invalid");
    given(opened())
      .when({ op: "renew", deadline: "tomorrow" }, at(10))
      .thenRefuses("loop/renewal-invalid");
  });
  it("accepts a deadline exactly max/wall-time-ms after now", () => {
    given(opened())
      .when(renew(later(3610)), at(10))
      .then({
        kind: "renewed",
        deadline: "2026-12-01T11:00:10Z",
        "operator/binding-ref": OPERATOR,
      });
  });
  it("refuses the 65th renewal: loop/renewals-exhausted", () => {
    const cmds: LoopCommand[] = [open()];
    for (let i = 1; i <= 64; i++) cmds.push(renew(later(DEADLINE_S + i)));
    const facts = history(...cmds);
    expect(fold(facts).renewals).toBe(64);
    given(facts)
      .when(renew(later(DEADLINE_S + 100)), at(70))
      .thenRefuses("loop/renewals-exhausted");
  });
  it("refuses a stopped loop: loop/not-open", () => {
    given(history(open(), cancel()))
      .when(renew(later(4000)), at(5))
      .thenRefuses("loop/not-open");
  });
  it("checks not-opened, then not-operator, then its own conditions", () => {
    given([])
      .when(renew(later(4000)), at(5))
      .thenRefuses("loop/not-opened");
    given(history(open(), cancel()))
      .when(renew(later(4000), "node-operator-binding:bob"), at(5))
      .thenRefuses("loop/not-operator");
    given(opened())
      .when(renew(later(4000), OPERATOR), at(1000))
      .then({
        kind: "renewed",
        deadline: "2026-12-01T11:06:40Z",
        "operator/binding-ref": OPERATOR,
      });
  });
});

describe("cancelled", () => {
  it("cancels an open loop, and a loop past its deadline", () => {
    given(opened())
      .when(cancel(), at(1))
      .then({ kind: "cancelled", "operator/binding-ref": OPERATOR });
    given(opened())
      .when(cancel(OPERATOR), at(DEADLINE_S + 1))
      .then({ kind: "cancelled", "operator/binding-ref": OPERATOR });
  });
  it("checks not-opened, then not-operator", () => {
    given([]).when(cancel(), at(1)).thenRefuses("loop/not-opened");
    given(opened())
      .when(cancel("node-operator-binding:bob"), at(1))
      .thenRefuses("loop/not-operator");
    given(history(open(), cancel()))
      .when(cancel("node-operator-binding:bob"), at(3))
      .thenRefuses("loop/not-operator");
  });
});

describe("commands the seed schema cannot carry", () => {
  it.each<LoopCommand>([
    { op: "open-cycle", proposal: "corpus-experiment:sha256:short" },
    { op: "admit-run", proposal: "proposal:1" },
    { op: "charge-passage", role: "implementer", agent: "a1", passage: "passage:p1" },
    { op: "charge-passage", role: "implementer", agent: "agent:a1", passage: "p 1" },
    { op: "conclude", proposal: proposal(1), execution: "execution:1", outcome: "verified" },
    {
      op: "conclude",
      proposal: proposal(1),
      execution: execution(1),
      outcome: "refused",
      refusal: "loop/made-up",
    },
    { op: "cancel", operator: "alice" },
  ])("refuses %j with loop/command-invalid", (command) => {
    given(withRun()).when(command, at(5)).thenRefuses("loop/command-invalid");
  });
  it("refuses an open with a malformed query, binding or operator", () => {
    const o = open() as Extract<LoopCommand, { op: "open" }>;
    given([])
      .when({ ...o, query: "demo" }, at(0))
      .thenRefuses("loop/command-invalid");
    given([])
      .when({ ...o, binding: "binding:x" }, at(0))
      .thenRefuses("loop/command-invalid");
    given([])
      .when({ ...o, operator: "alice" }, at(0))
      .thenRefuses("loop/command-invalid");
  });
  it("refuses an invalid clock", () => {
    expect(decide(initialState(), open(), new Date(Number.NaN)).result).toBe("refused");
  });
});
