// Every refusal path of docs/spec/runs.md, driven through the real runtime: memory store, bwrap sandbox,
// scripted agents, a clock the test moves.
import { describe, expect, it } from "vitest";
import { approvalTarget } from "../../src/core/loop/next-action.js";
import type { PassageEndBody } from "../../src/runtime/records.js";
import {
  accept,
  conclusions,
  harness,
  plan,
  recordsOf,
  reject,
  result,
  steps,
  turn,
} from "./harness.js";

const Plan = (name: string) => turn("Plan", plan(name));

async function planProblems(h: Awaited<ReturnType<typeof harness>>): Promise<string[][]> {
  return (await recordsOf(h, "passageEnd"))
    .map((r) => r.body as PassageEndBody)
    .filter((b) => b.role === "implementer")
    .map((b) => (b["plan/problems"] ?? []).map((p) => p.code));
}

describe("runtime refusals (docs/spec/runs.md)", () => {
  it.each([
    ["first-step-mutation", "plan/first-step-not-observation", "/steps/0"],
    ["unknown-action", "plan/unknown-action-kind", "/steps/1/action"],
    ["outside-policy", "workbench/patch-outside-policy", "/steps/1/path"],
    ["unknown-profile", "plan/outside-profile", "/steps/0/profile"],
    ["bad-profile-args", "plan/outside-profile", "/steps/0/args/file"],
  ])(
    "a plan that breaks %s (%s) is repaired inside its passage: one charge, no proposal for it",
    async (name, code, at) => {
      const h = await harness({
        implementer: [Plan(name), Plan("good-fix")],
        reviewer: [accept],
        summarizer: [result],
      });
      const r = await h.drive();
      expect(r.status).toBe("stopped");
      expect(r.document.stop?.reason).toBe("succeeded");
      // One implementer passage, two model calls: the refused plan never left it.
      expect(r.document.spent["solver-passages"]).toBe(1);
      expect(await planProblems(h)).toEqual([[]]);
      expect(await recordsOf(h, "proposal")).toHaveLength(1);
      expect(r.document.spent.cycles).toBe(1);
      // The repair named the fault and its place in the plan.
      const asked = h.models.implementer?.[0]?.requests;
      expect(asked).toHaveLength(2);
      const repair = asked?.[1]?.conversation[2];
      expect(repair?.kind).toBe("repair");
      if (repair?.kind === "repair") {
        expect(repair.text).toContain(`the host refused the Plan at ${at}`);
        expect(repair.text).toContain(`[${code}]`);
      }
      // The transcript keeps the refused call with the host's problems, charged as a repair.
      const end = (await recordsOf(h, "passageEnd"))[0]?.body as PassageEndBody;
      expect(end["model/calls"]).toBe(2);
      const transcript = (await recordsOf(h, "transcript"))[0]?.body as {
        entries: { validation: { valid: boolean; errors: { code: string }[] } }[];
        usage: { repairs: number };
      };
      expect(transcript.usage.repairs).toBe(1);
      expect(transcript.entries[0]?.validation.valid).toBe(false);
      expect(transcript.entries[0]?.validation.errors.map((e) => e.code)).toContain(code);
    },
  );

  it("with no repair left, a refused plan ends its passage: no proposal, fed back to the next passage", async () => {
    const h = await harness(
      {
        implementer: [Plan("unknown-action"), Plan("good-fix")],
        reviewer: [accept],
        summarizer: [result],
      },
      { pack: "no-repairs.task-pack.json" },
    );
    const r = await h.drive();
    expect(r.document.stop?.reason).toBe("succeeded");
    expect((await planProblems(h))[0]).toContain("plan/unknown-action-kind");
    expect(r.document.spent["solver-passages"]).toBe(2);
    expect(await recordsOf(h, "proposal")).toHaveLength(1);
    // The second implementer passage saw the refusal.
    const second = h.models.implementer?.[1]?.requests[0];
    expect(JSON.stringify(second?.conversation[0])).toContain("plan/unknown-action-kind");
    const refusedEvent = h.events.find((e) => e.kind === "passage-end" && e.role === "implementer");
    expect(refusedEvent).toMatchObject({
      outcome: { ok: true, refused: ["plan/unknown-action-kind"] },
    });
  });

  it("a passage over the pack's maxTokens across its turns ends passage/max-tokens, recorded; the loop goes on", async () => {
    const read = {
      kind: "tool_calls",
      summary: "read",
      tool_calls: [{ name: "workspace.read_file", arguments_json: '{"path":"src/slugify.js"}' }],
      message: null,
    };
    const h = await harness(
      {
        implementer: [
          { turn: read, usage: { input: 600, output: 100 } },
          { turn: read, usage: { input: 600, output: 100 } },
          { turn: Plan("good-fix"), usage: { input: 500, output: 200 } },
        ],
        reviewer: [accept],
        summarizer: [result],
      },
      { pack: "token-budget.task-pack.json" },
    );
    const r = await h.drive();
    expect(r.document.stop?.reason).toBe("succeeded");
    const ends = (await recordsOf(h, "passageEnd")).map((x) => x.body as PassageEndBody);
    // 700 tokens after one call: a second is made, asked for at most the 300 left; then none.
    expect(ends[0]?.failure?.code).toBe("passage/max-tokens");
    expect(ends[0]?.["model/calls"]).toBe(2);
    expect(h.models.implementer?.[0]?.requests.map((q) => q.maxOutputTokens)).toEqual([1000, 300]);
    const transcript = (await recordsOf(h, "transcript"))[0]?.body as {
      outcome: { ok: boolean; code?: string };
      usage: { inputTokens: number; outputTokens: number };
    };
    expect(transcript.outcome).toMatchObject({ ok: false, code: "passage/max-tokens" });
    expect(transcript.usage.inputTokens + transcript.usage.outputTokens).toBe(1400);
    // The next implementer passage starts with a budget of its own.
    expect(ends[1]?.message?.type).toBe("Plan");
    expect(
      h.events.find((e) => e.kind === "passage-end" && e.role === "implementer"),
    ).toMatchObject({
      outcome: { ok: false, code: "passage/max-tokens" },
      usage: { modelCalls: 2 },
    });
  });

  it("a denied mutation concludes the run refused hil/denied and the loop goes on", async () => {
    const h = await harness(
      { implementer: [Plan("good-fix")], reviewer: [accept] },
      {
        autoApprove: false,
        onEvent: async (e, h) => {
          if (e.kind !== "approval-requested") return;
          const proposal = (await recordsOf(h, "proposal"))[0]?.ref ?? "";
          await h.store.postOperatorAct({
            query: h.query,
            kind: "deny",
            target: approvalTarget(proposal, "fix-slugify"),
            operator: "node-operator-binding:test",
            at: new Date().toISOString(),
          });
        },
      },
    );
    const r = await h.drive();
    const [c] = await conclusions(h);
    expect(c).toMatchObject({ outcome: "refused", "refusal/code": "hil/denied" });
    // Not a stop: the loop asks the implementer again (whose script is now exhausted).
    expect(r.document.state).toBe("open");
    expect(r.document.stop).toBeUndefined();
    // The denied step never started.
    const started = (await recordsOf(h, "stepStarted")).map(
      (s) => (s.body as { "step/id": string })["step/id"],
    );
    expect(started).toEqual(["read-slugify"]);
  });

  it("an approval that does not arrive before the deadline concludes the run refused hil/expired", async () => {
    const h = await harness(
      { implementer: [Plan("good-fix")], reviewer: [accept] },
      {
        autoApprove: false,
        onEvent: (e, h) => {
          if (e.kind === "approval-requested") h.advance(11 * 60_000);
        },
      },
    );
    const r = await h.drive();
    const [c] = await conclusions(h);
    expect(c).toMatchObject({ outcome: "refused", "refusal/code": "hil/expired" });
    expect(r.status).toBe("blocked");
    if (r.status === "blocked") expect(r.reason).toBe("deadline");
  });

  it("a plan expecting a check the verifier lacks concludes refused verifier/check-missing", async () => {
    const h = await harness({ implementer: [Plan("missing-check")], reviewer: [accept] });
    await h.drive();
    const [c] = await conclusions(h);
    expect(c).toMatchObject({ outcome: "refused", "refusal/code": "verifier/check-missing" });
  });

  it("a verifier past its time limit concludes refused verifier/timeout", async () => {
    const h = await harness(
      { implementer: [Plan("observe")], reviewer: [accept] },
      { pack: "slow-verifier.task-pack.json" },
    );
    await h.drive();
    const [c] = await conclusions(h);
    expect(c).toMatchObject({ outcome: "refused", "refusal/code": "verifier/timeout" });
  });

  it("an exhausted budget blocks the loop and names the counter", async () => {
    const h = await harness(
      { implementer: [Plan("observe"), Plan("observe")], reviewer: [reject, reject] },
      { pack: "tight-budget.task-pack.json" },
    );
    const r = await h.drive();
    expect(r.status).toBe("blocked");
    if (r.status === "blocked") {
      expect(r.reason).toBe("budget");
      expect(r.counter).toBe("max/passages");
    }
    expect(r.document.spent.passages).toBe(3);
    // Driving again spends nothing more.
    const again = await h.drive();
    expect(again.document.facts).toHaveLength(r.document.facts.length);
  });

  it("a passed deadline blocks the loop; a renewal lets it go on", async () => {
    const h = await harness({
      implementer: [Plan("good-fix")],
      reviewer: [accept],
      summarizer: [result],
    });
    h.advance(10 * 60_000 + 1);
    const r = await h.drive();
    expect(r.status).toBe("blocked");
    if (r.status === "blocked") expect(r.reason).toBe("deadline");
    expect(await steps(h)).toEqual(["opened"]);
    const now = h.clock.now();
    const renewed = await h.ledger.execute(
      h.query,
      { op: "renew", deadline: new Date(now.getTime() + 300_000).toISOString() },
      now,
    );
    expect(renewed.result).toBe("appended");
    const after = await h.drive();
    expect(after.document.stop?.reason).toBe("succeeded");
  });

  it("a cancel mid-run stops the run at its next step boundary, destroys it and records its conclusion", async () => {
    const h = await harness(
      { implementer: [Plan("good-fix")], reviewer: [accept] },
      {
        onEvent: async (e, h) => {
          if (e.kind === "step-end" && e.stepId === "read-slugify") {
            await h.ledger.execute(h.query, { op: "cancel" }, h.clock.now());
          }
        },
      },
    );
    // The cancel lands while the first step's note is emitted; the boundary before step 2 sees it.
    const r = await h.drive();
    expect(r.document.stop).toEqual({
      reason: "cancelled",
      "operator/binding-ref": "node-operator-binding:test",
    });
    const [c] = await conclusions(h);
    expect(c).toMatchObject({ outcome: "cancelled" });
    const report = (await recordsOf(h, "runReport"))[0]?.body as {
      "environment/destroyed": boolean;
      steps: unknown[];
    };
    expect(report["environment/destroyed"]).toBe(true);
    expect(report.steps).toHaveLength(1);
  });

  it("an operator question blocks the loop until answered; the answer reaches the next passage", async () => {
    const h = await harness({
      implementer: [turn("Question", { question: "May I change the tests?" }), Plan("good-fix")],
      reviewer: [accept],
      summarizer: [result],
    });
    const r = await h.drive();
    expect(r.status).toBe("blocked");
    if (r.status === "blocked") expect(r.reason).toBe("operator-question");
    const asked = (await recordsOf(h, "passageEnd"))[0]?.body as PassageEndBody;
    await h.store.postOperatorAct({
      query: h.query,
      kind: "answer",
      target: asked["passage/ref"],
      text: "No: fix src/ only.",
      operator: "node-operator-binding:test",
      at: h.clock.now().toISOString(),
    });
    const after = await h.drive();
    expect(after.document.stop?.reason).toBe("succeeded");
    expect(JSON.stringify(h.models.implementer?.[1]?.requests[0]?.conversation[0])).toContain(
      "No: fix src/ only.",
    );
  });

  it("without a containing backend a mutating run is refused environment/not-contained: the loop stops safety-refused", async () => {
    const h = await harness(
      { implementer: [Plan("good-fix")], reviewer: [accept] },
      { sandbox: "none" },
    );
    const r = await h.drive();
    expect(r.document.stop).toMatchObject({
      reason: "safety-refused",
      "refusal/code": "environment/not-contained",
    });
    expect(await recordsOf(h, "stepStarted")).toHaveLength(0);
  });

  it("a cancel while a run waits for approval ends the wait and concludes the run cancelled", async () => {
    const h = await harness(
      { implementer: [Plan("good-fix")], reviewer: [accept] },
      {
        autoApprove: false,
        onEvent: async (e, h) => {
          if (e.kind === "approval-requested") {
            await h.ledger.execute(h.query, { op: "cancel" }, h.clock.now());
          }
        },
      },
    );
    const r = await h.drive();
    expect(r.document.stop?.reason).toBe("cancelled");
    const [c] = await conclusions(h);
    expect(c).toMatchObject({ outcome: "cancelled" });
  });

  it("a model that cannot answer blocks the loop instead of spending its budget", async () => {
    const h = await harness({ implementer: [] });
    const r = await h.drive();
    expect(r.status).toBe("blocked");
    if (r.status === "blocked") {
      expect(r.reason).toBe("model");
      expect(r.detail).toContain("model/script-exhausted");
    }
    expect(r.document.spent.passages).toBe(1);
  });
});
