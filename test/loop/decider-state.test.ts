// The fold (src/core/loop/state.ts) and the projection (src/core/loop/project.ts): what each fact
// does to the state, the state's name at the deadline exactly, the first stop, renewals that never
// move the deadline back, and the loop document of each stop.
import { describe, expect, it } from "vitest";
import { LOOP_SCHEMA_NAME, project, spentToWire, stopToWire } from "../../src/core/loop/project.js";
import {
  evolve,
  fold,
  initialState,
  SAFETY_REFUSALS,
  stateNameAt,
} from "../../src/core/loop/state.js";
import type { Fact, Step } from "../../src/core/loop/types.js";
import {
  admit,
  at,
  BINDING,
  cancel,
  conclude,
  cycle,
  execution,
  history,
  OPERATOR,
  open,
  passage,
  proposal,
  QUERY,
  renew,
  T0,
} from "./gwt.js";

const DEADLINE_MS = T0 + 3_600_000;
const fact = (sequence: number, step: Step): Fact => ({
  "query/id": QUERY,
  sequence,
  "recorded-at": "2026-12-01T10:00:00Z",
  step,
});

describe("initialState", () => {
  it("is a loop with no fact: nothing opened, spent or stopped", () => {
    const s = initialState();
    expect(s.opening).toBeUndefined();
    expect(s.deadline).toBeUndefined();
    expect(s.deadlineMs).toBeNaN();
    expect(s.deadlineSequence).toBe(0);
    expect(s.spent).toEqual({
      passages: 0,
      solverPassages: 0,
      reviewerPassages: 0,
      cycles: 0,
      runs: 0,
    });
    expect(s.renewals).toBe(0);
    expect(s.stop).toBeUndefined();
    expect(s.lastSequence).toBe(0);
    expect(s.facts).toEqual([]);
    expect(s.byKey.size).toBe(0);
  });
});

