// What every backend shares: the mode environments get here (overlay, proven once by a probe, or a
// reflinked copy), the pinned baselines (one copy per folder for as long as a loop or an
// environment holds it), the Environment handed out — its layered host view, change detection,
// and the bookkeeping that lets destroy() kill whatever still runs before removing the directory.
import { tmpdir } from "node:os";
import path from "node:path";
import {
  type Baseline,
  type ChangeBounds,
  DEFAULT_CHANGE_BOUNDS,
  type Environment,
  type EnvironmentMode,
  type EnvironmentOptions,
  type ExecOptions,
  type ExecResult,
  type Sandbox,
  type SandboxBackend,
} from "../../core/ports/sandbox.js";
import { fail, ok, WarrantError } from "../../core/result.js";
import {
  BASE_DIR_PREFIX,
  type HashHook,
  type PinnedBaseline,
  pinBaseline,
  type RunAs,
} from "./baseline-pin.js";
import { readConfinedFile } from "./confined-read.js";
import { SANDBOX_PATH } from "./contained-exec.js";
import { type EgressProxy, startEgressProxy } from "./egress-proxy.js";
import { EGRESS_SOCKET_NAME, egressHostDir, relayArgv, writeRelay } from "./egress-relay.js";
import {
  checkTempRoot,
  createEnvironmentDir,
  discardEnvironmentAt,
  discardNamedEnvironmentDir,
  type EnvironmentDir,
  removeEnvironmentDir,
  workDir,
} from "./environment-dir.js";
import {
  dependencyOverlays,
  type HostBinds,
  type OverlayMount,
  prepareHostBinds,
  toolchainPath,
} from "./host-binds.js";
import { copyChanges, MAX_CHANGED_ENTRIES, overlayChanges } from "./layered-changes.js";
import { createLayeredView, DEFAULT_READ_LIMIT } from "./layered-view.js";
import { OpaqueMemo } from "./opaque-dirs.js";
import { type NamespaceCommand, overlayOptions, probeOverlay } from "./overlay-mount.js";
import { PROBE_DIR_PREFIX, sweepDeadPins } from "./pin-owner.js";

export interface SandboxHooks {
  /** Told of every file hashed (tests count hashing with it). */
  readonly onHash?: HashHook;
  /** Runs between a host-side check of a workspace path and the open that follows it. */
  readonly beforeOpen?: (relPath: string) => void | Promise<void>;
}

export interface BackendOptions {
  readonly bwrapPath?: string;
  readonly unsharePath?: string;
  readonly setprivPath?: string;
  /** Host paths exposed read-only besides the system directories. */
  readonly readOnlyPaths?: readonly string[];
  /**
   * Who contained commands run as. Default: when the host runs as root, uid/gid 65534 (nobody) —
   * a process-count limit does not bind root, and root's capabilities must not reach the host's
   * files; otherwise the host's own user. `null` keeps the host's user even as root.
   */
  readonly runAs?: RunAs | null;
  /** Where environment and baseline directories are made (default: the OS temp directory). */
  readonly tempRoot?: string;
  /**
   * `overlay` or `copy` forces a mode (`overlay` throws `sandbox/overlay-unavailable` where the
   * probe fails); `auto` (default) uses overlay where its probe passes.
   */
  readonly layers?: "auto" | EnvironmentMode;
  /**
   * Hold memory with a cgroup per command where this host's cgroup is delegated and writable
   * (default true); false always uses the RLIMIT_DATA fallback.
   */
  readonly cgroups?: boolean;
  /**
   * The unshare backend's seccomp loader (default: the one built with the package, when it was);
   * null: none, as on a host without a C compiler at build time.
   */
  readonly seccompLoader?: string | null;
  /**
   * Let the unshare backend run commands without a seccomp filter where its loader is missing or
   * does not work (default false: it refuses, `sandbox/no-seccomp`).
   */
  readonly allowWeakerSandbox?: boolean;
  readonly hooks?: SandboxHooks;
}

const NOBODY: RunAs = { uid: 65534, gid: 65534 };

/**
 * What this process holds open, across every sandbox it made: each live environment's destroy and
 * each pin's removal, so that a process told to stop (SIGTERM, SIGINT) can leave nothing behind.
 */
const held = {
  environments: new Set<() => Promise<unknown>>(),
  pins: new Set<() => Promise<unknown>>(),
};

