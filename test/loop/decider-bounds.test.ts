// The loop decider's checks one at a time (src/core/loop/decide.ts): each counter exactly at its
// limit, each role against its own budget only, each field of a command named when it is refused,
// and inputs that pass every earlier check so that the check under test decides.
import { describe, expect, it } from "vitest";
import { decide, MAX_RENEWALS } from "../../src/core/loop/decide.js";
import { fold } from "../../src/core/loop/state.js";
import type { LoopCommand, Role, Step } from "../../src/core/loop/types.js";
import {
  admit,
  at,
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
  renew,
  T0,
} from "./gwt.js";

const ONE_EACH = [
  {
    "max/passages": 4,
    "max/solver-passages": 1,
    "max/reviewer-passages": 1,
    "max/experiments": 1,
    "max/wall-time-ms": 60_000,
  },
];
const charged = (n: number, role: Role): Step => ({
  kind: "passage-charged",
  role,
  "agent/id": "agent:a1",
  "passage/ref": `passage:p${n}`,
});

describe("refusals", () => {
  it("carry a counter only when a budget refused", () => {
    const refusal = (d: ReturnType<typeof decide>) => (d.result === "refused" ? d.refusal : {});
    const notOpened = decide(fold([]), passage(1), at(0));
    expect(Object.keys(refusal(notOpened)).sort()).toEqual(["code", "message"]);
    const spent = decide(fold(history(open(ONE_EACH), passage(1))), passage(2), at(5));
    expect(refusal(spent)).toMatchObject({
      code: "loop/budget-exhausted",
      counter: "max/solver-passages",
    });
  });
  it("a malformed command names the field it refuses", () => {
    const field = (command: LoopCommand) => {
      const d = decide(fold(history(open(), cycle(1), admit(1))), command, at(5));
      expect(d.result).toBe("refused");
      return d.result === "refused" ? d.refusal.message : "";
    };
    const o = open() as Extract<LoopCommand, { op: "open" }>;
    expect(decide(fold([]), { ...o, query: "q" }, at(0))).toMatchObject({
      refusal: { code: "loop/command-invalid", message: expect.stringContaining("query") },
    });
    expect(decide(fold([]), { ...o, binding: "b" }, at(0))).toMatchObject({
      refusal: { message: expect.stringContaining("binding") },
    });
    expect(decide(fold([]), { ...o, operator: "o" }, at(0))).toMatchObject({
      refusal: { message: expect.stringContaining("operator") },
    });
    expect(
      field({
        op: "charge-passage",
        role: "critic" as "reviewer",
        agent: "agent:a",
        passage: "passage:p",
      }),
    ).toContain("role");
    expect(
      field({ op: "charge-passage", role: "reviewer", agent: "a", passage: "passage:p" }),
    ).toContain("agent");
    expect(
      field({ op: "charge-passage", role: "reviewer", agent: "agent:a", passage: "p" }),
    ).toMatch(/: passage is not valid/);
    expect(field({ op: "open-cycle", proposal: "p" })).toContain("proposal");
    expect(
      field({ op: "conclude", proposal: "p", execution: execution(1), outcome: "verified" }),
    ).toContain("proposal");
    expect(
      field({ op: "conclude", proposal: proposal(1), execution: "e", outcome: "verified" }),
    ).toContain("execution");
    expect(
      field({
        op: "conclude",
        proposal: proposal(1),
        execution: execution(1),
        outcome: "done" as "verified",
      }),
    ).toContain("outcome");
    expect(
      field({
        op: "conclude",
        proposal: proposal(1),
        execution: execution(1),
        outcome: "refused",
        refusal: "nope",
      }),
    ).toContain("refusal");
    expect(field({ op: "renew", deadline: "2026-12-01T11:30:00Z", operator: "bob" })).toContain(
      "operator",
    );
  });
});

describe("commands the seed schema carries", () => {
  it("every role is a valid role, every outcome a valid outcome", () => {
    for (const role of ["implementer", "reviewer", "adversarial-critic", "summarizer"] as const) {
      expect(decide(fold(history(open())), passage(1, role), at(5)).result).toBe("appended");
    }
    for (const outcome of [
      "verified",
      "verification-failed",
      "refused",
      "cancelled",
      "unknown",
    ] as const) {
      expect(
        decide(fold(history(open(), cycle(1), admit(1))), conclude(1, outcome), at(5)).result,
      ).toBe("appended");
    }
  });
  it("a conclusion with a known refusal code appends it with that code", () => {
    given(history(open(), cycle(1), admit(1)))
      .when(conclude(1, "refused", "hil/denied"), at(5))
      .then({
        kind: "concluded",
        "execution/ref": execution(1),
        "proposal/ref": proposal(1),
        outcome: "refused",
        "refusal/code": "hil/denied",
      });
  });
  it("renew and cancel may name the loop's operator", () => {
    given(history(open()))
      .when(renew(at(3605), OPERATOR), at(5))
      .then({
        kind: "renewed",
        deadline: "2026-12-01T11:00:05Z",
        "operator/binding-ref": OPERATOR,
      });
    given(history(open()))
      .when(cancel(OPERATOR), at(5))
      .then({ kind: "cancelled", "operator/binding-ref": OPERATOR });
  });
});

