// The `--sandbox bwrap|unshare|auto` option of every command that makes environments (run, resume,
// demo, worker), with WARRANT_SANDBOX as its default: a named backend that does not work here is
// `sandbox/unavailable` (exit 2) before anything is opened, never a quiet fallback.

import type { Sandbox } from "../index.js";
import { isSandboxChoice, SANDBOX_CHOICES, type SandboxChoice } from "../library/basics.js";
import type { WarrantOptions } from "../library/options.js";
import { hostSandbox, warnWeaker } from "./compose.js";
import { UsageError } from "./io.js";

export const WEAKER_OPTION = "--allow-weaker-sandbox";
export const WEAKER_OPTION_HELP =
  "let --sandbox unshare run commands without its seccomp filter where its loader is missing or does not work (refused otherwise: sandbox/no-seccomp); the run report records it";
export const SANDBOX_OPTION = "--sandbox <backend>";
export const SANDBOX_OPTION_HELP =
  "where runs are contained: bwrap, unshare or auto (default: $WARRANT_SANDBOX, else auto: bwrap, then unshare); a named backend that does not work here is an error (sandbox/unavailable, exit 2)";

/** The choice from the flag, else WARRANT_SANDBOX, else auto; anything else is a usage error. */
export function sandboxChoice(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): SandboxChoice {
  const fromEnv = env.WARRANT_SANDBOX === "" ? undefined : env.WARRANT_SANDBOX;
  const value = flag ?? fromEnv ?? "auto";
  if (isSandboxChoice(value)) return value;
  const where = flag === undefined ? "WARRANT_SANDBOX" : "--sandbox";
  throw new UsageError(
    `${where} takes one of ${SANDBOX_CHOICES.join(", ")}, not ${JSON.stringify(value)}`,
    "sandbox/invalid-choice",
  );
}

/**
 * The `sandbox` option for createWarrant: auto finds one on first use (said on stderr when none
 * works, warned when it runs without its seccomp filter); a named backend is proven now, and one
 * that fails is `sandbox/unavailable` — or `sandbox/no-seccomp`, `sandbox/tmpdir-unreachable`
 * when that is the cause (exit 2).
 */
export async function sandboxFor(
  flag: string | undefined,
  allowWeaker = false,
): Promise<WarrantOptions["sandbox"]> {
  const choice = sandboxChoice(flag);
  if (choice === "auto") return hostSandbox;
  return (await sandboxLookup(flag, allowWeaker))();
}

/**
 * The sandbox `--sandbox` names, found on first use (auto) or proven now (a named backend, warned
 * when it runs without its seccomp filter).
 */
export async function sandboxLookup(
  flag: string | undefined,
  allowWeaker = false,
): Promise<() => Promise<Sandbox | undefined>> {
  const choice = sandboxChoice(flag);
  if (choice === "auto") return hostSandbox;
  const { chooseSandbox } = await import("../index.js");
  const chosen = await chooseSandbox(choice, { allowWeakerSandbox: allowWeaker });
  if (chosen.ok) {
    await warnWeaker(chosen.value);
    return async () => chosen.value;
  }
  const first = chosen.errors[0];
  throw new UsageError(first?.message ?? `no ${choice} here`, first?.code ?? "sandbox/unavailable");
}
