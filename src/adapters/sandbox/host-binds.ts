// What an environment shows of the host besides its workspace: the pin's dependency folders (an
// overlay each over the host's folder in overlay mode — copy-on-write, its own upper layer, never
// part of the workspace's changes — or a read-only bind in copy mode) and the pack's toolchains
// (read-only at their own path, their `bin/` first on PATH).
//
// Commands run as an unprivileged uid when the host runs as root, and that uid may not be able to
// walk to a folder of the host (a workspace under a 0700 folder, a toolchain under /root). Then
// each such folder is first bound, by the host's root in a private mount namespace of the command
// alone, onto an empty folder of the environment (`bind/dep-N`, `bind/tool-N`): the rest of the
// chain reaches it there. Nothing is ever mounted in the host's own namespace.
import { chown, mkdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { WarrantError } from "../../core/result.js";
import type { PinnedBaseline, RunAs } from "./baseline-pin.js";
import type { EnvironmentDir } from "./environment-dir.js";
import type { OuterMount } from "./outer-shell.js";
import { overlayOptions } from "./overlay-mount.js";

export interface DependencyLayer {
  /** Where commands see it: the workspace path joined with its relative path. */
  readonly target: string;
  /** The folder laid there (the host's own, or its `bind/dep-N` stand-in). */
  readonly source: string;
  /** Overlay mode: its writable layer and the folder holding its work directories. */
  readonly upper: string | undefined;
  readonly base: string | undefined;
}

export interface ToolchainBind {
  /** Where commands see it: its own host path. */
  readonly target: string;
  readonly source: string;
}

export interface HostBinds {
  readonly dependencies: readonly DependencyLayer[];
  readonly toolchains: readonly ToolchainBind[];
  /** `[host folder, stand-in]` pairs bound by the host's root first (empty unless root). */
  readonly rootBinds: readonly (readonly [string, string])[];
  /** The toolchains' `bin/` folders, put first on PATH. */
  readonly pathPrefix: readonly string[];
}

export const NO_BINDS: HostBinds = {
  dependencies: [],
  toolchains: [],
  rootBinds: [],
  pathPrefix: [],
};

/** Make the folders the environment's dependency layers and toolchain binds need. */
export async function prepareHostBinds(
  dir: EnvironmentDir,
  pin: PinnedBaseline,
  toolchains: readonly string[],
  runAs: RunAs | undefined,
): Promise<HostBinds> {
  if (pin.dependencies.length === 0 && toolchains.length === 0) return NO_BINDS;
  const own = async (p: string, mode: number) => {
    await mkdir(p, { mode });
    if (runAs !== undefined) await chown(p, runAs.uid, runAs.gid);
  };
  const rootBinds: (readonly [string, string])[] = [];
  const standIn = async (host: string, name: string) => {
    if (runAs === undefined) return host;
    const at = path.join(dir.base, "bind", name);
    await own(at, 0o755);
    rootBinds.push([host, at]);
    return at;
  };
  if (runAs !== undefined) await own(path.join(dir.base, "bind"), 0o700);
  const dependencies: DependencyLayer[] = [];
  for (const [i, d] of pin.dependencies.entries()) {
    const source = await standIn(d.real, `dep-${i}`);
    let upper: string | undefined;
    let base: string | undefined;
    if (dir.mode === "overlay") {
      base = path.join(dir.base, `dep-${i}`);
      upper = path.join(base, "upper");
      await own(base, 0o700);
      // The merged folder takes the upper root's mode: the host folder's.
      await own(upper, d.mode);
    }
    dependencies.push({ target: path.join(dir.workspace, d.rel), source, upper, base });
  }
  const binds: ToolchainBind[] = [];
  const pathPrefix: string[] = [];
  for (const [i, tc] of toolchains.entries()) {
    const real = await realpath(tc).catch(() => undefined);
    const st = real === undefined ? undefined : await stat(real).catch(() => undefined);
    if (real === undefined || st?.isDirectory() !== true) {
      throw new WarrantError("sandbox/toolchain-missing", `the toolchain ${tc} is not a folder`);
    }
    binds.push({ target: tc, source: await standIn(real, `tool-${i}`) });
    const bin = await stat(path.join(real, "bin")).catch(() => undefined);
    if (bin?.isDirectory() === true) pathPrefix.push(path.join(tc, "bin"));
  }
  return { dependencies, toolchains: binds, rootBinds, pathPrefix };
}

/** An overlay to mount inside the command's namespaces: its options and where. */
export interface OverlayMount {
  readonly options: string;
  readonly target: string;
}

/**
 * The dependency overlays of the `slot`-th command running at once (each gets its own work
 * directories). Empty in copy mode, where the backends bind the folders read-only instead.
 */
export async function dependencyOverlays(
  binds: HostBinds,
  slot: number,
  runAs: RunAs | undefined,
): Promise<OverlayMount[]> {
  const out: OverlayMount[] = [];
  for (const d of binds.dependencies) {
    if (d.upper === undefined || d.base === undefined) continue;
    const work = path.join(d.base, `work-${slot}`);
    await mkdir(work, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "EEXIST") throw e;
    });
    if (runAs !== undefined) await chown(work, runAs.uid, runAs.gid);
    const options = overlayOptions(d.source, d.upper, work);
    if (options === undefined) {
      throw new WarrantError(
        "sandbox/overlay-unavailable",
        `cannot lay the dependency ${d.target} over ${d.source}: its path has a character mount options cannot carry`,
      );
    }
    out.push({ options, target: d.target });
  }
  return out;
}

