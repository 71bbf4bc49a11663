// The protocol part of the system prompt: how to answer in each mode, and each role's rules that
// the payload schemas cannot state.
import { describe, expect, it } from "vitest";
import {
  jsonModeInstructions,
  toolModeInstructions,
} from "../../src/adapters/models/instructions.js";
import { ROLES } from "../../src/core/loop/types.js";
import { ROLE_MESSAGE_TYPES } from "../../src/core/turn/types.js";
import { ADD } from "../passage/helpers.js";

describe("protocol instructions", () => {
  it.each(ROLES)("%s: one message ends the passage, named among the role's types", (role) => {
    const types = ROLE_MESSAGE_TYPES[role];
    for (const text of [toolModeInstructions(role, types), jsonModeInstructions(role, types, [])]) {
      expect(text).toContain(
        `Exactly one message ends the passage: one of ${types.join(", ")}, given alone`,
      );
    }
    expect(toolModeInstructions(role, types)).toContain(
      `The tools named ${types.join(", ")} each emit that message: their arguments are its payload.`,
    );
  });

  it("implementer: the plan rules the schema cannot state", () => {
    const text = toolModeInstructions("implementer", ROLE_MESSAGE_TYPES.implementer);
    expect(text).toContain('The first step is an observation: action "observe".');
    expect(text).toContain("only paths the task's patch policy allows");
    expect(text).toContain("Each step's action is one of observe, patch, command");
    expect(text).toContain("A Question stops the loop until an operator answers");
    expect(text).not.toContain("Verdict decisions");
  });

  it("reviewer: what each decision does", () => {
    const text = toolModeInstructions("reviewer", ROLE_MESSAGE_TYPES.reviewer);
    expect(text).toContain('"accept": the proposal goes on to admission and runs.');
    expect(text).toContain('"reject": the proposal is refused');
    expect(text).toContain('"request-regeneration": the implementer is asked for a new proposal');
    expect(text).not.toContain("Plan rules");
  });

  it("adversarial critic and summarizer: what their messages do", () => {
    expect(
      toolModeInstructions("adversarial-critic", ROLE_MESSAGE_TYPES["adversarial-critic"]),
    ).toContain('"high" or "critical", or a DeadEnd, stops the accepted proposal');
    expect(toolModeInstructions("summarizer", ROLE_MESSAGE_TYPES.summarizer)).toContain(
      "The Result reports what the loop established",
    );
  });

  it("JSON mode: the message carries its payload as an object, and the tools are listed", () => {
    const text = jsonModeInstructions("implementer", ROLE_MESSAGE_TYPES.implementer, [ADD]);
    expect(text).toContain('"message":{"type":…,"payload":{…},"paper_ref":null}');
    expect(text).toContain(`- math.add: ${ADD.description}`);
    expect(text).toContain('The first step is an observation: action "observe".');
    expect(jsonModeInstructions("summarizer", ["Result"], [])).toContain("No tools are available.");
  });
});