describe("conclusions", () => {
  it("a conclusion without a refusal code stores no refusal/code field at all", () => {
    const d = decide(fold(history(open(), cycle(1), admit(1))), conclude(1, "verified"), at(5));
    expect(d.result).toBe("appended");
    if (d.result === "appended") expect(Object.keys(d.fact.step)).not.toContain("refusal/code");
  });
  it("the same refused conclusion with its code is a replay; another code is not", () => {
    const facts = history(open(), cycle(1), admit(1), conclude(1, "refused", "hil/denied"));
    given(facts)
      .when(conclude(1, "refused", "hil/denied"), at(9))
      .thenReplays(4);
    given(facts)
      .when(conclude(1, "refused", "hil/expired"), at(9))
      .thenRefuses("loop/already-concluded");
    given(facts).when(conclude(1, "refused"), at(9)).thenRefuses("loop/already-concluded");
  });
});

describe("a command the decider does not know", () => {
  it("is a bug of its caller, thrown, not a refusal", () => {
    const bogus = { op: "bogus" } as unknown as LoopCommand;
    expect(() => decide(fold(history(open())), bogus, at(5))).toThrow(/unexpected command/);
  });
});

describe("opening again", () => {
  it("an opening whose layers are now invalid is a key conflict, not a replay", () => {
    given(history(open()))
      .when(open([{ "max/passages": 0 }]), at(5))
      .thenRefuses("loop/key-conflict");
  });
  it("an opening that differs in one limit only (wall time) is a key conflict", () => {
    const layers = [
      { "max/passages": 8, "max/cycles": 4, "max/experiments": 2, "max/wall-time-ms": 3_600_000 },
      { "max/passages": 6 },
    ];
    given(history(open(layers)))
      .when(open([{ ...layers[0], "max/wall-time-ms": 3_599_999 }, { "max/passages": 6 }]), at(5))
      .thenRefuses("loop/key-conflict");
    given(history(open(layers)))
      .when(open([{ ...layers[0] }, { "max/passages": 6 }]), at(5))
      .thenReplays(1);
  });
  it("the opening refusal of the limits is the limits' own", () => {
    given([])
      .when(open([{ "max/passages": 0, "max/experiments": 1, "max/wall-time-ms": 10 }]), at(0))
      .thenRefuses("loop/limits-invalid");
  });
});

describe("budgets exactly at their limit", () => {
  it("the last passage within max/passages is charged; the next is refused", () => {
    const p = [{ "max/passages": 2, "max/experiments": 1, "max/wall-time-ms": 60_000 }];
    const facts = history(open(p), passage(1, "summarizer"));
    given(facts).when(passage(2, "summarizer"), at(5)).then(charged(2, "summarizer"));
    given(history(open(p), passage(1, "summarizer"), passage(2, "summarizer")))
      .when(passage(3, "summarizer"), at(5))
      .thenRefuses("loop/budget-exhausted", "max/passages");
  });
  it("a spent solver budget refuses implementers only; reviewers and the rest go on", () => {
    const facts = history(open(ONE_EACH), passage(1, "implementer"));
    given(facts)
      .when(passage(2), at(5))
      .thenRefuses("loop/budget-exhausted", "max/solver-passages");
    given(facts).when(passage(2, "reviewer"), at(5)).then(charged(2, "reviewer"));
    given(facts)
      .when(passage(2, "adversarial-critic"), at(5))
      .then(charged(2, "adversarial-critic"));
    given(facts).when(passage(2, "summarizer"), at(5)).then(charged(2, "summarizer"));
  });
  it("a spent reviewer budget refuses reviewers only", () => {
    const facts = history(open(ONE_EACH), passage(1, "reviewer"));
    given(facts)
      .when(passage(2, "reviewer"), at(5))
      .thenRefuses("loop/budget-exhausted", "max/reviewer-passages");
    given(facts).when(passage(2, "implementer"), at(5)).then(charged(2, "implementer"));
    given(facts)
      .when(passage(2, "adversarial-critic"), at(5))
      .then(charged(2, "adversarial-critic"));
  });
  it("the last cycle within max/cycles opens", () => {
    given(history(open(), cycle(1), cycle(2), cycle(3)))
      .when(cycle(4), at(9))
      .then({ kind: "cycle-opened", "proposal/ref": proposal(4) });
  });
  it("the last run within max/experiments is admitted", () => {
    given(history(open(), cycle(1), cycle(2), admit(1)))
      .when(admit(2), at(9))
      .then({ kind: "run-admitted", "proposal/ref": proposal(2) });
  });
  it("a spent experiments budget is refused before the missing cycle", () => {
    given(history(open(ONE_EACH), cycle(1), admit(1)))
      .when(admit(2), at(9))
      .thenRefuses("loop/budget-exhausted", "max/experiments");
  });
});

