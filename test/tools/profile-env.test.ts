// A command profile's `env` reaches the command when an agent calls it as a passage tool, on the
// real containment backend (beside the fixed minimal environment; HOME stays the environment's).
import { describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { createProfileTools } from "../../src/adapters/tools/profile-tools.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { containedBaseline } from "./contained-baseline.js";

const noArgs = { type: "object", additionalProperties: false, properties: {} };
const validated = validateTaskPack({
  schema: "warrant/task-pack.v1",
  name: "profile-env",
  task: "print the variables a profile sets",
  workspace: "workspace",
  agents: { implementer: "implementer.json", reviewer: "reviewer.json" },
  commands: {
    "with-env": {
      effect: "observation",
      argv: ["sh", "-c", 'echo "greeting=$GREETING bytecode=$PYTHONDONTWRITEBYTECODE home=$HOME"'],
      args: noArgs,
      timeoutMs: 10_000,
      maxOutputBytes: 4096,
      env: { GREETING: "hello there", PYTHONDONTWRITEBYTECODE: "1" },
    },
    "without-env": {
      effect: "observation",
      argv: ["sh", "-c", 'test -z "$GREETING" && echo greeting=unset'],
      args: noArgs,
      timeoutMs: 10_000,
      maxOutputBytes: 4096,
    },
  },
  patchPolicy: { allow: ["**"], maxBytes: 4096 },
  verifier: { timeoutMs: 10_000, checks: [{ name: "env", command: "with-env" }] },
  hil: "none",
  admission: "auto",
  limits: { "max/passages": 4 },
});
if (!validated.ok) throw new Error(JSON.stringify(validated.errors));
const pack = validated.value;
const { baseline, envRoot } = containedBaseline("profile-env");
const detected = await detectSandbox({ tempRoot: envRoot });

describe.skipIf(!detected.ok)("a profile's env", () => {
  it("is set for its command and no other", async () => {
    if (!detected.ok) return;
    const tools = createProfileTools({
      commands: pack.commands,
      baselineDir: baseline,
      sandbox: detected.value,
    });
    const r = await tools.call("profile.with-env", {});
    expect(r).toMatchObject({ ok: true, isError: false });
    expect(r.content).toContain("greeting=hello there bytecode=1 home=/");
    expect(r.content).not.toMatch(/home=\s/);
    const other = await tools.call("profile.without-env", {});
    expect(other.content).toContain("greeting=unset");
  });
});