/**
 * Destroy every environment this process still holds (killing what runs in it) and remove every
 * baseline it pinned: for a process about to exit on a signal. Environments and pins made after
 * this call are not affected.
 */
export async function destroyHeldEnvironments(): Promise<void> {
  const environments = [...held.environments];
  await Promise.allSettled(environments.map((destroy) => destroy()));
  const pins = [...held.pins];
  await Promise.allSettled(pins.map((remove) => remove()));
}

export function hostRunAs(options: BackendOptions): RunAs | undefined {
  if (options.runAs === null) return undefined;
  if (options.runAs !== undefined) return options.runAs;
  return process.getuid?.() === 0 ? NOBODY : undefined;
}

/** The ids a command runs as: the commands' uid/gid, or the host's own. */
export function commandIds(runAs: RunAs | undefined): RunAs {
  return runAs ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
}

/**
 * Run one command for an environment; `mount` is the overlay's mount options (overlay mode) — the
 * backend mounts it at the workspace path inside the command's namespaces. `egress`, when the
 * environment has network: the host directory holding the egress proxy's socket and the relay
 * (inside the stage), to be visible read-only at EGRESS_SANDBOX_DIR; `argv` already runs behind
 * the relay. `layers`: in overlay mode, the dependency overlays to mount over the workspace's
 * (see host-binds.ts).
 */
export type ExecLine = (
  argv: readonly string[],
  opts: ExecOptions,
  mount: string | undefined,
  egress?: string,
  layers?: readonly OverlayMount[],
) => Promise<ExecResult>;

/** A unix socket's path is at most 107 bytes (sun_path). */
const MAX_SOCKET_PATH = 107;

/** Start the environment's egress proxy and write its relay, in the stage's egress directory. */
async function startEgress(
  dir: EnvironmentDir,
  network: NonNullable<EnvironmentOptions["network"]>,
): Promise<{ hostDir: string; proxy: EgressProxy }> {
  const hostDir = egressHostDir(dir.stage);
  const socketPath = path.join(hostDir, EGRESS_SOCKET_NAME);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw new WarrantError(
      "sandbox/egress-socket-path",
      `the egress socket path ${socketPath} is longer than ${MAX_SOCKET_PATH} bytes: use a shorter temp root`,
    );
  }
  const proxy = await startEgressProxy(socketPath, network);
  await writeRelay(hostDir);
  return { hostDir, proxy };
}

interface Share {
  readonly key: string;
  readonly pin: Promise<PinnedBaseline>;
  refs: number;
  /** Removes the pin (once no environment or handle holds it, or the process stops). */
  removeHeld?: () => Promise<void>;
}

/** What a backend's Sandbox shares with every other: all but how a command is started. */
export interface EnvironmentHost extends Omit<Sandbox, "backend" | "createEnvironment"> {
  /**
   * A fresh environment; `prepare` readies its directory (its dependency and toolchain folders
   * made, in `binds`) and returns how it runs a command.
   */
  createEnvironment(
    baseline: string | Baseline,
    opts: EnvironmentOptions,
    prepare: (dir: EnvironmentDir, binds: HostBinds) => ExecLine | Promise<ExecLine>,
  ): Promise<Environment>;
}

