// What every backend shares: the mode environments get here (overlay, proven once by a probe, or a
// reflinked copy), the pinned baselines (one copy per folder for as long as a loop or an
// environment holds it: baseline-shares.ts), the Environment handed out — its layered host view,
// change detection, and the bookkeeping that lets destroy() kill whatever still runs before
// removing the directory.
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
import { fail, ok, type Result, WarrantError } from "../../core/result.js";
import type { HashHook, PinnedBaseline, RunAs } from "./baseline-pin.js";
import { baselineShares } from "./baseline-shares.js";
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
import { createLayeredView, DEFAULT_READ_LIMIT, type LayeredView } from "./layered-view.js";
import { OpaqueMemo } from "./opaque-dirs.js";
import { type NamespaceCommand, overlayOptions, probeOverlay } from "./overlay-mount.js";

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
  /**
   * The bwrap backend's `warrant-outer`, what runs outside the sandbox in overlay mode (default:
   * the one built with the package, when it was); null: the same steps as a shell script.
   */
  readonly outerHelper?: string | null;
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
  /** Each environment being made: settles once it is made (and held) or undone. */
  making: new Set<Promise<void>>(),
  /** Counts the calls of destroyHeldEnvironments: a making begun before one stops at its next step. */
  stops: 0,
};

/**
 * Destroy every environment this process still holds (killing what runs in it) and remove every
 * baseline it pinned: for a process about to exit on a signal. Environments and pins made after
 * this call are not affected.
 */
