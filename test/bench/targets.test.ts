// The bench report's verdicts: each target read off one run's results against its bound, and the
// peers' figure taken from the fastest peer that measured.
import { describe, expect, it } from "vitest";
import { againstPeers } from "../../bench/suites/peers.js";
import { targetRows } from "../../bench/targets.js";

const verdictOf = (rows: ReturnType<typeof targetRows>, start: string) =>
  rows.find((r) => r.target.startsWith(start));

describe("targetRows", () => {
  it("says met at the bound, missed past it, in the target's direction", () => {
    const rows = targetRows({
      telemetry: { onVsOff: 1.5 },
      sandbox: { bwrap: { ratioP50: 6.01 }, unshare: { ratioP50: 12 } },
      store: {
        concurrentThroughput: { postgres: { ratioToBare: 0.5 } },
        decideAppendPerChargeUs: { postgres: { ratioToBareInsertTransaction: 3.2 } },
      },
      peers: { bestPeerOverWarrant: 29.9 },
      input: { valid: [{ peakOverInput: 30 }, { peakOverInput: 7.7 }] },
    });
    expect(verdictOf(rows, "tracing")).toMatchObject({ measured: 1.5, verdict: "met" });
    expect(verdictOf(rows, "sandboxed `exec true` over a bare spawn, bwrap")).toMatchObject({
      measured: 6.01,
      verdict: "missed",
    });
    expect(verdictOf(rows, "sandboxed `exec true` over a bare spawn, unshare")?.verdict).toBe(
      "met",
    );
    expect(verdictOf(rows, "100 concurrent")).toMatchObject({ direction: "≥", verdict: "met" });
    expect(verdictOf(rows, "one PostgreSQL charge")?.verdict).toBe("missed");
    expect(verdictOf(rows, "the best peer")).toMatchObject({ bound: 30, verdict: "missed" });
    // The largest accepted input is the last of the input suite's valid rows.
    expect(verdictOf(rows, "validation")).toMatchObject({ measured: 7.7, verdict: "met" });
  });

  it("says not measured where a suite did not run or gave no number", () => {
    const rows = targetRows({ passage: { featuresRatiosToFloor: { turns100: "n/a" } } });
    expect(rows.length).toBeGreaterThan(10);
    for (const r of rows) {
      expect(r.verdict).toBe("not measured");
      expect(r).not.toHaveProperty("measured");
    }
  });
});

describe("againstPeers", () => {
  it("compares Warrant's memory-store row with the fastest peer that measured", () => {
    const figures = againstPeers([
      { system: "warrant", store: "sqlite", n: 100, usPerStepWarm: 40 },
      { system: "warrant", store: "memory", n: 100, usPerStepWarm: 20 },
      { system: "openai-agents", version: "0.14.3", n: 100, usPerStepWarm: 2000 },
      { system: "langgraph", n: 100, error: "checks failed" },
      { system: "ai", version: "6.0.325", n: 100, usPerStepWarm: 700 },
    ]);
    expect(figures).toMatchObject({
      warrantUsPerStepWarm: 20,
      bestPeer: { system: "ai", version: "6.0.325" },
      bestPeerUsPerStepWarm: 700,
      bestPeerOverWarrant: 35,
    });
  });

  it("gives no ratio when Warrant's row failed", () => {
    const figures = againstPeers([
      { system: "warrant", store: "memory", n: 100, error: "voided" },
      { system: "ai", n: 100, usPerStepWarm: 700 },
    ]);
    expect(figures.bestPeerOverWarrant).toBeUndefined();
    expect(figures.warrantUsPerStepWarm).toBeUndefined();
  });
});