describe("fold", () => {
  it("the opening sets the loop's refs, limits, deadline and the fact that set it", () => {
    const facts = history(open());
    const s = fold(facts);
    expect(s.opening).toEqual({
      query: QUERY,
      bindingRef: BINDING,
      operatorRef: OPERATOR,
      limits: {
        "max/passages": 6,
        "max/solver-passages": 6,
        "max/reviewer-passages": 6,
        "max/cycles": 4,
        "max/experiments": 2,
        "max/wall-time-ms": 3_600_000,
      },
    });
    expect(s.deadline).toBe("2026-12-01T11:00:00Z");
    expect(s.deadlineMs).toBe(DEADLINE_MS);
    expect(s.deadlineSequence).toBe(1);
    expect(s.lastSequence).toBe(1);
    expect([...s.byKey.keys()]).toEqual(["opened"]);
  });
  it("an opening with an unreadable deadline leaves the deadline instant NaN", () => {
    const facts = history(open());
    const step = facts[0]?.step;
    if (step?.kind !== "opened") throw new Error("no opening");
    const s = fold([fact(1, { ...step, deadline: "never" })]);
    expect(s.deadline).toBe("never");
    expect(s.deadlineMs).toBeNaN();
  });
  it("counts each role's passages, cycles and runs, and keys each fact", () => {
    const facts = history(
      open(),
      passage(1),
      passage(2, "reviewer"),
      passage(3, "summarizer"),
      passage(4, "adversarial-critic"),
      passage(5),
      cycle(1),
      cycle(2),
      admit(1),
    );
    const s = fold(facts);
    expect(s.spent).toEqual({
      passages: 5,
      solverPassages: 2,
      reviewerPassages: 1,
      cycles: 2,
      runs: 1,
    });
    expect(s.lastSequence).toBe(9);
    expect(s.facts).toEqual(facts);
    expect(s.byKey.get(`run ${proposal(1)}`)).toEqual(facts[8]);
    expect(s.byKey.get("passage agent:a1 passage:p5")).toEqual(facts[5]);
  });
  it("a renewal moves the deadline later, counts, and never moves it back", () => {
    const facts = history(open(), renew(at(3601)));
    const s = fold(facts);
    expect(s.renewals).toBe(1);
    expect(s.deadline).toBe("2026-12-01T11:00:01Z");
    expect(s.deadlineMs).toBe(T0 + 3_601_000);
    expect(s.deadlineSequence).toBe(2);
    // Stored facts are trusted by the fold: an earlier, equal or unreadable deadline is counted
    // as a renewal but leaves the deadline as it was.
    for (const deadline of ["2026-12-01T10:30:00Z", "2026-12-01T11:00:01Z", "never"]) {
      const t = fold([
        ...facts,
        fact(3, { kind: "renewed", deadline, "operator/binding-ref": OPERATOR }),
      ]);
      expect(t.renewals, deadline).toBe(2);
      expect(t.deadline, deadline).toBe("2026-12-01T11:00:01Z");
      expect(t.deadlineMs, deadline).toBe(T0 + 3_601_000);
      expect(t.deadlineSequence, deadline).toBe(2);
    }
  });
  it("a renewal one millisecond later moves the deadline", () => {
    const s = fold([
      ...history(open()),
      fact(2, {
        kind: "renewed",
        deadline: "2026-12-01T11:00:00.001Z",
        "operator/binding-ref": OPERATOR,
      }),
    ]);
    expect(s.deadlineMs).toBe(DEADLINE_MS + 1);
    expect(s.deadlineSequence).toBe(2);
  });
  it("only a safety refusal stops the loop among refused conclusions", () => {
    for (const code of SAFETY_REFUSALS) {
      expect(fold(history(open(), cycle(1), admit(1), conclude(1, "refused", code))).stop).toEqual({
        reason: "safety-refused",
        executionRef: execution(1),
        refusalCode: code,
        sequence: 4,
      });
    }
    expect(
      fold(history(open(), cycle(1), admit(1), conclude(1, "refused", "hil/denied"))).stop,
    ).toBeUndefined();
    expect(
      fold(history(open(), cycle(1), admit(1), conclude(1, "cancelled"))).stop,
    ).toBeUndefined();
  });
  it("a safety refusal code stops the loop only on a refused outcome", () => {
    for (const outcome of ["verification-failed", "cancelled"] as const) {
      const facts = history(
        open(),
        cycle(1),
        admit(1),
        conclude(1, outcome, "environment/not-contained"),
      );
      expect(fold(facts).stop, outcome).toBeUndefined();
    }
  });
  it("a fact of a kind the fold does not know is a bug, thrown", () => {
    const bogus = { ...fact(2, { kind: "cancelled", "operator/binding-ref": OPERATOR }) };
    const step = { kind: "bogus" } as unknown as Step;
    expect(() => fold([...history(open()), { ...bogus, step }])).toThrow(/unexpected step/);
  });
  it("the first stop wins over a later cancel, and a cancel over a later conclusion", () => {
    const concluded = history(open(), cycle(1), admit(1), conclude(1, "verified"));
    const afterCancel = fold([
      ...concluded,
      fact(5, { kind: "cancelled", "operator/binding-ref": OPERATOR }),
    ]);
    expect(afterCancel.stop).toEqual({
      reason: "succeeded",
      executionRef: execution(1),
      sequence: 4,
    });
    const cancelled = history(open(), cycle(1), admit(1), cancel());
    const afterConclusion = fold([
      ...cancelled,
      fact(5, {
        kind: "concluded",
        "execution/ref": execution(1),
        "proposal/ref": proposal(1),
        outcome: "unknown",
      }),
    ]);
    expect(afterConclusion.stop).toEqual({
      reason: "cancelled",
      operatorRef: OPERATOR,
      sequence: 4,
    });
  });
  it("evolve adds one fact to a new state and leaves the old one as it was", () => {
    const facts = history(open(), cycle(1), admit(1));
    const before = fold(facts.slice(0, 2));
    const after = evolve(before, facts[2] as Fact);
    expect(after).toEqual(fold(facts));
    expect(before.spent.runs).toBe(0);
    expect(before.facts).toHaveLength(2);
    expect(before.byKey.size).toBe(2);
    expect(before.lastSequence).toBe(2);
  });
  it("fold from a state continues it", () => {
    const facts = history(open(), cycle(1), admit(1), passage(1));
    expect(fold(facts.slice(2), fold(facts.slice(0, 2)))).toEqual(fold(facts));
  });
});

