// The host side of an environment: its private directory (`warrant-env-*`, mode 0700) laid out for
// its mode, and its removal. Overlay mode: `workspace` (the mountpoint commands see the merged tree
// at; empty on the host), `upper` (every change), `work-N` (overlayfs's work directories, one per
// command running at once), `stage` (the unshare backend's root). Copy mode: `workspace` is a
// reflinked copy of the pinned baseline, `stage` as above. Both: `environment-id`, the random mark
// that tells this environment's directory from another made later under the same name.
import { randomBytes } from "node:crypto";
import { closeSync, constants, openSync, realpathSync, statSync, writeSync } from "node:fs";
import { chmod, chown, lstat, mkdir, mkdtemp, open, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type EnvironmentMode, isEnvironmentName } from "../../core/ports/sandbox.js";
import { WarrantError } from "../../core/result.js";
import { type PinnedBaseline, type RunAs, treeDigests } from "./baseline-pin.js";
import { hostCommand } from "./host-command.js";
import { fstatBig } from "./host-fs.js";
import { removePath } from "./tree-walk.js";

export type { RunAs } from "./baseline-pin.js";

export interface EnvironmentDir {
  readonly id: string;
  /** The private directory holding everything of this environment (mode 0700). */
  readonly base: string;
  /** The workspace's path as commands see it (in copy mode also its host copy). */
  readonly workspace: string;
  /** An empty directory a backend may use to assemble the command's root. */
  readonly stage: string;
  readonly mode: EnvironmentMode;
  /** The writable layer on the host: `upper` in overlay mode, `workspace` in copy mode. */
  readonly upper: string;
  /** Overlay mode: the pinned baseline's tree, the read-only lower layer. */
  readonly lower: string | undefined;
  /** Copy mode: the ctime (ns) the copy was complete at; nothing older has changed since. */
  readonly copiedUntilNs: bigint | undefined;
  /** What `base` holds to say it is this environment's: what is there later may be another's. */
  readonly identity?: DirIdentity;
}

/** The mark an environment's directory carries (a file of random text in it). */
export interface DirIdentity {
  readonly mark: string;
}

/** The mark's file in an environment's directory (beside workspace/, never inside it). */
const MARK_FILE = "environment-id";

