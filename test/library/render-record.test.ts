// The readable renderings of ledger records, as pure functions of a body: a transcript turn by
// turn with its tool calls and repairs, a passage's end with its message, a memory write, an
// execution with and without its run report and the acts on its steps; a body that breaks its
// kind's schema and a kind without a renderer are printed as JSON, never dropped.
import { describe, expect, it } from "vitest";
import type { OperatorAct } from "../../src/core/ports/ledger-store.js";
import { operatorActRef } from "../../src/core/records/operator-act.js";
import { renderOperatorAct, renderRecord } from "../../src/index.js";

const Q = "query:test-1";
const RUN = `corpus-experiment:sha256:${"R".repeat(43)}`;
const EXEC = `corpus-task-pack-execution:sha256:${"E".repeat(43)}`;
const usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 };

const transcript = {
  schema: "warrant.passage-transcript.v1",
  role: "implementer",
  "agent/id": "agent:x",
  provider: "scripted:implementer.jsonl",
  systemDigest: "sha256:s",
  evidenceDigest: "sha256:e",
  entries: [
    {
      kind: "model-call",
      index: 0,
      stop: "complete",
      candidate: "I think the fix is obvious",
      validation: {
        valid: false,
        errors: [{ code: "turn/not-json", path: "", message: "the answer is not JSON" }],
      },
      usage,
    },
    {
      kind: "model-call",
      index: 1,
      stop: "complete",
      turn: {
        kind: "tool_calls",
        summary: "Read it first.",
        message: null,
        tool_calls: [{ name: "workspace.read_file", arguments_json: '{"path":"a.js"}' }],
      },
      validation: { valid: true, errors: [] },
      usage,
    },
    {
      kind: "tool-call",
      turn: 1,
      name: "workspace.read_file",
      args: { path: "a.js" },
      result: { ok: true, isError: false, content: "export const a = 1;\n" },
      latencyMs: 1,
    },
    {
      kind: "model-error",
      index: 2,
      requestDigest: "sha256:r",
      code: "model/http",
      message: "503",
    },
    {
      kind: "model-call",
      index: 3,
      stop: "complete",
      turn: {
        kind: "message",
        summary: "Plan it.",
        tool_calls: [],
        message: {
          type: "Plan",
          payload_json: JSON.stringify({
            hypothesis: "a is wrong",
            steps: [
              {
                id: "fix",
                action: "patch",
                path: "a.js",
                diff: "--- a/a.js\n+++ b/a.js\n-1\n+2\n",
              },
            ],
          }),
        },
      },
      validation: { valid: true, errors: [] },
      usage,
    },
  ],
  usage: { ...usage, latencyMs: 3, modelCalls: 4, toolCalls: 1, repairs: 1 },
  outcome: { ok: true, type: "Plan" },
};

const denial: OperatorAct = {
  query: Q,
  kind: "deny",
  target: `${RUN} fix`,
  text: "too broad",
  operator: "node-operator-binding:bob",
  at: "2026-12-01T10:00:00.000Z",
};

const execution = {
  "schema/v": 1,
  "execution/ref": EXEC,
  "query/id": Q,
  "proposal/ref": RUN,
  "environment/ref": "environment:x",
  steps: [
    {
      "step/id": "look",
      class: "observation",
      "exit-status": 0,
      "stdout/digest": "sha256:o",
      "stderr/digest": "sha256:e",
      truncated: false,
    },
  ],
  checks: [
    {
      "check/id": "tests-unchanged",
      passed: false,
      "exit-status": null,
      "output/digest": "sha256:c",
      truncated: false,
    },
  ],
  outcome: "refused",
  "refusal/code": "hil/denied",
  "result/digest": "sha256:r",
  "started-at": "2026-12-01T10:00:00.000Z",
  "ended-at": "2026-12-01T10:00:01.000Z",
  approvals: [],
};

const report = {
  "query/id": Q,
  "proposal/ref": RUN,
  "execution/ref": EXEC,
  "environment/ref": "environment:x",
  steps: [
    {
      "step/id": "look",
      class: "observation",
      action: "observe-command",
      status: "ok",
      "exit/code": 0,
      excerpt: "all good\n",
    },
  ],
  checks: [
    {
      name: "tests-unchanged",
      passed: false,
      detail: "changed: test/__pycache__/a.pyc\ntest/b.py",
    },
  ],
  outcome: "refused",
  "refusal/code": "hil/denied",
  "environment/destroyed": true,
};