export async function destroyHeldEnvironments(): Promise<void> {
  // An environment still being made stops at its next step and removes what it made, or is
  // finished and held: either way nothing is added to a directory after it is removed.
  held.stops += 1;
  await Promise.allSettled([...held.making]);
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

/** The mode environments get, asked once: overlay where its probe passes, unless forced. */
function modeProbe(
  layers: BackendOptions["layers"],
  tempRoot: string,
  ns: NamespaceCommand,
): () => Promise<EnvironmentMode> {
  let mode: Promise<EnvironmentMode> | undefined;
  return () => {
    mode ??= (async (): Promise<EnvironmentMode> => {
      if (layers === "copy") return "copy";
      const why = await probeOverlay(tempRoot, ns);
      if (why === undefined) return "overlay";
      if (layers === "overlay") {
        throw new WarrantError("sandbox/overlay-unavailable", `no overlay here: ${why}`);
      }
      return "copy";
    })();
    return mode;
  };
}

export function environmentHost(backend: SandboxBackend, options: BackendOptions): EnvironmentHost {
  const runAs = hostRunAs(options);
  const tempRoot = options.tempRoot ?? tmpdir();
  const ns: NamespaceCommand = {
    unsharePath: options.unsharePath ?? "unshare",
    setprivPath: options.setprivPath ?? "setpriv",
    runAs,
  };
  const environmentMode = modeProbe(options.layers, tempRoot, ns);
  const shares = baselineShares({
    tempRoot,
    runAs,
    onHash: options.hooks?.onHash,
    heldPins: held.pins,
  });

  return {
    environmentMode,
    discardEnvironment: (name: string) => discardNamedEnvironmentDir(tempRoot, name),
    discardEnvironmentAt,
    async openBaseline(dir: string, opts = {}): Promise<Baseline> {
      checkTempRoot(tempRoot, runAs);
      return shares.open(dir, opts.dependencies);
    },
    async createEnvironment(baseline, opts, prepare) {
      checkTempRoot(tempRoot, runAs);
      const making = startMaking();
      const share = shares.hold(baseline);
      // Until the environment is handed out, a process told to stop removes what is made of it.
      let removeMade: (() => Promise<unknown>) | undefined;
      try {
        const pin = await share.pin;
        making.step();
        const dir = await createEnvironmentDir(
          pin,
          await environmentMode(),
          runAs,
          tempRoot,
          opts.name,
          (made) => {
            removeMade = () => removeEnvironmentDir(made);
            held.environments.add(removeMade);
          },
        );
        let run: ExecLine;
        let binds: HostBinds;
        let egress: { hostDir: string; proxy: EgressProxy } | undefined;
        try {
          making.step();
          binds = await prepareHostBinds(dir, pin, opts.toolchains ?? [], runAs);
          making.step();
          run = await prepare(dir, binds);
          making.step();
          if (opts.network !== undefined) egress = await startEgress(dir, opts.network);
          making.step();
        } catch (e) {
          await egress?.proxy.close();
          await removeEnvironmentDir(dir);
          throw e;
        }
        return managedEnvironment(backend, dir, pin, run, runAs, options.hooks, egress, binds, () =>
          shares.release(share),
        );
      } catch (e) {
        await shares.release(share);
        throw e;
      } finally {
        if (removeMade !== undefined) held.environments.delete(removeMade);
        making.done();
      }
    },
  };
}

/**
 * An environment's making, known to destroyHeldEnvironments until `done()`: `step()`, called
 * between its steps, throws sandbox/stopping once the process was told to stop after it began.
 */
function startMaking(): { step(): void; done(): void } {
  const stopsAtStart = held.stops;
  let done = () => {};
  const settled = new Promise<void>((resolve) => {
    done = resolve;
  });
  held.making.add(settled);
  return {
    step() {
      if (held.stops !== stopsAtStart) {
        throw new WarrantError(
          "sandbox/stopping",
          "the process is stopping: the environment is not made",
        );
      }
    },
    done() {
      held.making.delete(settled);
      done();
    },
  };
}

/** An environment's egress: the host directory of its proxy's socket and relay, and the proxy. */
interface Egress {
  readonly hostDir: string;
  readonly proxy: EgressProxy;
}

/** What an environment's commands run with, and which of them are running. */
interface Commands {
  readonly dir: EnvironmentDir;
  readonly run: ExecLine;
  readonly runAs: RunAs | undefined;
  readonly binds: HostBinds;
  readonly egress: Egress | undefined;
  readonly running: Set<{ controller: AbortController; done: Promise<unknown> }>;
  /** Each command running at once gets its own overlayfs work directory. */
  readonly slots: Set<number>;
  destroyed: boolean;
}

/** Run one command in the environment, aborted by `opts.signal` or by destroy(). */
async function execIn(
  commands: Commands,
  argv: readonly string[],
  opts: ExecOptions,
): Promise<ExecResult> {
  const { dir, running, slots } = commands;
  if (commands.destroyed)
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
  const done = startCommand(commands, slot, argv, { ...opts, signal: controller.signal });
  const entry = { controller, done };
  running.add(entry);
  try {
    return await done;
  } finally {
    running.delete(entry);
    slots.delete(slot);
    outer?.removeEventListener("abort", forward);
  }
}

/** Start a command in work slot `slot`: its overlay mounts, its PATH, behind the relay if any. */
async function startCommand(
  commands: Commands,
  slot: number,
  argv: readonly string[],
  given: ExecOptions,
): Promise<ExecResult> {
  const { dir, run, runAs, binds, egress } = commands;
  let mount: string | undefined;
  let layers: OverlayMount[] = [];
  if (dir.mode === "overlay") {
    const work = await workDir(dir, slot, runAs);
    mount = overlayOptions(dir.lower as string, dir.upper, work);
    if (mount === undefined)
      throw new WarrantError("sandbox/overlay-unavailable", `cannot mount over ${dir.base}`);
    layers = await dependencyOverlays(binds, slot, runAs);
  }
  const exec =
    binds.pathPrefix.length === 0
      ? given
      : {
          ...given,
          env: { ...given.env, PATH: toolchainPath(binds, given.env?.PATH ?? SANDBOX_PATH) },
        };
  if (egress === undefined) return run(argv, exec, mount, undefined, layers);
  return run(relayArgv(argv), exec, mount, egress.hostDir, layers);
}

/** What changed in the environment's workspace against its baseline, within `bounds`. */
function changesOf(
  dir: EnvironmentDir,
  pin: PinnedBaseline,
  onHash: HashHook | undefined,
  opaque: OpaqueMemo,
  bounds: ChangeBounds,
) {
  const opts = {
    upper: dir.upper,
    baseline: pin,
    onHash,
    maxEntries: bounds.maxEntries,
    timeMs: bounds.timeMs,
  };
  return dir.mode === "overlay"
    ? overlayChanges({ ...opts, opaque })
    : copyChanges({
        ...opts,
        ...(dir.copiedUntilNs === undefined ? {} : { copiedUntilNs: dir.copiedUntilNs }),
      });
}

/** A whole workspace file of at most `max` bytes (`sandbox/too-large` past it). */
async function readWhole(
  view: LayeredView,
  relPath: string,
  max: number,
): Promise<Result<Uint8Array>> {
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
}

function managedEnvironment(
  backend: SandboxBackend,
  dir: EnvironmentDir,
  pin: PinnedBaseline,
  run: ExecLine,
  runAs: RunAs | undefined,
  hooks: SandboxHooks | undefined,
  egress: Egress | undefined,
  binds: HostBinds,
  releasePin: () => Promise<void>,
): Environment {
  const commands: Commands = {
    dir,
    run,
    runAs,
    binds,
    egress,
    running: new Set(),
    slots: new Set(),
    destroyed: false,
  };
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
  const changes = (bounds: ChangeBounds) => changesOf(dir, pin, hooks?.onHash, opaque, bounds);
  const environment: Environment = {
    id: dir.id,
    backend,
    mode: dir.mode,
    root: dir.workspace,
    exec: (argv, opts) => execIn(commands, argv, opts),
    writeFile: (relPath, bytes) => view.write(relPath, bytes),
    readFile: (relPath, opts) => readWhole(view, relPath, opts?.maxBytes ?? DEFAULT_READ_LIMIT),
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
      commands.destroyed = true;
      for (const r of commands.running) r.controller.abort();
      await Promise.allSettled([...commands.running].map((r) => r.done));
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
