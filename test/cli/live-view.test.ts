// The live view, a subscriber of the event stream: plain lines with budgets off a terminal; on a
// terminal, a status line (bars, the deadline, what the loop waits for) that never wraps and stays
// off a prompt.
import { describe, expect, it, vi } from "vitest";
import { createLiveView, fitStatus, lineOf } from "../../src/cli/live-view.js";
import { toQueryId } from "../../src/core/ids.js";
import type { WarrantEvent } from "../../src/runtime/events.js";
import { accept, harness, plan, turn } from "../runtime/harness.js";

const Plan = (name: string) => turn("Plan", plan(name));
const at = "2026-12-01T10:00:00.000Z";
const run = "corpus-experiment:sha256:x";
const QUERY = toQueryId("query:test-1");

function approvalRequested(step: string, description = `patch src/x.js\n-a\n+b`): WarrantEvent {
  return {
    kind: "approval-requested",
    at,
    query: QUERY,
    proposalRef: run,
    step,
    approval: "mutation",
    description,
  };
}

function approvalAnswered(step: string): WarrantEvent {
  return {
    kind: "approval-answered",
    at,
    query: QUERY,
    proposalRef: run,
    step,
    approval: "mutation",
    answer: "approved",
    by: "auto",
  };
}

describe("the live view", () => {
  it("prints plain lines with budgets when stdout is not a terminal", async () => {
    const lines: string[] = [];
    const h = await harness({ implementer: [Plan("observe")], reviewer: [accept] });
    const view = createLiveView((t) => lines.push(t), { tty: false, clock: h.clock });
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
      clock: h.clock,
      columns: () => 200,
    });
    for (const e of h.events) view.emit(e);
    view.emit(approvalRequested("fix-slugify"));
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
      clock: h.clock,
      columns: () => 60,
    });
    for (const e of h.events) view.emit(e);
    view.emit(approvalRequested("a-very-long-step-name-".repeat(5)));
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
    // The view's ticker runs on timers the test moves: a second passes when the test says so.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const view = createLiveView((t) => writes.push(t), {
        tty: true,
        clock: h.clock,
        columns: () => 200,
      });
      for (const e of h.events) view.emit(e);
      // Unheld, the status line is drawn again each second.
      const drawn = writes.length;
      vi.advanceTimersByTime(1_100);
      expect(writes.length).toBe(drawn + 1);
      view.hold();
      const held = writes.length;
      // The prompt is written now; nothing of the view's may follow until an event arrives.
      vi.advanceTimersByTime(3_100);
      expect(writes.length).toBe(held);
      view.emit(approvalAnswered("fix-slugify"));
      expect(writes.slice(held).join("")).toContain("approved fix-slugify automatically (--yes)\n");
      expect(writes.at(-1)?.startsWith("\r\x1b[2Kdeadline in")).toBe(true);
      view.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("the live view's lines", () => {
  it("says what the operator may do while an approval waits", () => {
    expect(lineOf(approvalRequested("fix-slugify"))).toBe(
      `waiting: approval of fix-slugify: warrant approve ${run} fix-slugify | warrant deny ${run} fix-slugify\npatch src/x.js\n-a\n+b`,
    );
  });

  it("prints a run's environment only when one was made, and an interrupted run as unknown", () => {
    const end = {
      kind: "run-end",
      at,
      query: QUERY,
      proposalRef: run,
      environmentRef: "environment:x",
      outcome: "refused",
      environmentMade: false,
      environmentDestroyed: true,
      interrupted: false,
    } as const;
    expect(lineOf(end)).toBeUndefined();
    expect(lineOf({ ...end, environmentMade: true })).toBe("  environment destroyed (confirmed)");
    expect(lineOf({ ...end, environmentMade: true, environmentDestroyed: false })).toBe(
      "  environment destroyed (NOT confirmed)",
    );
    expect(lineOf({ ...end, outcome: "unknown", environmentMade: true, interrupted: true })).toBe(
      "run interrupted mid-step: concluded unknown, environment destroyed",
    );
  });

  it("prints nothing for model calls, tool calls and phases", () => {
    const quiet: WarrantEvent[] = [
      {
        kind: "model-call-start",
        at,
        query: QUERY,
        role: "implementer",
        passageRef: "p",
        index: 0,
        provider: "scripted",
        target: { provider: "scripted", model: "s" },
      },
      { kind: "run-phase", at, query: QUERY, proposalRef: run, phase: "steps", durationMs: 1 },
      {
        kind: "drive-start",
        at,
        query: QUERY,
        pack: "p",
        binding: "b",
        holder: "h",
        store: "memory",
      },
    ];
    for (const e of quiet) expect(lineOf(e)).toBeUndefined();
  });

  it("prints a passage's model calls and tokens at its end, cached and reasoning when reported", () => {
    const usage = {
      inputTokens: 1200,
      outputTokens: 340,
      cachedInputTokens: 1000,
      reasoningTokens: 40,
      latencyMs: 5,
      modelCalls: 2,
      toolCalls: 1,
      repairs: 0,
    };
    const base = { at, query: QUERY, role: "implementer", passageRef: "p", agentId: "a" } as const;
    expect(
      lineOf({ ...base, kind: "passage-end", outcome: { ok: true, type: "Plan" }, usage }),
    ).toBe(
      "  implementer → Plan (2 model calls; tokens 1200 in (1000 cached), 340 out (40 reasoning))",
    );
    expect(
      lineOf({
        ...base,
        kind: "passage-end",
        outcome: { ok: false, code: "passage/max-tokens", message: "over" },
        usage: { ...usage, modelCalls: 1, cachedInputTokens: 0, reasoningTokens: 0 },
      }),
    ).toBe(
      "refused: passage/max-tokens: implementer passage failed: over (1 model call; tokens 1200 in, 340 out)",
    );
    // A passage runner that reports no usage: the line says nothing of tokens.
    expect(lineOf({ ...base, kind: "passage-end", outcome: { ok: true, type: "Plan" } })).toBe(
      "  implementer → Plan",
    );
  });

  it("prints a failed check's detail under its line, cut after six lines; a passed check's not", () => {
    const check = (passed: boolean, detail: string): WarrantEvent => ({
      kind: "check",
      at,
      query: QUERY,
      proposalRef: run,
      name: "tests-unchanged",
      passed,
      detail,
      durationMs: 1,
    });
    expect(lineOf(check(true, "unchanged"))).toBe("  check tests-unchanged: passed");
    expect(lineOf(check(false, "changed: test/__pycache__/x.pyc"))).toBe(
      "  check tests-unchanged: failed\n    changed: test/__pycache__/x.pyc",
    );
    const long = Array.from({ length: 9 }, (_, i) => `line ${i + 1}`).join("\n");
    const text = lineOf(check(false, long)) ?? "";
    expect(text.split("\n")).toEqual([
      "  check tests-unchanged: failed",
      "    line 1",
      "    line 2",
      "    line 3",
      "    line 4",
      "    line 5",
      "    line 6",
      "    … 3 more lines (warrant record shows them all)",
    ]);
    // An empty detail adds nothing.
    expect(lineOf(check(false, ""))).toBe("  check tests-unchanged: failed");
  });

  it("says why a mutation was approved without asking: --yes, or what the caller names", () => {
    expect(lineOf(approvalAnswered("fix"))).toBe("  approved fix automatically (--yes)");
    expect(
      lineOf(approvalAnswered("fix"), { autoApproval: "the demo approves each mutation" }),
    ).toBe("  approved fix automatically (the demo approves each mutation)");
  });

  it("on a memory: store, a wait for approval names no command another terminal could not run", () => {
    const text = lineOf(approvalRequested("fix-slugify"), { processStore: true }) ?? "";
    expect(text).not.toContain("warrant approve");
    expect(text).toContain("no other terminal can answer");
    expect(lineOf(approvalRequested("fix-slugify"))).toContain("warrant approve");
  });

  it("prints the lines of a whole loop in the order they happened", async () => {
    const h = await harness({ implementer: [Plan("good-fix")], reviewer: [accept] });
    await h.drive();
    const lines = h.events.flatMap((e) => lineOf(e) ?? []);
    expect(lines[0]).toBe("fact 1 opened query:test-1");
    expect(lines).toContain("  implementer → Plan (1 model call; tokens 0 in, 0 out)");
    expect(lines).toContain("  approved fix-slugify automatically (--yes)");
    expect(lines.some((l) => /^ {2}step fix-slugify patch: ok$/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith("  check "))).toBe(true);
    expect(lines).toContain("  environment destroyed (confirmed)");
  });
});