/** The mark in `base`, undefined when it has none (or none can be read), "gone" when base is. */
async function markOf(base: string): Promise<string | undefined | "gone"> {
  try {
    const f = await open(
      path.join(base, MARK_FILE),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
    try {
      const buf = Buffer.alloc(256);
      const { bytesRead } = await f.read(buf, 0, buf.length, 0);
      return buf.subarray(0, bytesRead).toString("utf8");
    } finally {
      await f.close();
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
    return (await lstat(base).then(
      () => true,
      () => false,
    ))
      ? undefined
      : "gone";
  }
}

const ENV_DIR_PREFIX = "warrant-env-";

function checkedName(name: string): string {
  if (!isEnvironmentName(name)) {
    throw new WarrantError(
      "sandbox/invalid-name",
      `environment name ${JSON.stringify(name)} is not [a-z0-9-]{1,64}`,
    );
  }
  return name;
}

/**
 * The first folder on the way to `tempRoot` (itself included) that `who` cannot search, with its
 * mode and owner; undefined when every one can be passed (the commands' uid must reach the
 * environment's workspace and the pinned baseline under it). Supplementary groups do not count:
 * commands run with none.
 */
export function blockedFolder(
  tempRoot: string,
  who: RunAs,
): { readonly folder: string; readonly mode: number; readonly uid: number } | undefined {
  let at = "/";
  const real = realpathSync(tempRoot);
  for (const part of ["", ...real.split("/").filter((p) => p !== "")]) {
    at = path.join(at, part);
    const st = statSync(at);
    const mode = st.mode & 0o7777;
    const bit = st.uid === who.uid ? 0o100 : st.gid === who.gid ? 0o010 : 0o001;
    if ((mode & bit) === 0) return { folder: at, mode, uid: st.uid };
  }
  return undefined;
}

/** Refuse a temp root the commands' uid cannot reach (`sandbox/tmpdir-unreachable`). */
export function checkTempRoot(tempRoot: string, runAs: RunAs | undefined): void {
  if (runAs === undefined) return;
  const blocked = blockedFolder(tempRoot, runAs);
  if (blocked === undefined) return;
  const mode = `0${blocked.mode.toString(8).padStart(3, "0")}`;
  throw new WarrantError(
    "sandbox/tmpdir-unreachable",
    `commands run as uid ${runAs.uid} and cannot reach the temp directory ${tempRoot}: ${blocked.folder} is mode ${mode} (owner uid ${blocked.uid}); let them search it (chmod o+x ${blocked.folder}) or set TMPDIR to a folder they can reach`,
  );
}

/** Where the environment named `name` lives under `tempRoot` (the name is checked). */
export function namedEnvironmentBase(tempRoot: string, name: string): string {
  return path.join(tempRoot, `${ENV_DIR_PREFIX}${checkedName(name)}`);
}

/** An overlayfs work directory for the `slot`-th command running at once in the environment. */
export async function workDir(dir: EnvironmentDir, slot: number, runAs: RunAs | undefined) {
  const p = path.join(dir.base, `work-${slot}`);
  try {
    await mkdir(p, { mode: 0o700 });
    if (runAs !== undefined) await chown(p, runAs.uid, runAs.gid);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  return p;
}

/**
 * Make the private directory over `pin` in `mode`. With a name the directory is
 * `warrant-env-<name>`, replacing whatever a dead attempt left there; a directory appearing at
 * that path between the removal and the creation is refused (EEXIST), never adopted. `onMade` is
 * told its path as soon as it exists.
 */
export async function createEnvironmentDir(
  pin: PinnedBaseline,
  mode: EnvironmentMode,
  runAs: RunAs | undefined,
  tempRoot: string = tmpdir(),
  name?: string,
  onMade?: (dir: { readonly base: string; readonly identity: DirIdentity }) => void,
): Promise<EnvironmentDir> {
  const id = `env-${randomBytes(8).toString("hex")}`;
  let base: string;
  if (name === undefined) base = await mkdtemp(path.join(tempRoot, ENV_DIR_PREFIX));
  else {
    base = namedEnvironmentBase(tempRoot, name);
    if (!(await removePath(base))) {
      throw new WarrantError("sandbox/leftover", `cannot remove the leftover ${base}`);
    }
    await mkdir(base, { mode: 0o700 });
  }
  const identity: DirIdentity = { mark: `${id}-${randomBytes(8).toString("hex")}` };
  await writeFile(path.join(base, MARK_FILE), identity.mark, { mode: 0o600, flag: "wx" });
  // Told before anything else is put in it: a process stopped from here on can still remove it.
  onMade?.({ base, identity });
  await chmod(base, 0o700);
  const workspace = path.join(base, "workspace");
  const stage = path.join(base, "stage");
  const upper = mode === "overlay" ? path.join(base, "upper") : workspace;
  let copiedUntilNs: bigint | undefined;
  try {
    const own = async (p: string) => {
      if (runAs !== undefined) await chown(p, runAs.uid, runAs.gid);
    };
    await own(base);
    if (mode === "overlay") {
      await mkdir(workspace, { mode: 0o755 });
      await mkdir(upper);
      // The merged root takes the upper root's mode: the baseline's.
      await chmod(upper, pin.root.mode);
      await own(workspace);
      await own(upper);
    } else {
      // As root -a keeps the pin's owner (the commands' uid); otherwise the files are ours anyway.
      await hostCommand("sandbox/copy-failed", [
        "cp",
        "-a",
        "-T",
        "--reflink=auto",
        "--",
        pin.tree,
        workspace,
      ]);
      copiedUntilNs = await settledClock(base);
    }
    await mkdir(stage);
    await own(stage);
  } catch (e) {
    await removePath(base);
    throw e;
  }
  return {
    id,
    base,
    workspace,
    stage,
    mode,
    upper,
    lower: mode === "overlay" ? pin.tree : undefined,
    copiedUntilNs,
    identity,
  };
}

/**
 * The file system's clock once the copy is complete: a probe file's ctime after the copy, then
 * waited past (the clock may be as coarse as a tick), so any later change carries a later ctime.
 */
async function settledClock(base: string): Promise<bigint> {
  const probe = path.join(base, "clock");
  const stamp = () => {
    const fd = openSync(probe, "w", 0o600);
    try {
      writeSync(fd, "x");
      return fstatBig(fd).ctimeNs;
    } finally {
      closeSync(fd);
    }
  };
  const done = stamp();
  for (let i = 0; i < 1000 && stamp() <= done; i += 1) {
    await new Promise((r) => setTimeout(r, 1));
  }
  return done;
}

/** Remove the named environment's directory if a dead process left one; true once none is there. */
export async function discardNamedEnvironmentDir(
  tempRoot: string,
  name: string,
): Promise<{ confirmed: boolean }> {
  return { confirmed: await removePath(namedEnvironmentBase(tempRoot, name)) };
}

/**
 * Remove a dead environment's directory given as its journaled root (`<base>/…`): only ever a
 * `warrant-env-*` directory, else not confirmed.
 */
export async function discardEnvironmentAt(root: string): Promise<{ confirmed: boolean }> {
  const base = path.dirname(root);
  if (!path.basename(base).startsWith("warrant-env-")) return { confirmed: false };
  return removeEnvironmentDir({ base });
}

/**
 * Remove the environment's directory; confirmed only when it no longer exists. Given the identity
 * it was made with, a directory now at `base` that is another (a later driver of the same run made
 * its environment under the same name after this one was removed) is not this environment's to
 * remove: this one is gone, confirmed, and the other is left alone.
 */
export async function removeEnvironmentDir(dir: {
  readonly base: string;
  readonly identity?: DirIdentity | undefined;
}): Promise<{ confirmed: boolean }> {
  if (dir.identity !== undefined) {
    const mark = await markOf(dir.base);
    if (mark === "gone") return { confirmed: true };
    // Another environment's mark: this one was removed already and the name made again since.
    if (mark !== undefined && mark !== dir.identity.mark) return { confirmed: true };
  }
  const gone = await removePath(dir.base);
  const absent = await lstat(dir.base).then(
    () => false,
    (e: NodeJS.ErrnoException) => e.code === "ENOENT",
  );
  return { confirmed: gone && absent };
}

/** Digest of every entry under a host folder (see Environment.snapshot), by relative path. */
export async function snapshotTree(dir: string): Promise<Map<string, string>> {
  return new Map(await treeDigests(dir));
}
