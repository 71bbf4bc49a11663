// Choosing a containment backend: bwrap first, then unshare, each proven by running a contained
// `true` in a throwaway environment. Neither working is a refusal, never a fallback to no sandbox.
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
    const sandbox = FACTORIES[backend](options);
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
