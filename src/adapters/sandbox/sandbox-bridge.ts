// The runtime's SandboxPort over a contained sandbox (src/core/sandbox's Sandbox port): environments for
// runs (named, so a dead process's leftover is found again) over a baseline pinned once per drive,
// the baseline's snapshot, and removal of an environment left behind by a dead process.
import path from "node:path";
import type { Baseline, Sandbox } from "../../core/ports/sandbox.js";
import type { RunEnvironment, SandboxPort } from "../../runtime/context.js";
import { removeEnvironmentDir, snapshotTree } from "./environment-dir.js";

const ENV_DIR_PREFIX = "warrant-env-";

export function sandboxPort(sandbox: Sandbox | undefined): SandboxPort {
  // The baseline each folder is pinned as, once for every run of this drive (its loop).
  const pins = new Map<string, Promise<Baseline>>();
  const pinned = (dir: string, dependencies: readonly string[], s: Sandbox) => {
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
    async create(baselineDir, ref, name, options): Promise<RunEnvironment> {
      if (sandbox === undefined)
        throw new Error("no sandbox backend: runs are refused before this");
      const env = await sandbox.createEnvironment(
        await pinned(baselineDir, options?.dependencies ?? [], sandbox),
        {
          name,
          ...(options?.toolchains === undefined ? {} : { toolchains: options.toolchains }),
          ...(options?.resources === undefined ? {} : { resources: options.resources }),
          ...(options?.network === undefined ? {} : { network: options.network }),
        },
      );
      return {
        ref,
        dir: env.root,
        mode: env.mode,
        ...(env.seccomp === undefined ? {} : { seccomp: env.seccomp }),
        exec: (argv, opts) => env.exec(argv, opts),
        async readFile(p) {
          const r = await env.readFile(p);
          return r.ok ? r.value : undefined;
        },
        async writeFile(p, bytes) {
          const r = await env.writeFile(p, bytes);
          return r.ok ? undefined : r.errors[0];
        },
        read: (p, maxBytes) => env.readPart(p, maxBytes),
        readBaseline: async (p, max) => env.readBaseline?.(p, max),
        snapshot: () => env.snapshot(),
        changes: (bounds) => env.changes(bounds),
        connections: () => env.connections(),
        destroy: async () => (await env.destroy()).confirmed,
      };
    },
    async destroyDir(dir: string): Promise<boolean> {
      const base = path.dirname(dir);
      // Only ever a directory this host made for an environment.
      if (!path.basename(base).startsWith(ENV_DIR_PREFIX)) return false;
      return (await removeEnvironmentDir({ base })).confirmed;
    },
    async discard(name: string): Promise<boolean> {
      // The backend only ever removes `warrant-env-<name>` under its own temp root.
      if (sandbox === undefined) return true;
      return (await sandbox.discardEnvironment(name)).confirmed;
    },
    snapshotDir: (dir: string) => snapshotTree(dir),
    async close() {
      const held = [...pins.values()];
      pins.clear();
      await Promise.all(held.map((p) => p.then((b) => b.release()).catch(() => undefined)));
    },
  };
}