describe("stateNameAt", () => {
  it("is open before the deadline and deadline-passed from the deadline on", () => {
    const s = fold(history(open()));
    expect(stateNameAt(s, DEADLINE_MS - 1)).toBe("open");
    expect(stateNameAt(s, DEADLINE_MS)).toBe("deadline-passed");
    expect(stateNameAt(s, DEADLINE_MS + 1)).toBe("deadline-passed");
  });
  it("is stopped once stopped, before or after the deadline", () => {
    const s = fold(history(open(), cancel()));
    expect(stateNameAt(s, T0)).toBe("stopped");
    expect(stateNameAt(s, DEADLINE_MS + 1)).toBe("stopped");
  });
});

describe("project", () => {
  it("has no document for a loop never opened", () => {
    expect(project(initialState(), at(0))).toBeUndefined();
  });
  it("projects an open loop: refs, state as of now, limits, deadline, spent, facts, no stop", () => {
    const facts = history(open(), passage(1), passage(2, "reviewer"), cycle(1), admit(1));
    const s = fold(facts);
    const doc = project(s, at(10));
    expect(doc).toEqual({
      schema: LOOP_SCHEMA_NAME,
      "query/id": QUERY,
      "binding/ref": BINDING,
      state: "open",
      limits: s.opening?.limits,
      deadline: "2026-12-01T11:00:00Z",
      spent: { passages: 2, "solver-passages": 1, "reviewer-passages": 1, cycles: 1, runs: 1 },
      facts,
    });
    expect(doc).not.toHaveProperty("stop");
    expect(LOOP_SCHEMA_NAME).toBe("corpus-task-pack-loop.v1");
    expect(project(s, new Date(DEADLINE_MS))?.state).toBe("deadline-passed");
  });
  it("projects each stop in its wire spelling", () => {
    const of = (...tail: Parameters<typeof history>) =>
      project(fold(history(open(), cycle(1), admit(1), ...tail)), at(10));
    expect(of(conclude(1, "verified"))).toMatchObject({
      state: "stopped",
      stop: { reason: "succeeded", "execution/ref": execution(1) },
    });
    expect(of(conclude(1, "unknown"))?.stop).toEqual({
      reason: "unknown",
      "execution/ref": execution(1),
    });
    expect(of(conclude(1, "refused", "environment/not-contained"))?.stop).toEqual({
      reason: "safety-refused",
      "execution/ref": execution(1),
      "refusal/code": "environment/not-contained",
    });
    expect(of(cancel())?.stop).toEqual({ reason: "cancelled", "operator/binding-ref": OPERATOR });
  });
  it("a stop of a reason it does not know is a bug, thrown", () => {
    const bogus = { reason: "bogus", sequence: 1 } as unknown as Parameters<typeof stopToWire>[0];
    expect(() => stopToWire(bogus)).toThrow(/unexpected stop/);
  });
  it("stopToWire and spentToWire spell each field", () => {
    expect(stopToWire({ reason: "succeeded", executionRef: execution(2), sequence: 3 })).toEqual({
      reason: "succeeded",
      "execution/ref": execution(2),
    });
    const s = fold(history(open(), passage(1), passage(2), passage(3, "reviewer"), cycle(1)));
    expect(spentToWire(s)).toEqual({
      passages: 3,
      "solver-passages": 2,
      "reviewer-passages": 1,
      cycles: 1,
      runs: 0,
    });
  });
});
