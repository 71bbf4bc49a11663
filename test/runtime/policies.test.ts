// The task pack's policies: admission by the operator, HIL `none`, and the live view's two forms.
import { describe, expect, it } from "vitest";
import { ADMISSION_STEP, approvalTarget } from "../../src/core/loop/next-action.js";
import { accept, conclusions, harness, plan, recordsOf, result, turn } from "./harness.js";

const Plan = (name: string) => turn("Plan", plan(name));

describe("admission by the operator", () => {
  it("an accepted proposal waits for `approve RUN admission` before run-admitted", async () => {
    let asked = 0;
    const h = await harness(
      { implementer: [Plan("good-fix")], reviewer: [accept], summarizer: [result] },
      {
        pack: "operator-admission.task-pack.json",
        autoApprove: false,
        onEvent: async (e, h) => {
          if (e.kind !== "approval-requested") return;
          asked++;
          const proposal = (await recordsOf(h, "proposal"))[0]?.ref ?? "";
          const step = asked === 1 ? ADMISSION_STEP : "fix-slugify";
          const facts = (await h.store.readFacts(h.query)).map((f) => f.fact.step.kind);
          // The admission is asked before any run-admitted fact.
          if (asked === 1) expect(facts).not.toContain("run-admitted");
          await h.store.postOperatorAct({
            query: h.query,
            kind: "approve",
            target: approvalTarget(proposal, step),
            operator: "node-operator-binding:test",
            at: new Date().toISOString(),
          });
        },
      },
    );
    const r = await h.drive();
    expect(asked).toBe(2);
    expect(r.document.stop?.reason).toBe("succeeded");
  });

  it("a denied admission sends the proposal back to the implementer, like a rejection", async () => {
    const h = await harness(
      { implementer: [Plan("good-fix")], reviewer: [accept] },
      {
        pack: "operator-admission.task-pack.json",
        autoApprove: false,
        onEvent: async (e, h) => {
          if (e.kind !== "approval-requested") return;
          const proposal = (await recordsOf(h, "proposal"))[0]?.ref ?? "";
          await h.store.postOperatorAct({
            query: h.query,
            kind: "deny",
            target: approvalTarget(proposal, ADMISSION_STEP),
            operator: "node-operator-binding:test",
            at: new Date().toISOString(),
          });
        },
      },
    );
    const r = await h.drive();
    expect(r.document.spent.runs).toBe(0);
    expect(r.document.spent["solver-passages"]).toBeGreaterThan(1);
  });
});

describe("HIL none", () => {
  it("runs mutations without asking anyone", async () => {
    const h = await harness(
      { implementer: [Plan("good-fix")], reviewer: [accept], summarizer: [result] },
      { pack: "no-hil.task-pack.json", autoApprove: false },
    );
    const r = await h.drive();
    expect(r.document.stop?.reason).toBe("succeeded");
    expect(h.events.some((e) => e.kind === "approval-requested")).toBe(false);
    expect(await h.store.readOperatorActs(h.query)).toEqual([]);
    const [c] = await conclusions(h);
    expect(c).toMatchObject({ outcome: "verified" });
  });
});

describe("passage tools", () => {
  it("an implementer reads the baseline with the workspace tools before it plans", async () => {
    const readFile = {
      kind: "tool_calls",
      summary: "read the implementation",
      tool_calls: [
        { name: "workspace.read_file", arguments_json: JSON.stringify({ path: "src/slugify.js" }) },
      ],
      message: null,
    };
    const h = await harness({
      implementer: [readFile, Plan("good-fix")],
      reviewer: [accept],
      summarizer: [result],
    });
    const r = await h.drive();
    expect(r.document.stop?.reason).toBe("succeeded");
    const transcript = JSON.stringify((await recordsOf(h, "transcript"))[0]?.body);
    expect(transcript).toContain("workspace.read_file");
    expect(transcript).toContain("export function slugify");
    // Two model calls in one passage: the passage end says so (a resumed script starts after them).
    const end = (await recordsOf(h, "passageEnd"))[0]?.body as { "model/calls": number };
    expect(end["model/calls"]).toBe(2);
  });
});

describe("the adversarial critic", () => {
  const finding = (severity: string) =>
    turn("Finding", { severity, claim: `a ${severity} concern`, evidence: ["fix-slugify"] });

  it("a high finding sends an accepted proposal back to the implementer", async () => {
    const h = await harness(
      {
        implementer: [Plan("good-fix"), Plan("good-fix")],
        reviewer: [accept, accept],
        "adversarial-critic": [finding("high"), finding("info")],
        summarizer: [result],
      },
      { pack: "with-critic.task-pack.json" },
    );
    const r = await h.drive();
    expect(r.document.stop?.reason).toBe("succeeded");
    expect(r.document.spent.cycles).toBe(2);
    expect(r.document.spent.runs).toBe(1);
    // Critic passages spend only max/passages: 2 implementer + 2 reviewer + 2 critic + 1 summary.
    expect(r.document.spent.passages).toBe(7);
    expect(JSON.stringify(h.models.implementer?.[1]?.requests[0]?.conversation[0])).toContain(
      "a high concern",
    );
  });
});
