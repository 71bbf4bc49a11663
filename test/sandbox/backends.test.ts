// The Sandbox port's contract (warrant/testing's sandboxContract) and the containment contract on
// every backend this machine has, in each environment mode (overlay and copy). A backend that fails its probe here is skipped with the probe's reason in the suite's
// name — unless WARRANT_REQUIRE_BACKENDS (e.g. "bwrap,unshare") names it, in which case its
// absence fails; overlay mode likewise unless WARRANT_REQUIRE_OVERLAY=1.
import * as vitest from "vitest";
import { expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { sandboxContract } from "../../src/testing.js";
import { containmentContract } from "./containment-contract.js";

const required = new Set((process.env.WARRANT_REQUIRE_BACKENDS ?? "").split(",").filter(Boolean));
const overlayRequired = process.env.WARRANT_REQUIRE_OVERLAY === "1";

for (const backend of ["bwrap", "unshare"] as const) {
  for (const layers of ["overlay", "copy"] as const) {
    const found = await detectSandbox({ only: backend, layers });
    const reason = found.ok ? "" : (found.errors[0]?.message ?? "probe failed");
    if (!found.ok && (required.has(backend) || (layers === "overlay" && overlayRequired))) {
      it(`${backend} (${layers}) is required here and works`, () => {
        expect(reason).toBe("");
      });
    }
    const sandbox = found.ok ? found.value : undefined;
    sandboxContract(`${backend}, ${layers}`, async () => sandbox, vitest, reason);
    containmentContract(`${backend}, ${layers}`, sandbox, reason, layers);
  }
}