describe("the loop's state decides before the budget", () => {
  it("a stopped loop refuses a new cycle even with budget and time left", () => {
    given(history(open(), cancel())).when(cycle(1), at(5)).thenRefuses("loop/not-open");
  });
  it("a stopped loop past its deadline is not-open, not deadline-passed", () => {
    given(history(open(), cancel())).when(admit(1), at(4000)).thenRefuses("loop/not-open");
  });
  it("a charge one millisecond before the deadline is taken", () => {
    given(history(open()))
      .when(cycle(1), new Date(T0 + 3_600_000 - 1))
      .then({ kind: "cycle-opened", "proposal/ref": proposal(1) });
  });
  it("a charge already refused by the deadline stays refused with budget left", () => {
    given(history(open()))
      .when(passage(1), new Date(T0 + 3_600_000))
      .thenRefuses("loop/deadline-passed");
  });
});

describe("renewals", () => {
  it("renewing to an earlier renewal's deadline replays that renewal", () => {
    const facts = history(open(), renew(at(3601)), renew(at(3602)));
    given(facts)
      .when(renew(at(3601)), at(9))
      .thenReplays(2);
  });
  it("replays a renewal even on a stopped loop", () => {
    const facts = history(open(), renew(at(3601)), cancel());
    given(facts)
      .when(renew(at(3601)), at(9))
      .thenReplays(2);
  });
  it("the 64th renewal is allowed", () => {
    const cmds: LoopCommand[] = [open()];
    for (let i = 1; i < MAX_RENEWALS; i++) cmds.push(renew(at(3600 + i)));
    const facts = history(...cmds);
    expect(fold(facts).renewals).toBe(MAX_RENEWALS - 1);
    given(facts)
      .when(renew(at(3665)), at(70))
      .then({
        kind: "renewed",
        deadline: "2026-12-01T11:01:05Z",
        "operator/binding-ref": OPERATOR,
      });
    expect(MAX_RENEWALS).toBe(64);
  });
  it("a stopped loop is refused before the renewal count", () => {
    const cmds: LoopCommand[] = [open()];
    for (let i = 1; i <= MAX_RENEWALS; i++) cmds.push(renew(at(3600 + i)));
    cmds.push(cancel());
    given(history(...cmds))
      .when(renew(at(3700)), at(70))
      .thenRefuses("loop/not-open");
  });
  it("a deadline one millisecond later than the current one and than now is accepted", () => {
    given(history(open()))
      .when(renew(new Date(T0 + 3_600_001)), at(5))
      .then({
        kind: "renewed",
        deadline: "2026-12-01T11:00:00.001Z",
        "operator/binding-ref": OPERATOR,
      });
    given(history(open()))
      .when(renew(new Date(T0 + 3_700_001)), new Date(T0 + 3_700_000))
      .then({
        kind: "renewed",
        deadline: "2026-12-01T11:01:40.001Z",
        "operator/binding-ref": OPERATOR,
      });
  });
  it("a deadline later than the current one but not than now is refused", () => {
    given(history(open()))
      .when(renew(new Date(T0 + 3_650_000)), new Date(T0 + 3_650_000))
      .thenRefuses("loop/renewal-invalid");
  });
  it("a deadline later than now but not than the current one is refused", () => {
    given(history(open()))
      .when(renew(new Date(T0 + 3_599_999)), at(5))
      .thenRefuses("loop/renewal-invalid");
  });
  it("a deadline one millisecond more than max/wall-time-ms after now is refused", () => {
    given(history(open()))
      .when(renew(new Date(T0 + 10_000 + 3_600_001)), at(10))
      .thenRefuses("loop/renewal-invalid");
  });
  it("the new deadline is stored in the loop's spelling, whatever the command's", () => {
    given(history(open()))
      .when({ op: "renew", deadline: "2026-12-01T12:30:04+01:30" }, at(5))
      .then({
        kind: "renewed",
        deadline: "2026-12-01T11:00:04Z",
        "operator/binding-ref": OPERATOR,
      });
  });
  it("another operator is refused on an open loop too", () => {
    given(history(open()))
      .when(renew(at(3601), "node-operator-binding:bob"), at(5))
      .thenRefuses("loop/not-operator");
  });
});

describe("appended facts", () => {
  it("are numbered after the last fact and stamped now", () => {
    const facts = history(open(), cycle(1));
    const d = decide(fold(facts), passage(1), new Date(T0 + 1500));
    expect(d).toEqual({
      result: "appended",
      fact: {
        "query/id": "query:demo-1",
        sequence: 3,
        "recorded-at": "2026-12-01T10:00:01.500Z",
        step: charged(1, "implementer"),
      },
    });
  });
});
