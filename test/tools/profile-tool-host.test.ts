// The ToolHost contract (tool-host-contract.ts) on the task pack's observation command profiles,
// each call contained by the detected backend (skipped, with the reason, where none works; CI
// requires one: WARRANT_REQUIRE_BACKENDS).
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { createProfileTools } from "../../src/adapters/tools/profile-tools.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
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

const base = mkdtempSync(path.join(tmpdir(), "warrant-profile-contract-"));
const baseline = path.join(base, "baseline");
const envRoot = path.join(base, "envs");
mkdirSync(baseline);
mkdirSync(envRoot);
// Contained commands may run as another uid: it must reach its environment's directory.
chmodSync(base, 0o711);
chmodSync(envRoot, 0o711);
writeFileSync(path.join(baseline, "note.txt"), "original\n");
afterAll(() => rmSync(base, { recursive: true, force: true }));

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