export function environmentHost(backend: SandboxBackend, options: BackendOptions): EnvironmentHost {
  const runAs = hostRunAs(options);
  const tempRoot = options.tempRoot ?? tmpdir();
  const ns: NamespaceCommand = {
    unsharePath: options.unsharePath ?? "unshare",
    setprivPath: options.setprivPath ?? "setpriv",
    runAs,
  };
  let mode: Promise<EnvironmentMode> | undefined;
  const environmentMode = () => {
    mode ??= (async (): Promise<EnvironmentMode> => {
      if (options.layers === "copy") return "copy";
      const why = await probeOverlay(tempRoot, ns);
      if (why === undefined) return "overlay";
      if (options.layers === "overlay") {
        throw new WarrantError("sandbox/overlay-unavailable", `no overlay here: ${why}`);
      }
      return "copy";
    })();
    return mode;
  };

  const shares = new Map<string, Share>();
  // Before this sandbox's first pin: the pins (and probe folders) of processes that died holding
  // them go.
  let swept: Promise<unknown> | undefined;
  const sweepOnce = () => {
    swept ??= Promise.all([
      sweepDeadPins(tempRoot, BASE_DIR_PREFIX).catch(() => 0),
      sweepDeadPins(tempRoot, PROBE_DIR_PREFIX).catch(() => 0),
    ]);
    return swept;
  };
  const handles = new WeakMap<Baseline, Share>();
  const acquire = (dir: string, dependencies: readonly string[] = []): Share => {
    const source = path.resolve(dir);
    const key = [source, ...dependencies].join("\0");
    let share = shares.get(key);
    if (share === undefined) {
      share = {
        key,
        pin: sweepOnce().then(() =>
          pinBaseline(source, { tempRoot, runAs, onHash: options.hooks?.onHash, dependencies }),
        ),
        refs: 0,
      };
      shares.set(key, share);
      const made = share;
      const remove = async () => {
        held.pins.delete(remove);
        if (shares.get(made.key) === made) shares.delete(made.key);
        const pin = await made.pin.catch(() => undefined);
        await pin?.remove();
      };
      held.pins.add(remove);
      made.removeHeld = remove;
      // A pin that fails is not kept for the next caller.
      share.pin.catch(() => {
        if (shares.get(key) === share) shares.delete(key);
      });
    }
    share.refs += 1;
    return share;
  };
  const release = async (share: Share) => {
    share.refs -= 1;
    if (share.refs > 0) return;
    await share.removeHeld?.();
  };

  return {
    environmentMode,
    discardEnvironment: (name: string) => discardNamedEnvironmentDir(tempRoot, name),
    discardEnvironmentAt,
    async openBaseline(dir: string, opts = {}): Promise<Baseline> {
      checkTempRoot(tempRoot, runAs);
      const share = acquire(dir, opts.dependencies);
      let pin: PinnedBaseline;
      try {
        pin = await share.pin;
      } catch (e) {
        await release(share);
        throw e;
      }
      let released = false;
      const handle: Baseline = {
        source: pin.source,
        dependencies: pin.dependencies.map((d) => d.rel),
        files: pin.files,
        bytes: pin.bytes,
        digests: () => pin.digests(),
        async release() {
          if (released) return;
          released = true;
          handles.delete(handle);
          await release(share);
        },
      };
      handles.set(handle, share);
      return handle;
    },
    async createEnvironment(baseline, opts, prepare) {
      checkTempRoot(tempRoot, runAs);
      let share: Share;
      if (typeof baseline === "string") share = acquire(baseline);
      else {
        const held = handles.get(baseline);
        if (held === undefined || shares.get(held.key) !== held) {
          throw new WarrantError("sandbox/baseline-released", "that baseline is not held here");
        }
        share = held;
        share.refs += 1;
      }
      // Until the environment is handed out, a process told to stop removes what is made of it.
      let removeMade: (() => Promise<unknown>) | undefined;
      try {
        const pin = await share.pin;
        const dir = await createEnvironmentDir(
          pin,
          await environmentMode(),
          runAs,
          tempRoot,
          opts.name,
          (base) => {
            removeMade = () => removeEnvironmentDir({ base });
            held.environments.add(removeMade);
          },
        );
        let run: ExecLine;
        let binds: HostBinds;
        let egress: { hostDir: string; proxy: EgressProxy } | undefined;
        try {
          binds = await prepareHostBinds(dir, pin, opts.toolchains ?? [], runAs);
          run = await prepare(dir, binds);
          if (opts.network !== undefined) egress = await startEgress(dir, opts.network);
        } catch (e) {
          await egress?.proxy.close();
          await removeEnvironmentDir(dir);
          throw e;
        }
        return managedEnvironment(backend, dir, pin, run, runAs, options.hooks, egress, binds, () =>
          release(share),
        );
      } catch (e) {
        await release(share);
        throw e;
      } finally {
        if (removeMade !== undefined) held.environments.delete(removeMade);
      }
    },
  };
}

