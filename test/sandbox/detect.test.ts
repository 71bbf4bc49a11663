import { describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";

describe("detectSandbox", () => {
  it("refuses with environment/not-contained when no backend works", async () => {
    const r = await detectSandbox({
      bwrapPath: "/nonexistent/bwrap",
      unsharePath: "/nonexistent/unshare",
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]?.code).toBe("environment/not-contained");
    expect(Object.keys(r.errors[0]?.detail?.reasons as object).sort()).toEqual([
      "bwrap",
      "unshare",
    ]);
  });

  it("refuses when the only backend allowed does not work", async () => {
    const r = await detectSandbox({ only: "unshare", unsharePath: "/nonexistent/unshare" });
    expect(r.ok ? "" : r.errors[0]?.code).toBe("environment/not-contained");
  });

  it("falls back to unshare when bwrap is missing, and prefers bwrap otherwise", async () => {
    const unshareWorks = await detectSandbox({ only: "unshare" });
    const bwrapWorks = await detectSandbox({ only: "bwrap" });
    const fallback = await detectSandbox({ bwrapPath: "/nonexistent/bwrap" });
    expect(fallback.ok && fallback.value.backend).toBe(unshareWorks.ok ? "unshare" : false);
    const first = await detectSandbox();
    const expected = bwrapWorks.ok ? "bwrap" : unshareWorks.ok ? "unshare" : false;
    expect(first.ok && first.value.backend).toBe(expected);
    const preferred = await detectSandbox({ prefer: "unshare" });
    expect(preferred.ok && preferred.value.backend).toBe(unshareWorks.ok ? "unshare" : expected);
  });
});
