// Approve and deny name a run by its full ref or a unique prefix (8+ characters, of the ref or of its
// digest); a denial records its reason. Refusals: too short or unknown (loop/run-missing), shared by
// several runs (loop/run-ambiguous).
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import type { LedgerRecord } from "../../src/core/loop/ledger-store.js";
import { type ActContext, decideStep } from "../../src/library/operator-acts.js";
import { opened } from "../store/facts.js";

const Q = "query:prefix";
const ref = (tail: string) => `corpus-experiment:sha256:${tail.padEnd(43, "A")}`;
const proposal = (r: string): LedgerRecord => ({
  ref: r,
  kind: "proposal",
  query: Q,
  body: { candidate: { hypothesis: "h", steps: [{ id: "read" }, { id: "fix" }] } },
});

async function context(): Promise<ActContext> {
  const store = new MemoryLedgerStore();
  await store.append({ query: Q, expectedLastSequence: 0, facts: [opened(Q)] });
  await store.putRecords([
    proposal(ref("abcdefgh1")),
    proposal(ref("abcdefgh2")),
    proposal(ref("zyxwvuts")),
  ]);
  return { store, operator: "node-operator-binding:alice", now: () => new Date(0) };
}

describe("naming a run by a prefix", () => {
  it("accepts a unique prefix of the digest or of the whole ref, and acts on that run", async () => {
    const c = await context();
    expect(await decideStep(c, "zyxwvuts", "fix", "approve")).toMatchObject({
      ok: true,
      result: "posted",
    });
    expect(await c.store.readOperatorActs(Q)).toMatchObject([
      { kind: "approve", target: `${ref("zyxwvuts")} fix` },
    ]);
    expect(
      await decideStep(c, "corpus-experiment:sha256:abcdefgh1", "fix", "deny", "no"),
    ).toMatchObject({
      ok: true,
    });
    expect((await c.store.readOperatorActs(Q))[1]).toMatchObject({
      kind: "deny",
      target: `${ref("abcdefgh1")} fix`,
      text: "no",
    });
  });

  it("refuses a prefix two runs share (loop/run-ambiguous), naming both", async () => {
    const c = await context();
    const r = await decideStep(c, "abcdefgh", "fix", "approve");
    expect(r).toMatchObject({ ok: false, code: "loop/run-ambiguous" });
    expect(!r.ok && r.message).toContain(ref("abcdefgh1"));
    expect(!r.ok && r.message).toContain(ref("abcdefgh2"));
    expect(await c.store.readOperatorActs(Q)).toEqual([]);
  });

  it("refuses a prefix under 8 characters, or one no run has (loop/run-missing)", async () => {
    const c = await context();
    expect(await decideStep(c, "zyxwvut", "fix", "approve")).toMatchObject({
      ok: false,
      code: "loop/run-missing",
    });
    expect(await decideStep(c, "qqqqqqqqqq", "fix", "approve")).toMatchObject({
      ok: false,
      code: "loop/run-missing",
    });
    expect(await c.store.readOperatorActs(Q)).toEqual([]);
  });
});