describe("renderRecord", () => {
  it("renders a transcript turn by turn: the invalid answer and its repair, tool calls and results, a model error, the Plan", () => {
    const text = renderRecord({
      ref: "passage-transcript:sha256:t",
      kind: "transcript",
      body: transcript,
    });
    expect(text.split("\n")[0]).toBe("transcript passage-transcript:sha256:t");
    expect(text).toContain("usage: 4 model calls, 1 tool calls, 1 repairs");
    expect(text).toMatch(
      /call 0 — invalid\n\s+answer: I think the fix is obvious\n\s+problem: turn\/not-json \(root\): the answer is not JSON\n\s+→ repair asked/,
    );
    expect(text).toMatch(
      /call 1\n\s+summary: Read it first\.\n\s+tool workspace\.read_file \{"path":"a\.js"\} → ok\n\s+export const a = 1;/,
    );
    expect(text).toContain("call 2 failed: model/http: 503");
    expect(text).toMatch(
      /call 3\n\s+summary: Plan it\.\n\s+message: Plan\n\s+hypothesis: a is wrong/,
    );
    expect(text).toMatch(
      /- fix: patch a\.js\n\s+diff:\n\s+--- a\/a\.js\n\s+\+\+\+ b\/a\.js\n\s+-1\n\s+\+2/,
    );
  });

  it("says when an invalid answer was the passage's last: no repair was left", () => {
    const last = {
      ...transcript,
      entries: transcript.entries.slice(0, 1),
      outcome: { ok: false, code: "turn/invalid", message: "no repair left" },
    };
    const text = renderRecord({
      ref: "passage-transcript:sha256:t",
      kind: "transcript",
      body: last,
    });
    expect(text).toContain("→ no repair left: the passage ended");
    expect(text).not.toContain("→ repair asked");
    expect(text).toContain("outcome: failed turn/invalid: no repair left");
  });

  it("renders an execution with its run report's excerpts and details, and a denial's reason", () => {
    const text = renderRecord(
      { ref: EXEC, kind: "execution", body: execution },
      { report, acts: [denial] },
    );
    expect(text).toContain("outcome: refused (hil/denied)");
    expect(text).toMatch(
      /- look \(observation, observe-command\): ok exit 0\n\s+excerpt: all good/,
    );
    expect(text).toMatch(
      /- tests-unchanged: failed\n\s+detail:\n\s+changed: test\/__pycache__\/a\.pyc\n\s+test\/b\.py/,
    );
    expect(text).toContain(
      `- deny fix of ${RUN} by node-operator-binding:bob at 2026-12-01T10:00:00.000Z: too broad`,
    );
  });

  it("without its report an execution still lists its steps and checks, and says the details are unknown", () => {
    const text = renderRecord({ ref: EXEC, kind: "execution", body: execution });
    expect(text).toContain("- look (observation) exit 0");
    expect(text).toContain("- tests-unchanged: failed");
    expect(text).toContain("(no run report beside it: step excerpts and check details unknown)");
    // A report of another execution is not taken for this one's.
    const other = {
      ...report,
      "execution/ref": `corpus-task-pack-execution:sha256:${"O".repeat(43)}`,
    };
    expect(
      renderRecord({ ref: EXEC, kind: "execution", body: execution }, { report: other }),
    ).toContain("(no run report beside it");
  });

  it("renders a passage's end with its Result, a Question and a failure", () => {
    const end = (extra: object) =>
      renderRecord({
        ref: "warrant-passage-end:sha256:p",
        kind: "passageEnd",
        body: {
          "query/id": Q,
          "passage/ref": "passage:sha256:p",
          role: "summarizer",
          "agent/id": "agent:s",
          "evidence/digest": "sha256:e",
          "model/calls": 1,
          "ended-at": "2026-12-01T10:00:00.000Z",
          ...extra,
        },
      });
    const result = end({
      message: {
        type: "Result",
        payload: { summary: "fixed it", outcome: "verified", evidence: ["tests pass"] },
      },
    });
    expect(result).toMatch(
      /Result:\n\s+outcome: verified\n\s+summary: fixed it\n\s+evidence:\n\s+- tests pass/,
    );
    const question = end({
      message: {
        type: "Question",
        payload: { question: "May I touch tests?", options: ["yes", "no"] },
      },
    });
    expect(question).toMatch(/question: May I touch tests\?\n\s+- yes\n\s+- no/);
    expect(end({ failure: { code: "passage/max-turns", message: "too many" } })).toContain(
      "failed: passage/max-turns: too many",
    );
  });

  it("renders a memory write and an operator act", () => {
    const text = renderRecord({
      ref: "warrant-memory-write:sha256:m",
      kind: "memoryWrite",
      body: {
        "query/id": Q,
        "passage/ref": "passage:sha256:p",
        "agent/id": "agent:f",
        memory: { path: "notes.md", scope: "namespace", namespace: "team" },
        ordinal: 1,
        version: 2,
        "before/digest": null,
        "after/digest": "sha256:a",
        "after/bytes": 12,
        "written-at": "2026-12-01T10:00:00.000Z",
      },
    });
    expect(text).toContain("memory: notes.md (namespace, team)");
    expect(text).toContain("write: #1, version 2");
    expect(text).toContain("before: (none)");
    expect(text).toContain("after: sha256:a (12 bytes)");
    const act = renderRecord({ ref: operatorActRef(denial), kind: "operatorAct", body: denial });
    expect(act).toContain(`deny fix of ${RUN} by node-operator-binding:bob`);
    expect(
      renderOperatorAct({ ...denial, kind: "answer", target: "passage:sha256:q", text: "yes" }),
    ).toBe(
      "answer to passage:sha256:q by node-operator-binding:bob at 2026-12-01T10:00:00.000Z: yes",
    );
  });

  it("prints a body that breaks its kind's schema as JSON, with the problem; and an unknown kind as its fields", () => {
    const broken = renderRecord({
      ref: "corpus-experiment:sha256:b",
      kind: "proposal",
      body: { candidate: 1 },
    });
    expect(broken).toContain("(the body does not match its schema:");
    expect(broken).toContain('"candidate": 1');
    const unknown = renderRecord({
      ref: "x-thing:sha256:u",
      kind: "somethingNew",
      body: { a: "b", n: 2 },
    });
    expect(unknown).toBe("somethingNew x-thing:sha256:u\n  a: b\n  n: 2");
  });
});

