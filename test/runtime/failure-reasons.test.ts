// Failures say why (real bwrap sandbox, scripted models): a check whose command writes only to
// stderr carries that text in its detail — in the check event and record, in the live view, and in
// the evidence of the implementer's next request — and a patch that does not apply has its reason
// on the step, printed under the step by the live view.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLiveView } from "../../src/cli/live-view.js";
import type { ConversationEntry } from "../../src/core/ports/model-provider.js";
import { FIX_PLAN, STALE_PLAN, STDERR, writeFailingPack } from "../helpers/failing-pack.js";
import { accept, harness, recordsOf, result } from "./harness.js";

const work = mkdtempSync(path.join(tmpdir(), "warrant-reasons-"));
chmodSync(work, 0o755);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const texts = (conversation: readonly ConversationEntry[], length: number) =>
  conversation
    .slice(0, length)
    .flatMap((e) => (e.kind === "user" ? [e.text] : []))
    .join("\n");

describe("failures say why", () => {
  it("a stderr-only check's text is in its detail, the live view and the implementer's next request; a stale diff's reason is under its step", async () => {
    const h = await harness(
      { implementer: [STALE_PLAN, FIX_PLAN], reviewer: [accept, accept], summarizer: [result] },
      { pack: writeFailingPack(work) },
    );
    const outcome = await h.drive();
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("succeeded");

    const detail = `run-tests exited 1: ${STDERR}`;
    const checks = h.events.flatMap((e) => (e.kind === "check" ? [e] : []));
    expect(checks.map((c) => [c.name, c.passed, c.detail])).toEqual([
      ["tests-pass", false, detail],
      ["tests-pass", true, "run-tests exited 0: "],
    ]);
    const [report] = await recordsOf(h, "runReport");
    expect(JSON.stringify(report?.body)).toContain(JSON.stringify(detail).slice(1, -1));

    // The stale diff failed with its reason on the step's event.
    const stepEnd = h.events.find((e) => e.kind === "step-end" && e.stepId === "stale-diff");
    expect(stepEnd).toMatchObject({ status: "failed" });
    const reason = stepEnd?.kind === "step-end" ? stepEnd.reason : undefined;
    expect(reason).toMatch(/hunk 1 .*does not apply/);

    // The live view prints the reason under the step and the stderr under the check.
    let shown = "";
    const view = createLiveView(
      (t) => {
        shown += t;
      },
      { tty: false, clock: h.clock },
    );
    for (const e of h.events) view.emit(e);
    view.close();
    expect(shown).toContain(`  step stale-diff patch: failed\n    ${reason}`);
    expect(shown).toContain(
      "  check tests-pass: failed\n    run-tests exited 1: FAIL: src/a.txt says broken\n    expected: fixed",
    );

    // The implementer's second passage was given the same detail in its evidence.
    const implementer = h.models.implementer ?? [];
    const requests = implementer.flatMap((m) => m.requests);
    expect(requests.length).toBeGreaterThanOrEqual(2);
    const first = requests[0];
    const next = requests.at(-1);
    expect(first && texts(first.conversation, first.length)).not.toContain(STDERR);
    expect(next && texts(next.conversation, next.length)).toContain(
      `check tests-pass: failed — ${detail}`,
    );
  }, 120_000);
});