describe("egress connections in the live view", () => {
  it("prints a step's connections under it: allowed with bytes, refused and failed with the reason", () => {
    const step: WarrantEvent = {
      kind: "step-end",
      at,
      query: QUERY,
      proposalRef: run,
      stepId: "fetch",
      class: "observation",
      action: "observe-command",
      status: "ok",
      exitCode: 0,
      connections: [
        {
          protocol: "http-connect",
          host: "registry.npmjs.org",
          port: 443,
          address: "104.16.1.34",
          "address/class": "public",
          allowed: true,
          "bytes/up": 517,
          "bytes/down": 4096,
        },
        {
          protocol: "socks5",
          host: "localhost",
          port: 5432,
          allowed: false,
          reason: "egress/not-listed",
          "bytes/up": 0,
          "bytes/down": 0,
        },
        {
          protocol: "http",
          host: "0:0:0:0:0:0:0:1",
          port: 8080,
          address: "0:0:0:0:0:0:0:1",
          allowed: true,
          reason: "egress/connect-failed",
          "bytes/up": 0,
          "bytes/down": 0,
        },
      ],
    };
    expect(lineOf(step)).toBe(
      [
        "  step fetch observe-command: ok (exit 0)",
        "    net http-connect registry.npmjs.org:443 (104.16.1.34) allowed: 517 B up, 4096 B down",
        "    net socks5 localhost:5432 refused: egress/not-listed",
        "    net http [0:0:0:0:0:0:0:1]:8080 allowed, failed: egress/connect-failed",
      ].join("\n"),
    );
    const { connections: _, ...without } = step as WarrantEvent & { connections: unknown };
    expect(lineOf(without as WarrantEvent)).toBe("  step fetch observe-command: ok (exit 0)");
  });
});