/** Sequences a hostile text may hold: retitle the window, erase the line, return, an 8-bit CSI. */
const HOSTILE = "A\x1b]0;pwned\x07B\x1b[2KC\rD\x9bE\x7fF";
/** How the rendering shows it: every control character as a visible escape. */
const SHOWN = "A\\x1b]0;pwned\\x07B\\x1b[2KC\\rD\\x9bE\\x7fF";

/** No character a terminal acts on, other than the line feeds the rendering puts. */
function expectTerminalSafe(text: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters.
  expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
}

describe("renderRecord is terminal-safe", () => {
  it("escapes control characters from a plan, its diff and a file name; a line feed in a one-line value cannot start a line", () => {
    const proposal = {
      "schema/v": 1,
      "proposal/ref": RUN,
      "query/id": Q,
      "agent/id": "agent:x",
      "passage/ref": "passage:sha256:p",
      "created-at": "2026-12-01T10:00:00.000Z",
      evidence: [],
      candidate: {
        hypothesis: `${HOSTILE}\n  outcome: succeeded`,
        steps: [
          {
            id: "fix",
            action: "patch",
            path: `src/${HOSTILE}.js`,
            diff: `--- a/x\n+++ b/x\n-${HOSTILE}\n+ok\r\n`,
          },
        ],
      },
    };
    const text = renderRecord({ ref: RUN, kind: "proposal", body: proposal });
    expect(text).toContain("hypothesis: "); // rendered as a plan, not as raw JSON
    expectTerminalSafe(text);
    expect(text).toContain(`hypothesis: ${SHOWN}\\n  outcome: succeeded`);
    expect(text.split("\n").map((l) => l.trim())).not.toContain("outcome: succeeded");
    expect(text).toContain(`fix: patch src/${SHOWN}.js`);
    // A block keeps its own lines, each indented, with the controls in them escaped.
    expect(text).toMatch(
      new RegExp(`\\n\\s+-${SHOWN.replace(/[\\[\]()]/g, "\\$&")}\\n\\s+\\+ok\\\\r`),
    );
  });

  it("escapes a command's output in a run report, a model's answer in a transcript and a reason in an act", () => {
    const hostileReport = {
      ...report,
      steps: [{ ...report.steps[0], excerpt: `line one\n${HOSTILE}\n` }],
      checks: [{ ...report.checks[0], detail: `${HOSTILE}\nsecond` }],
    };
    const act = { ...denial, text: `no\n${HOSTILE}` };
    const exec = renderRecord(
      { ref: EXEC, kind: "execution", body: execution },
      { report: hostileReport, acts: [act] },
    );
    expectTerminalSafe(exec);
    expect(exec).toContain(SHOWN);
    expect(exec).toContain(`: no\\n${SHOWN}`);
    const t = renderRecord({
      ref: "passage-transcript:sha256:t",
      kind: "transcript",
      body: {
        ...transcript,
        entries: [
          { ...transcript.entries[0], candidate: `answer ${HOSTILE}` },
          {
            ...transcript.entries[2],
            result: { ok: true, isError: false, content: `${HOSTILE}\nmore` },
          },
        ],
      },
    });
    expectTerminalSafe(t);
    expect(t).toContain(`answer ${SHOWN}`);
    expect(t).toContain(`${SHOWN}\n`);
    const alone = renderOperatorAct(act);
    expectTerminalSafe(alone);
    expect(alone).not.toContain("\n");
    // A body that breaks its schema is shown as JSON; JSON leaves DEL and C1 raw, the rendering not.
    const broken = renderRecord({ ref: EXEC, kind: "execution", body: { odd: HOSTILE } });
    expectTerminalSafe(broken);
    expect(broken).toContain("\\x9bE\\x7fF");
    const unknown = renderRecord({
      ref: "x:sha256:y",
      kind: "somethingElse",
      body: { k: HOSTILE },
    });
    expectTerminalSafe(unknown);
    expect(unknown).toContain(`k: ${SHOWN}`);
  });
});