function managedEnvironment(
  backend: SandboxBackend,
  dir: EnvironmentDir,
  pin: PinnedBaseline,
  run: ExecLine,
  runAs: RunAs | undefined,
  hooks: SandboxHooks | undefined,
  egress: { readonly hostDir: string; readonly proxy: EgressProxy } | undefined,
  binds: HostBinds,
  releasePin: () => Promise<void>,
): Environment {
  const running = new Set<{ controller: AbortController; done: Promise<unknown> }>();
  // Each command running at once gets its own overlayfs work directory.
  const slots = new Set<number>();
  let destroyed = false;
  let pinReleased = false;
  // Which upper directories are opaque, asked once per directory as it is, by the view and the
  // change detection alike.
  const opaque = new OpaqueMemo();
  const view = createLayeredView({
    workspace: dir.workspace,
    upper: dir.upper,
    baseline: pin,
    overlay: dir.mode === "overlay",
    runAs,
    hooks,
    opaque,
  });
  const changes = (bounds: ChangeBounds) => {
    const opts = {
      upper: dir.upper,
      baseline: pin,
      onHash: hooks?.onHash,
      maxEntries: bounds.maxEntries,
      timeMs: bounds.timeMs,
    };
    return dir.mode === "overlay"
      ? overlayChanges({ ...opts, opaque })
      : copyChanges({
          ...opts,
          ...(dir.copiedUntilNs === undefined ? {} : { copiedUntilNs: dir.copiedUntilNs }),
        });
  };
  const environment: Environment = {
    id: dir.id,
    backend,
    mode: dir.mode,
    root: dir.workspace,
    async exec(argv, opts) {
      if (destroyed)
        throw new WarrantError("sandbox/destroyed", `environment ${dir.id} is destroyed`);
      if (argv.length === 0) throw new WarrantError("sandbox/empty-argv", "exec needs a command");
      const controller = new AbortController();
      const outer = opts.signal;
      const forward = () => controller.abort();
      if (outer?.aborted === true) controller.abort();
      else outer?.addEventListener("abort", forward, { once: true });
      let slot = 0;
      while (slots.has(slot)) slot += 1;
      slots.add(slot);
      const done = (async () => {
        let mount: string | undefined;
        let layers: OverlayMount[] = [];
        if (dir.mode === "overlay") {
          const work = await workDir(dir, slot, runAs);
          mount = overlayOptions(dir.lower as string, dir.upper, work);
          if (mount === undefined)
            throw new WarrantError("sandbox/overlay-unavailable", `cannot mount over ${dir.base}`);
          layers = await dependencyOverlays(binds, slot, runAs);
        }
        const given = { ...opts, signal: controller.signal };
        const exec =
          binds.pathPrefix.length === 0
            ? given
            : {
                ...given,
                env: { ...opts.env, PATH: toolchainPath(binds, opts.env?.PATH ?? SANDBOX_PATH) },
              };
        if (egress === undefined) return run(argv, exec, mount, undefined, layers);
        return run(relayArgv(argv), exec, mount, egress.hostDir, layers);
      })();
      const entry = { controller, done };
      running.add(entry);
      try {
        return await done;
      } finally {
        running.delete(entry);
        slots.delete(slot);
        outer?.removeEventListener("abort", forward);
      }
    },
    writeFile: (relPath, bytes) => view.write(relPath, bytes),
    async readFile(relPath, opts) {
      const max = opts?.maxBytes ?? DEFAULT_READ_LIMIT;
      const r = await view.read(relPath, max);
      if (!r.ok) return r;
      if (r.value.truncated) {
        return fail([
          {
            code: "sandbox/too-large",
            path: "",
            message: `${relPath}: larger than ${max} bytes`,
            detail: { maxBytes: max },
          },
        ]);
      }
      return ok(r.value.bytes);
    },
    readPart: (relPath, maxBytes) => view.read(relPath, maxBytes),
    readBaseline: (relPath, maxBytes) => readConfinedFile(pin.tree, relPath, maxBytes),
    removeFile: (relPath) => view.remove(relPath),
    changes: (bounds) => changes({ ...DEFAULT_CHANGE_BOUNDS, ...bounds }),
    connections: () => egress?.proxy.connections(),
    async snapshot() {
      const out = new Map(await pin.digests());
      const c = await changes({
        maxEntries: MAX_CHANGED_ENTRIES,
        timeMs: Number.POSITIVE_INFINITY,
      });
      for (const d of c.deleted) out.delete(d.path);
      for (const d of [...c.added, ...c.modified]) out.set(d.path, d.digest);
      return out;
    },
    async destroy() {
      held.environments.delete(environment.destroy);
      destroyed = true;
      for (const r of running) r.controller.abort();
      await Promise.allSettled([...running].map((r) => r.done));
      await egress?.proxy.close().catch(() => undefined);
      const removed = await removeEnvironmentDir(dir);
      if (!pinReleased) {
        pinReleased = true;
        await releasePin();
      }
      return removed;
    },
  };
  held.environments.add(environment.destroy);
  return environment;
}
