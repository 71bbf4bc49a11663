// The loop properties over 20 000 random command sequences (npm run test:long).
import { describe, expect, it } from "vitest";
import { runLoopProperties } from "./loop-properties.js";

describe("loop properties (long)", () => {
  it("hold for 20 000 random command sequences", () => {
    const seen = runLoopProperties(20_000);
    expect(seen.get("appended conclude") ?? 0).toBeGreaterThan(0);
  });
});
