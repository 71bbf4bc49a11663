// The hand-written payload and turn types follow their schemas: typed examples validate.
import { describe, expect, expectTypeOf, it } from "vitest";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { payloadValidators } from "../../src/core/turn/payload-schemas.js";
import type { PayloadOf, PlanStep } from "../../src/core/turn/payloads.js";
import type { ModelTurn, ValidTurn } from "../../src/core/turn/types.js";

const examples: { [K in keyof PayloadOf]: PayloadOf[K] } = {
  Plan: {
    hypothesis: "h",
    steps: [
      { id: "1", action: "observe", profile: "p", args: {}, read: ["a"] },
      { id: "2", action: "patch", path: "a", diff: "d" },
      { id: "3", action: "patch", path: "a", content: "c" },
    ],
    expected_checks: ["c"],
  },
  Question: { question: "q", options: ["a"] },
  Result: { summary: "s", outcome: "o", evidence: [] },
  Verdict: {
    decision: "request-regeneration",
    findings: [{ severity: "critical", claim: "c", evidence: ["e"] }],
  },
  Finding: { severity: "info", claim: "c", evidence: [] },
  DeadEnd: { reason: "r", tried: [] },
};

describe("payload and turn types", () => {
  it("every typed payload example validates against its schema", () => {
    for (const [type, payload] of Object.entries(examples)) {
      expect(payloadValidators()[type as keyof PayloadOf](payload), type).toBe(true);
    }
  });

  it("a typed ModelTurn validates against the seed", () => {
    const turn: ModelTurn = {
      kind: "message",
      summary: "",
      tool_calls: [],
      message: { type: "Finding", payload_json: "{}", paper_ref: null },
    };
    expect(contractValidators().modelTurn(turn)).toBe(true);
  });

  it("has the documented shapes", () => {
    expectTypeOf<PlanStep["action"]>().toEqualTypeOf<string>();
    expectTypeOf<ValidTurn["calls"][number]["args"]>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<ModelTurn["kind"]>().toEqualTypeOf<"tool_calls" | "message">();
  });
});