// Run by the host's root in a mount namespace of the command alone (propagation private): bind each
// host folder onto its stand-in, read-only, then run the rest of the chain.
const ROOT_BIND_SCRIPT = `n=$1; shift
while [ "$n" -gt 0 ]; do
  mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" || exit 125
  shift 2; n=$((n-1))
done
exec "$@"`;

/** `argv` behind the root binds (unchanged when there are none). */
export function withRootBinds(
  binds: HostBinds,
  unsharePath: string,
  argv: readonly string[],
): string[] {
  if (binds.rootBinds.length === 0) return [...argv];
  return [
    unsharePath,
    "--mount",
    "--propagation",
    "private",
    "--",
    "/bin/sh",
    "-c",
    ROOT_BIND_SCRIPT,
    "warrant-binds",
    String(binds.rootBinds.length),
    ...binds.rootBinds.flat(),
    ...argv,
  ];
}

/**
 * The unshare backend's further mounts, targets inside the new root: the dependencies (overlays
 * given `layers`, in overlay mode; read-only binds in copy mode), then the toolchains, read-only;
 * a bind's mountpoint is made when it is missing.
 */
export function moreMounts(
  binds: HostBinds,
  layers: readonly OverlayMount[] | undefined,
): OuterMount[] {
  const ro = (m: { readonly source: string; readonly target: string }): OuterMount => ({
    source: m.source,
    target: m.target,
    type: "none",
    flags: "",
    data: "bind,ro,X-mount.mkdir",
  });
  return [
    ...(layers === undefined
      ? binds.dependencies.map(ro)
      : layers.map((l) => ({
          source: "overlay",
          target: l.target,
          type: "overlay",
          flags: "",
          data: l.options,
        }))),
    ...binds.toolchains.map(ro),
  ];
}

/**
 * What the disk watchdog measures: the workspace's writable layer, or — when dependency layers
 * take writes too — the whole environment directory that holds them all.
 */
export function writableRoot(dir: EnvironmentDir, binds: HostBinds): string {
  return binds.dependencies.some((d) => d.upper !== undefined) ? dir.base : dir.upper;
}

/** PATH with the toolchains' `bin/` folders first (unchanged without any). */
export function toolchainPath(binds: HostBinds, given: string): string {
  return binds.pathPrefix.length === 0 ? given : [...binds.pathPrefix, given].join(":");
}
