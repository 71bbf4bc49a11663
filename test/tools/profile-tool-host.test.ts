import { describe, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { createProfileTools } from "../../src/adapters/tools/profile-tools.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { containedBaseline } from "./contained-baseline.js";
import { toolHostContract } from "./tool-host-contract.js";

const word = {
  type: "object",
  additionalProperties: false,
  required: ["word"],
  properties: { word: { type: "string", minLength: 1 } },
};
const observe = (argv: string[], args: object) => ({
  effect: "observation",
  argv,
  args,
  timeoutMs: 10_000,
  maxOutputBytes: 65_536,
});

const validated = validateTaskPack({
  schema: "warrant/task-pack.v1",
  name: "profile-contract",
  task: "run the tool host contract",
  workspace: "workspace",
  agents: { implementer: "implementer.json", reviewer: "reviewer.json" },
  commands: {
    say: observe(["echo", "said", "{word}"], word),
    fails: observe(["sh", "-c", "echo trying; echo cannot >&2; exit 3"], {
      type: "object",
      additionalProperties: false,
      properties: {},
    }),
  },
  patchPolicy: { allow: ["**"], maxBytes: 4096 },
  verifier: { timeoutMs: 10_000, checks: [{ name: "fails", command: "fails" }] },
  hil: "none",
  admission: "auto",
  limits: { "max/passages": 4 },
});
if (!validated.ok) throw new Error(JSON.stringify(validated.errors));
const pack = validated.value;

const { baseline, envRoot } = containedBaseline("profile-contract");

const detected = await detectSandbox({ tempRoot: envRoot });

if (detected.ok) {
  const sandbox = detected.value;
  toolHostContract([
    {
      name: `observation profiles (${sandbox.backend})`,
      make: async () =>
        createProfileTools({ commands: pack.commands, baselineDir: baseline, sandbox }),
      good: { name: "profile.say", args: { word: "hello" }, answer: "said hello" },
      badArgs: { name: "profile.say", args: { word: 7 } },
      failing: { name: "profile.fails", args: {} },
    },
  ]);
} else {
  describe("ToolHost contract: observation profiles", () => {
    it.skip(`skipped: no containment backend works here: ${detected.errors[0]?.message ?? "none"}`, () => {});
  });
}
