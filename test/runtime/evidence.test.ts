// The evidence a passage reads: the runtime's own text states what the role is asked for, and the
// task-specific guidance comes from the pack, to its role alone.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadPack } from "../../src/adapters/fs/pack-loader.js";
import type { CycleView } from "../../src/core/loop/next-action.js";
import {
  criticEvidence,
  implementerEvidence,
  reviewerEvidence,
  summarizerEvidence,
} from "../../src/runtime/evidence.js";
import { readLedger } from "../../src/runtime/ledger-view.js";
import type { LoadedPack } from "../../src/runtime/task-pack.js";
import { repoRoot } from "../helpers/cli.js";
import { fixtures } from "./harness.js";

async function load(file: string): Promise<LoadedPack> {
  const r = await loadPack(file);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

const empty = readLedger([], [], []);
const cycle: CycleView = {
  proposalRef: "corpus-experiment:p",
  reviews: [],
  admitted: false,
  stepsStarted: [],
};
const all = (pack: LoadedPack) => ({
  implementer: implementerEvidence(pack.pack, empty),
  reviewer: reviewerEvidence(pack.pack, empty, cycle),
  "adversarial-critic": criticEvidence(pack.pack, empty, cycle),
  summarizer: summarizerEvidence(pack.pack, empty, cycle),
});

describe("passage evidence", () => {
  it("a pack without guidance gets only the runtime's protocol lines, nothing task-specific", async () => {
    const pack = await load(path.join(fixtures, "task-pack.json"));
    expect(pack.pack.guidance).toEqual({});
    const texts = all(pack);
    for (const text of Object.values(texts)) {
      expect(text).not.toContain("special-cases");
      expect(text).not.toContain("Guidance for");
    }
    expect(texts.reviewer.endsWith("Answer with a Verdict.")).toBe(true);
  });

  it("the demo's guidance reaches the role it names, last, and no other role", async () => {
    const pack = await load(path.join(repoRoot, "examples/fix-failing-test/task-pack.json"));
    const texts = all(pack);
    const reviewer = pack.pack.guidance.reviewer ?? "";
    expect(reviewer).toContain("not one that special-cases the tests");
    expect(texts.reviewer.endsWith(`Guidance for the reviewer:\n${reviewer}`)).toBe(true);
    const implementer = pack.pack.guidance.implementer ?? "";
    expect(texts.implementer.endsWith(`Guidance for the implementer:\n${implementer}`)).toBe(true);
    expect(texts.implementer).not.toContain(reviewer);
    expect(texts.summarizer).not.toContain("Guidance for");
    expect(texts["adversarial-critic"]).not.toContain("Guidance for");
  });
});
