// The sandbox contract on every backend this machine has. A backend that fails its probe here is
// skipped with the probe's reason in the suite's name — unless WARRANT_REQUIRE_BACKENDS (e.g.
// "bwrap,unshare") names it, in which case its absence fails.
import { expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { sandboxContract } from "./sandbox-contract.js";

const required = new Set((process.env.WARRANT_REQUIRE_BACKENDS ?? "").split(",").filter(Boolean));

for (const backend of ["bwrap", "unshare"] as const) {
  const found = await detectSandbox({ only: backend });
  const reason = found.ok ? "" : (found.errors[0]?.message ?? "probe failed");
  if (!found.ok && required.has(backend)) {
    it(`${backend} is required here (WARRANT_REQUIRE_BACKENDS) and works`, () => {
      expect(reason).toBe("");
    });
  }
  sandboxContract(backend, found.ok ? found.value : undefined, reason);
}
