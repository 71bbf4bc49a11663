// The names `--sandbox`, WARRANT_SANDBOX and the library's `sandbox` option take, apart from the
// detection that proves a backend (detect-sandbox.ts): a command reads them to parse its flags.
import type { SandboxBackend } from "../../core/ports/sandbox.js";

/** What `--sandbox`, WARRANT_SANDBOX and the library's `sandbox` option name. */
export type SandboxChoice = "auto" | SandboxBackend;
export const SANDBOX_CHOICES: readonly SandboxChoice[] = ["auto", "bwrap", "unshare"];

export function isSandboxChoice(value: string): value is SandboxChoice {
  return (SANDBOX_CHOICES as readonly string[]).includes(value);
}
