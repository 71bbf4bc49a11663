// Passages get the task pack's observation command profiles as tools (docs/spec/turns.md), run contained in
// the host's sandbox: an implementer runs the demo's failing tests, reads their output, then plans;
// without a sandbox the profiles are not offered at all.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { createProfileTools } from "../../src/adapters/tools/profile-tools.js";
import { createWorkspaceTools } from "../../src/adapters/tools/workspace-tools.js";
import type { PassageRequest } from "../../src/runtime/context.js";
import { createPassageTools } from "../../src/runtime/passage-tools.js";
import { accept, harness, type Payload, plan, recordsOf, result, turn } from "./harness.js";

const Plan = (name: string) => turn("Plan", plan(name));
const runTests: Payload = {
  kind: "tool_calls",
  summary: "run the tests first",
  tool_calls: [{ name: "profile.run-tests", arguments_json: "{}" }],
  message: null,
};

interface ToolCallEntry {
  kind: string;
  name?: string;
  result?: { ok: boolean; isError: boolean; content: string };
}

describe("observation command profiles in passages", () => {
  it("an implementer runs profile.run-tests on the demo pack, reads the failing output, then plans", async () => {
    const h = await harness(
      { implementer: [runTests, Plan("good-fix")], reviewer: [accept], summarizer: [result] },
      { profileTools: true },
    );
    const r = await h.drive();
    expect(r.document.stop?.reason).toBe("succeeded");

    const [model] = h.models.implementer ?? [];
    const offered = model?.requests[0]?.tools?.map((t) => t.name) ?? [];
    expect(offered).toEqual(
      expect.arrayContaining([
        "workspace.read_file",
        "profile.run-tests",
        "profile.show-file",
        "profile.probe-network",
      ]),
    );

    // The transcript keeps the call and the failing test run's output.
    const transcripts = (await recordsOf(h, "transcript")).map(
      (t) => t.body as { role: string; entries: ToolCallEntry[] },
    );
    const calls = transcripts
      .filter((t) => t.role === "implementer")
      .flatMap((t) => t.entries.filter((e) => e.kind === "tool-call"));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      name: "profile.run-tests",
      result: { ok: true, isError: true },
    });
    const output = calls[0]?.result?.content ?? "";
    expect(output).toContain("$ node --test test/");
    expect(output).toContain("exit: 1");
    expect(output).toContain("not ok 2 - collapses repeated separators");

    // The model read that output before it planned.
    const fedBack = model?.requests[1]?.conversation.find((c) => c.kind === "tool-results");
    expect(JSON.stringify(fedBack)).toContain("not ok 2 - collapses repeated separators");
    expect(model?.requests).toHaveLength(2);

    // The call's environment is gone; only the run's own environments ever lived there (beside
    // the baseline the drive pinned for them).
    const left = readdirSync(h.envRoot).filter((n) => !n.startsWith("warrant-base-"));
    expect(left).toEqual([]);
  });

  it("without a sandbox the profiles are not offered; with one, workspace reads and profiles are, once per pack", async () => {
    const h = await harness({});
    const request: PassageRequest = {
      query: h.query,
      role: "implementer",
      agentId: h.pack.agents.implementer?.id ?? "",
      passageRef: "passage:test",
      evidence: "",
      pack: h.pack,
      priorCalls: 0,
    };
    const workspace = (root: string) => createWorkspaceTools({ root });

    const bare = createPassageTools({ workspace });
    const none = await bare.toolsFor(request);
    expect(none.ok && none.value.specs().map((s) => s.name)).toEqual([
      "workspace.read_file",
      "workspace.list_dir",
      "workspace.search_text",
    ]);

    const sandbox = createBwrapSandbox({ tempRoot: h.envRoot });
    const contained = createPassageTools({
      workspace,
      profiles: (commands, baselineDir) => createProfileTools({ commands, baselineDir, sandbox }),
    });
    const first = await contained.toolsFor(request);
    const again = await contained.toolsFor({ ...request, role: "reviewer", passageRef: "p:2" });
    expect(first.ok && first.value.specs().map((s) => s.name)).toEqual([
      "workspace.read_file",
      "workspace.list_dir",
      "workspace.search_text",
      "profile.run-tests",
      "profile.show-file",
      "profile.probe-network",
    ]);
    // The same host for every passage over this pack: its registry compiles once.
    expect(first.ok && again.ok && first.value === again.value).toBe(true);
  });
});
