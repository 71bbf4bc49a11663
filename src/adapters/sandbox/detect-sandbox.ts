// Choosing a containment backend: bwrap first, then unshare, each proven by running a contained
// `true` in a throwaway environment. Neither working is a refusal, never a fallback to no sandbox.
// A backend named by the operator is that backend or an error (`sandbox/unavailable`), never another.
import { accessSync, constants } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fail, ok, type Result } from "../../core/result.js";
import type { Sandbox, SandboxBackend } from "../../core/sandbox/sandbox-port.js";
import { createBwrapSandbox } from "./bwrap-sandbox.js";
import type { BackendOptions } from "./managed-environment.js";
import { createUnshareSandbox } from "./unshare-sandbox.js";

export interface DetectOptions extends BackendOptions {
  /** Try this backend first (the other is still tried after it). */
  readonly prefer?: SandboxBackend;
  /** Only ever use this backend. */
  readonly only?: SandboxBackend;
  readonly probeTimeoutMs?: number;
}

const FACTORIES: Record<SandboxBackend, (o: BackendOptions) => Sandbox> = {
  bwrap: createBwrapSandbox,
  unshare: createUnshareSandbox,
};

/** What `--sandbox`, WARRANT_SANDBOX and the library's `sandbox` option name. */
export type SandboxChoice = "auto" | SandboxBackend;
export const SANDBOX_CHOICES: readonly SandboxChoice[] = ["auto", "bwrap", "unshare"];

export function isSandboxChoice(value: string): value is SandboxChoice {
  return (SANDBOX_CHOICES as readonly string[]).includes(value);
}

/** The executable each backend starts (looked up on the host's PATH unless a path is given). */
const PROGRAM: Record<SandboxBackend, string> = { bwrap: "bwrap", unshare: "unshare" };

/** `name`'s absolute path on `PATH`, or undefined when no directory on it has it executable. */
export function onPath(name: string, searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath ?? "").split(":")) {
    if (dir === "" || !path.isAbsolute(dir)) continue;
    const p = path.join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** The backend's options with its program found on the host's PATH, or why it is not there. */
function located(
  backend: SandboxBackend,
  options: BackendOptions,
): BackendOptions | { readonly missing: string } {
  const key = backend === "bwrap" ? "bwrapPath" : "unsharePath";
  if (options[key] !== undefined) return options;
  const found = onPath(PROGRAM[backend], process.env.PATH);
  if (found === undefined) return { missing: `${PROGRAM[backend]} is not on PATH` };
  return { ...options, [key]: found };
}

/** Why a backend failed its probe, or undefined when a contained `true` exited 0. */
export async function probeSandbox(
  sandbox: Sandbox,
  timeoutMs = 10_000,
): Promise<string | undefined> {
  const baseline = await mkdtemp(path.join(tmpdir(), "warrant-probe-"));
  try {
    const env = await sandbox.createEnvironment(baseline);
    try {
      const r = await env.exec(["true"], { timeoutMs, maxOutputBytes: 4096 });
      if (r.exitCode === 0) return undefined;
      const why = r.timedOut ? "timed out" : `exit ${r.exitCode ?? r.signal}`;
      return `${why}: ${r.stderr.trim().slice(0, 300)}`;
    } finally {
      await env.destroy();
    }
  } catch (e) {
    return (e as Error).message;
  } finally {
    await rm(baseline, { recursive: true, force: true });
  }
}

/**
 * The first backend whose probe passes, in the order bwrap, unshare (or `prefer` first). When none
 * does: `environment/not-contained`, with each backend's reason in `detail`.
 */
export async function detectSandbox(options: DetectOptions = {}): Promise<Result<Sandbox>> {
  const order: SandboxBackend[] =
    options.only !== undefined
      ? [options.only]
      : options.prefer === "unshare"
        ? ["unshare", "bwrap"]
        : ["bwrap", "unshare"];
  const reasons: Record<string, string> = {};
  for (const backend of order) {
    const where = located(backend, options);
    if ("missing" in where) {
      reasons[backend] = where.missing;
      continue;
    }
    const sandbox = FACTORIES[backend](where);
    const why = await probeSandbox(sandbox, options.probeTimeoutMs);
    if (why === undefined) return ok(sandbox);
    reasons[backend] = why;
  }
  return fail([
    {
      code: "environment/not-contained",
      path: "",
      message: `no containment backend works here (${order.map((b) => `${b}: ${reasons[b]}`).join("; ")})`,
      detail: { reasons },
    },
  ]);
}

/**
 * The backend `choice` names: `auto` is detectSandbox's order; a named backend is that backend
 * alone, and when it fails its probe (or its program is not on PATH) `sandbox/unavailable`, naming
 * it and why — never another backend in its place.
 */
export async function chooseSandbox(
  choice: SandboxChoice,
  options: BackendOptions & { readonly probeTimeoutMs?: number } = {},
): Promise<Result<Sandbox>> {
  if (choice === "auto") return detectSandbox(options);
  const found = await detectSandbox({ ...options, only: choice });
  if (found.ok) return found;
  const reasons = (found.errors[0]?.detail?.reasons ?? {}) as Record<string, string>;
  const why = reasons[choice] ?? "its probe failed";
  return fail([
    {
      code: "sandbox/unavailable",
      path: "",
      message: `the ${choice} sandbox backend is unavailable here: ${why}`,
      detail: { backend: choice, reason: why },
    },
  ]);
}
