// Choosing a containment backend: bwrap first, then unshare, each proven by running a contained
// `true` in a throwaway environment. Neither working is a refusal, never a fallback to no sandbox.
// A backend named by the operator is that backend or an error (`sandbox/unavailable`), never another.
import { accessSync, constants } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Sandbox, SandboxBackend } from "../../core/ports/sandbox.js";
import { fail, ok, type Result, WarrantError } from "../../core/result.js";
import { createBwrapSandbox } from "./bwrap-sandbox.js";
import type { BackendOptions } from "./managed-environment.js";
import { claimPin, PROBE_DIR_PREFIX, sweepDeadPins } from "./pin-owner.js";
import { isSandboxChoice, SANDBOX_CHOICES, type SandboxChoice } from "./sandbox-choice.js";
import { removePath } from "./tree-walk.js";
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

export { isSandboxChoice, SANDBOX_CHOICES, type SandboxChoice };

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

/** Why a backend failed its probe: the error's code when it threw one, and what it said. */
export interface ProbeFailure {
  readonly code?: string;
  readonly message: string;
}

/** Why a backend failed its probe, or undefined when a contained `true` exited 0. */
export async function probeSandbox(
  sandbox: Sandbox,
  timeoutMs = 10_000,
): Promise<string | undefined> {
  return (await probeFailure(sandbox, timeoutMs))?.message;
}

/** The probe, with the code of the error that failed it (`sandbox/no-seccomp`, …) when it threw. */
export async function probeFailure(
  sandbox: Sandbox,
  timeoutMs = 10_000,
): Promise<ProbeFailure | undefined> {
  let probeDir: string;
  try {
    probeDir = await mkdtemp(path.join(tmpdir(), PROBE_DIR_PREFIX));
  } catch (e) {
    return { message: (e as Error).message };
  }
  try {
    // Claimed first, so that a process killed mid-probe leaves a folder the next start removes.
    await claimPin(probeDir);
    const baseline = path.join(probeDir, "workspace");
    await mkdir(baseline);
    const env = await sandbox.createEnvironment(baseline);
    try {
      const r = await env.exec(["true"], { timeoutMs, maxOutputBytes: 4096 });
      if (r.exitCode === 0) return undefined;
      const why = r.timedOut ? "timed out" : `exit ${r.exitCode ?? r.signal}`;
      return { message: `${why}: ${r.stderr.trim().slice(0, 300)}` };
    } finally {
      await env.destroy();
    }
  } catch (e) {
    const code = e instanceof WarrantError ? e.code : undefined;
    return { ...(code === undefined ? {} : { code }), message: (e as Error).message };
  } finally {
    await removePath(probeDir);
  }
}

/** Refusals that name their cause better than "unavailable": passed on as they are. */
const OWN_CODES = new Set(["sandbox/no-seccomp", "sandbox/tmpdir-unreachable"]);

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
  // Probe folders a killed process left (their owner gone) go before this one makes its own.
  await sweepDeadPins(tmpdir(), PROBE_DIR_PREFIX).catch(() => 0);
  const reasons: Record<string, string> = {};
  const codes: Record<string, string> = {};
  for (const backend of order) {
    const where = located(backend, options);
    if ("missing" in where) {
      reasons[backend] = where.missing;
      continue;
    }
    // Found by `auto` (no backend named), unshare without its filter is taken as the weaker
    // sandbox: the caller warns (Sandbox.seccomp says why).
    const allowWeaker = options.allowWeakerSandbox ?? options.only === undefined;
    const sandbox = FACTORIES[backend]({ ...where, allowWeakerSandbox: allowWeaker });
    const why = await probeFailure(sandbox, options.probeTimeoutMs);
    if (why === undefined) return ok(sandbox);
    reasons[backend] = why.message;
    if (why.code !== undefined) codes[backend] = why.code;
  }
  // Every backend refused for the same cause of its own (the temp root, say): that cause.
  const own = new Set(order.map((b) => codes[b]));
  const [only] = own;
  const code = own.size === 1 && only !== undefined && OWN_CODES.has(only) ? only : undefined;
  return fail([
    {
      code: code ?? "environment/not-contained",
      path: "",
      message:
        code !== undefined && order.length === 1
          ? (reasons[order[0] as SandboxBackend] as string)
          : `no containment backend works here (${order.map((b) => `${b}: ${reasons[b]}`).join("; ")})`,
      detail: { reasons, codes },
    },
  ]);
}

/**
 * The backend `choice` names: `auto` is detectSandbox's order; a named backend is that backend
 * alone, and when it fails its probe (or its program is not on PATH) `sandbox/unavailable`, naming
 * it and why — never another backend in its place — or the refusal that says the cause better
 * (`sandbox/no-seccomp`, `sandbox/tmpdir-unreachable`).
 */
export async function chooseSandbox(
  choice: SandboxChoice,
  options: BackendOptions & { readonly probeTimeoutMs?: number } = {},
): Promise<Result<Sandbox>> {
  if (choice === "auto") return detectSandbox(options);
  const found = await detectSandbox({ ...options, only: choice });
  if (found.ok) return found;
  const first = found.errors[0];
  if (first !== undefined && OWN_CODES.has(first.code)) return found;
  const reasons = (first?.detail?.reasons ?? {}) as Record<string, string>;
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
