// The task pack's policies: admission by the operator, HIL `none`, and the live view's two forms.
import { describe, expect, it } from "vitest";
import { ADMISSION_STEP, approvalTarget } from "../../src/runtime/ledger-view.js";
import { createLiveView, fitStatus } from "../../src/runtime/live-view.js";
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
          if (e.kind !== "waiting" || !e.what.startsWith("approval")) return;
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
          if (e.kind !== "waiting" || !e.what.startsWith("approval")) return;
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
    expect(h.events.some((e) => e.kind === "waiting")).toBe(false);
    expect(await h.store.readOperatorActs(h.query)).toEqual([]);
    const [c] = await conclusions(h);
    expect(c).toMatchObject({ outcome: "verified" });
  });
});

describe("the live view", () => {
  it("prints plain lines with budgets when stdout is not a terminal", async () => {
    const lines: string[] = [];
    const h = await harness({ implementer: [Plan("observe")], reviewer: [accept] });
    const view = createLiveView((t) => lines.push(t), { tty: false, clock: h.ctx.clock });
    for (const e of h.events) view.emit(e);
    view.close();
    const text = lines.join("");
    expect(text).toContain("fact 1 opened query:test-1");
    expect(text).toContain("budgets: passages 0/12");
    expect(text).not.toContain("\x1b[");
  });

  it("draws bars, the deadline and what it waits for under the lines on a terminal", async () => {
    const lines: string[] = [];
    const h = await harness({});
    const view = createLiveView((t) => lines.push(t), {
      tty: true,
      clock: h.ctx.clock,
      columns: () => 200,
    });
    for (const e of h.events) view.emit(e);
    view.emit({ kind: "waiting", what: "approval of fix-slugify" });
    view.close();
    const text = lines.join("");
    expect(text).toContain("passages ░░░░░░░░░░ 0/12");
    expect(text).toContain("deadline in 10m00s");
    expect(text).toContain("waiting: approval of fix-slugify");
    expect(text).toContain("\r\x1b[2K");
  });

  it("keeps the status line within one terminal row, so it can be erased in place", async () => {
    const writes: string[] = [];
    const h = await harness({});
    const view = createLiveView((t) => writes.push(t), {
      tty: true,
      clock: h.ctx.clock,
      columns: () => 60,
    });
    for (const e of h.events) view.emit(e);
    view.emit({ kind: "waiting", what: `approval of ${"a-very-long-step-name-".repeat(5)}` });
    view.close();
    const statuses = writes
      .filter((w) => w.startsWith("\r\x1b[2K") && w.length > 5)
      .map((w) => Array.from(w.slice(5)));
    expect(statuses.length).toBeGreaterThan(0);
    for (const s of statuses) expect(s.length).toBeLessThanOrEqual(59);
    expect(fitStatus("x".repeat(100), 40)).toBe(`${"x".repeat(38)}…`);
    expect(fitStatus("short", 40)).toBe("short");
  });

  it("holds the status line off a terminal prompt until the next event", async () => {
    const writes: string[] = [];
    const h = await harness({});
    const view = createLiveView((t) => writes.push(t), {
      tty: true,
      clock: h.ctx.clock,
      columns: () => 200,
    });
    for (const e of h.events) view.emit(e);
    view.hold();
    const held = writes.length;
    // The prompt is written now; nothing of the view's may follow until an event arrives.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(writes.length).toBe(held);
    view.emit({ kind: "note", text: "approved" });
    expect(writes.slice(held).join("")).toContain("approved\n");
    expect(writes.at(-1)?.startsWith("\r\x1b[2Kdeadline in")).toBe(true);
    view.close();
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
