// The sandbox contract on every backend this machine has. A backend that fails its probe here is
// skipped with the probe's reason in the suite's name.
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { sandboxContract } from "./sandbox-contract.js";

for (const backend of ["bwrap", "unshare"] as const) {
  const found = await detectSandbox({ only: backend });
  sandboxContract(
    backend,
    found.ok ? found.value : undefined,
    found.ok ? "" : (found.errors[0]?.message ?? "probe failed"),
  );
}