/** Sequences a hostile text may hold: retitle the window, erase the line, return, an 8-bit CSI. */
const HOSTILE = "A\x1b]0;pwned\x07B\x1b[2KC\rD\x9bE";
const SHOWN = "A\\x1b]0;pwned\\x07B\\x1b[2KC\\rD\\x9bE";
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("the live view is terminal-safe", () => {
  it("escapes control characters in an approval's description, a step's name, a command's output and a host", () => {
    const approval = lineOf(
      approvalRequested(`fix\n${HOSTILE}`, `patch src/${HOSTILE}.js\n-a\n+${HOSTILE}\r\n`),
    );
    expect(approval).not.toMatch(CONTROL);
    expect(approval).toContain(`waiting: approval of fix\\n${SHOWN}: warrant approve`);
    expect(approval).toContain(`patch src/${SHOWN}.js\n-a\n+${SHOWN}\\r\n`);
    const check = lineOf({
      kind: "check",
      at,
      query: QUERY,
      proposalRef: run,
      name: "tests-pass",
      passed: false,
      detail: `not ok 1\n${HOSTILE}\n`,
    } as WarrantEvent);
    expect(check).not.toMatch(CONTROL);
    expect(check).toBe(`  check tests-pass: failed\n    not ok 1\n    ${SHOWN}`);
    const step = lineOf({
      kind: "step-end",
      at,
      query: QUERY,
      proposalRef: run,
      stepId: "fetch",
      class: "observation",
      action: "observe-command",
      status: "ok",
      exitCode: 0,
      connections: [
        {
          protocol: "socks5",
          host: `evil\n${HOSTILE}`,
          port: 80,
          allowed: false,
          reason: "egress/not-listed",
          "bytes/up": 0,
          "bytes/down": 0,
        },
      ],
    });
    expect(step).not.toMatch(CONTROL);
    expect(step?.split("\n")).toEqual([
      "  step fetch observe-command: ok (exit 0)",
      `    net socks5 evil\\n${SHOWN}:80 refused: egress/not-listed`,
    ]);
    const blocked = lineOf({
      kind: "blocked",
      at,
      query: QUERY,
      reason: "operator-question",
      detail: `the model asks: ${HOSTILE}\nfake line`,
      document: undefined,
    } as unknown as WarrantEvent);
    expect(blocked).not.toMatch(CONTROL);
    expect(blocked).not.toContain("\n");
  });

  it("on a terminal, writes no control character of the content: only its own erase of the status line", async () => {
    const writes: string[] = [];
    const h = await harness({});
    const view = createLiveView((t) => writes.push(t), {
      tty: true,
      clock: h.clock,
      columns: () => 200,
    });
    for (const e of h.events) view.emit(e);
    view.emit(approvalRequested(`fix${HOSTILE}`, `write a\n${HOSTILE}`));
    view.close();
    const screen = writes.join("");
    expect(screen).toContain(`\r\x1b[2K`);
    // Take out the view's own erase sequence: nothing a terminal acts on is left.
    expect(screen.replaceAll("\r\x1b[2K", "")).not.toMatch(CONTROL);
    expect(screen).toContain(`write a\n${SHOWN}\n`);
    // The status line says what the loop waits for, escaped as well.
    expect(screen).toContain(`waiting: approval of fix${SHOWN}`);
  });
});