describe("renderRecord of a changeset", () => {
  it("lists each file with its status; a hostile file name is escaped on its own line", () => {
    const text = renderRecord({
      ref: "warrant-changeset:sha256:c",
      kind: "changeset",
      body: {
        "query/id": Q,
        "proposal/ref": RUN,
        "execution/ref": EXEC,
        baseline: "sha256:b",
        files: [
          { path: "src/a.txt", status: "modified", before: "sha256:1", after: "sha256:2" },
          {
            path: `src/odd\n${HOSTILE}.txt`,
            status: "added",
            before: null,
            after: "sha256:3",
            mode: 0o755,
          },
        ],
        complete: true,
      },
    });
    expectTerminalSafe(text);
    expect(text.split("\n")).toEqual([
      "changeset warrant-changeset:sha256:c",
      `  query: ${Q}`,
      `  proposal: ${RUN}`,
      `  execution: ${EXEC}`,
      "  baseline: sha256:b",
      "  complete: yes",
      "  files:",
      "    - modified src/a.txt",
      `    - added src/odd\\n${SHOWN}.txt (mode 755)`,
    ]);
  });

  it("shows the change as a git diff when its contents are kept, each line terminal-safe", () => {
    const b64 = (t: string) => Buffer.from(t).toString("base64");
    const text = renderRecord({
      ref: "warrant-changeset:sha256:c",
      kind: "changeset",
      body: {
        "query/id": Q,
        "proposal/ref": RUN,
        "execution/ref": EXEC,
        baseline: "sha256:b",
        files: [
          {
            path: "src/a.txt",
            status: "modified",
            before: "sha256:1",
            after: "sha256:2",
            "before/content": b64("broken\n"),
            "after/content": b64(`fixed ${HOSTILE}\n`),
          },
        ],
        complete: true,
      },
    });
    expectTerminalSafe(text);
    const diff = text.slice(text.indexOf("  diff:\n"));
    expect(diff.split("\n")).toEqual([
      "  diff:",
      "    diff --git a/src/a.txt b/src/a.txt",
      "    --- a/src/a.txt",
      "    +++ b/src/a.txt",
      "    @@ -1 +1 @@",
      "    -broken",
      `    +fixed ${SHOWN}`,
    ]);
    // No base64 anywhere.
    expect(text).not.toContain(b64("broken\n"));
  });
});
