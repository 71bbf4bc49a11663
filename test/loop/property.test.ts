// Property tests (1 000 random command sequences a run); the long run takes 20 000.
import { describe, expect, it } from "vitest";
import { runLoopProperties } from "./loop-properties.js";

describe("loop properties", () => {
  it("hold for 1 000 random command sequences", () => {
    const seen = runLoopProperties(1000);
    // The generator reaches every kind of outcome, so the properties above were exercised.
    for (const what of [
      "appended open",
      "appended charge-passage",
      "appended open-cycle",
      "appended admit-run",
      "appended conclude",
      "appended renew",
      "appended cancel",
      "replayed charge-passage",
      "replayed admit-run",
      "replayed cancel",
      "loop/not-opened",
      "loop/not-open",
      "loop/deadline-passed",
      "loop/budget-exhausted",
      "loop/cycle-missing",
      "loop/run-missing",
      "loop/already-concluded",
      "loop/key-conflict",
      "loop/not-operator",
      "loop/renewal-invalid",
    ]) {
      expect(seen.get(what) ?? 0, what).toBeGreaterThan(0);
    }
  });
});
