// A drive's environments, over the Sandbox port (src/core/ports/sandbox.ts): each baseline folder
// pinned once for every run of the drive, one environment per run under a stable name (so a dead
// process's leftover is found again), leftovers discarded, the pins given back when the drive ends.
// A baseline held (hold) stays pinned until close: the sandbox lays every environment over the same
// folder on that copy, whichever drive asks for it.
// Not a port: the runtime builds it over whichever Sandbox it was given.

import type { Baseline, Environment, ResourceLimits, Sandbox } from "../core/ports/sandbox.js";
import type { NetworkPolicy } from "../core/taskpack/network.js";

export interface RunEnvironmentOptions {
  readonly resources?: ResourceLimits;
  readonly network?: NetworkPolicy;
  /** Workspace folders the environment contains as they are on the host (the pack's). */
  readonly dependencies?: readonly string[];
  /** Host folders bound read-only at their own path, their `bin/` first on PATH. */
  readonly toolchains?: readonly string[];
}

export interface RunEnvironments {
  /** The backend's name, or undefined when nothing can contain a run. */
  readonly backend: string | undefined;
  /**
   * A fresh environment over `baselineDir` (pinned once per drive) named `name`: a leftover of that
   * name is replaced.
   */
  create(baselineDir: string, name: string, options?: RunEnvironmentOptions): Promise<Environment>;
  /**
   * Removes what a dead attempt left of the environment named `name` and, when journaled, at
   * `root`; true once nothing is left (also when nothing ever was, or no backend exists).
   */
  discard(name: string, root?: string): Promise<boolean>;
  /**
   * Pins the baseline of `baselineDir` now and holds it until close(): every environment made over
   * the same folder and dependencies meanwhile, through these environments or others over the same
   * sandbox, is laid over that one copy instead of a copy of its own (an eval holds each task's).
   */
  hold?(baselineDir: string, dependencies: readonly string[]): Promise<void>;
  /** Gives back the baselines pinned for this drive's environments (once the drive ends). */
  close(): Promise<void>;
}

export function runEnvironments(sandbox: Sandbox | undefined): RunEnvironments {
  const pins = new Map<string, Promise<Baseline>>();
  const pinned = (s: Sandbox, dir: string, dependencies: readonly string[]) => {
    const key = [dir, ...dependencies].join("\0");
    let pin = pins.get(key);
    if (pin === undefined) {
      pin = s.openBaseline(dir, { dependencies });
      pins.set(key, pin);
      pin.catch(() => pins.delete(key));
    }
    return pin;
  };
  return {
    backend: sandbox?.backend,
    async create(baselineDir, name, options) {
      if (sandbox === undefined)
        throw new Error("no sandbox backend: runs are refused before this");
      return sandbox.createEnvironment(
        await pinned(sandbox, baselineDir, options?.dependencies ?? []),
        {
          name,
          ...(options?.toolchains === undefined ? {} : { toolchains: options.toolchains }),
          ...(options?.resources === undefined ? {} : { resources: options.resources }),
          ...(options?.network === undefined ? {} : { network: options.network }),
        },
      );
    },
    async discard(name, root) {
      if (sandbox === undefined) return true;
      const journaled =
        root === undefined ? true : (await sandbox.discardEnvironmentAt(root)).confirmed;
      const named = (await sandbox.discardEnvironment(name)).confirmed;
      return journaled && named;
    },
    async hold(baselineDir, dependencies) {
      if (sandbox !== undefined) await pinned(sandbox, baselineDir, dependencies);
    },
    async close() {
      const held = [...pins.values()];
      pins.clear();
      await Promise.all(held.map((p) => p.then((b) => b.release()).catch(() => undefined)));
    },
  };
}
