// A model left without a valid answer: the passage's failure names the answer that was refused
// (code, JSON Pointer, why), not only the model's error; the transcript says a repair was asked
// when one was sent, even though the call that followed failed.
import { describe, expect, it } from "vitest";
import { createScriptedModel } from "../../src/adapters/models/scripted-model.js";
import { renderRecord } from "../../src/library/render-record.js";
import { type PassageInput, runPassage } from "../../src/runtime/passage.js";
import { transcriptRecord } from "../../src/runtime/passage-transcript.js";
import { addHost, addRegistry, addTurn, LIMITS } from "./helpers.js";

const verdict = (decision: string) => ({
  kind: "message",
  summary: "judged",
  tool_calls: [],
  message: {
    type: "Verdict",
    payload_json: JSON.stringify({ decision, findings: [] }),
    paper_ref: null,
  },
});

function input(answers: readonly unknown[]): PassageInput {
  return {
    role: "reviewer",
    agentId: "agent:r",
    system: "You review plans.",
    evidence: [{ ref: "task:t", content: "Review it." }],
    registry: addRegistry(),
    toolHost: addHost(),
    provider: createScriptedModel(answers as never[]),
    limits: LIMITS,
    repairs: 2,
  };
}

describe("a passage whose model runs out after a refused answer", () => {
  it("fails with the model's code, its message naming the refused answer's problem", async () => {
    const out = await runPassage(input([verdict("approve")]));
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.code).toBe("model/script-exhausted");
    expect(out.message).toMatch(/^the scripted model has no answer left/);
    expect(out.message).toContain(
      '; its last answer was refused: turn/payload-invalid /message/payload_json: the Verdict payload: /decision: "approve" is not one of accept, reject, request-regeneration',
    );
    expect(out.errors[0]).toMatchObject({
      code: "turn/payload-invalid",
      path: "/message/payload_json",
    });
    expect(out.transcript.outcome).toMatchObject({ ok: false, code: "model/script-exhausted" });
  });

  it("says nothing of a refused answer the model since answered validly", async () => {
    const out = await runPassage(input(["not json", addTurn(1, 2)]));
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.code).toBe("model/script-exhausted");
    expect(out.message).not.toContain("refused");
  });

  it("its transcript says the repair was asked, not that none was left", async () => {
    const out = await runPassage(input([verdict("approve")]));
    const text = renderRecord(transcriptRecord("query:q", out.transcript));
    expect(text).toContain("→ repair asked");
    expect(text).not.toContain("no repair left");
    expect(text).toContain("call 1 failed: model/script-exhausted");
  });
});
