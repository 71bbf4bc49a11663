// The host side of an environment: its private directory (a copy of the baseline), confined file
// access inside it, snapshots and removal. Shared by every sandbox backend.
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import {
  chmod,
  cp,
  lchown,
  lstat,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  readlink,
  realpath,
  rm,
  unlink,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { digestOfBytes } from "../../core/records/canonical.js";
import { fail, ok, type Problem, type Result, WarrantError } from "../../core/result.js";
import { isEnvironmentName } from "../../core/sandbox/sandbox-port.js";
import { normaliseRelativePath } from "../../core/taskpack/relative-path.js";

/** The uid/gid that sandboxed commands run as when the host runs as root. */
export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

export interface EnvironmentDir {
  readonly id: string;
  /** The private directory holding everything of this environment (mode 0700). */
  readonly base: string;
  /** The workspace copy: the only path a contained command may write. */
  readonly workspace: string;
  /** An empty directory a backend may use to assemble the command's root. */
  readonly stage: string;
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

/** Where the environment named `name` lives under `tempRoot` (the name is checked). */
export function namedEnvironmentBase(tempRoot: string, name: string): string {
  return path.join(tempRoot, `${ENV_DIR_PREFIX}${checkedName(name)}`);
}

/**
 * Create the private directory and copy the baseline into it (symlinks copied as links). With a
 * name the directory is `warrant-env-<name>`, replacing whatever a dead attempt left there; a
 * directory appearing at that path between the removal and the creation is refused (EEXIST), never
 * adopted.
 */
export async function createEnvironmentDir(
  baselineDir: string,
  runAs: RunAs | undefined,
  tempRoot: string = tmpdir(),
  name?: string,
): Promise<EnvironmentDir> {
  const id = `env-${randomBytes(8).toString("hex")}`;
  let base: string;
  if (name === undefined) base = await mkdtemp(path.join(tempRoot, ENV_DIR_PREFIX));
  else {
    base = namedEnvironmentBase(tempRoot, name);
    if (!(await removeTree(base))) {
      throw new WarrantError("sandbox/leftover", `cannot remove the leftover ${base}`);
    }
    await mkdir(base, { mode: 0o700 });
    await chmod(base, 0o700);
  }
  const workspace = path.join(base, "workspace");
  const stage = path.join(base, "stage");
  try {
    await cp(baselineDir, workspace, { recursive: true, verbatimSymlinks: true, force: true });
    await mkdir(workspace, { recursive: true });
    await mkdir(stage);
    if (runAs !== undefined) await chownTree(base, runAs);
  } catch (e) {
    await removeTree(base);
    throw e;
  }
  return { id, base, workspace, stage };
}

/** Remove the named environment's directory if a dead process left one; true once none is there. */
export async function discardNamedEnvironmentDir(
  tempRoot: string,
  name: string,
): Promise<{ confirmed: boolean }> {
  return { confirmed: await removeTree(namedEnvironmentBase(tempRoot, name)) };
}

async function chownTree(dir: string, runAs: RunAs): Promise<void> {
  await lchown(dir, runAs.uid, runAs.gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(p, runAs);
    else await lchown(p, runAs.uid, runAs.gid);
  }
}

function outsidePolicy(relPath: string, message: string, reason: string): Problem {
  return {
    code: "workbench/patch-outside-policy",
    path: "",
    message: `${relPath}: ${message}`,
    detail: { reason },
  };
}

function inside(realRoot: string, p: string): boolean {
  return p === realRoot || p.startsWith(`${realRoot}${path.sep}`);
}

/**
 * The host path a workspace-relative path may be written or read at: its existing part resolved
 * through symlinks must stay inside the workspace. A final symlink is followed only when its real
 * target is inside; a dangling one is refused (writing would create its target elsewhere).
 */
export async function confinedPath(workspace: string, relPath: string): Promise<Result<string>> {
  const norm = normaliseRelativePath(relPath);
  if (!norm.ok) {
    const e = norm.errors[0] as Problem;
    return fail([outsidePolicy(relPath, e.message, String(e.detail?.reason))]);
  }
  const realRoot = await realpath(workspace);
  const parts = norm.value.split("/");
  let current = realRoot;
  for (const [i, part] of parts.entries()) {
    const next = path.join(current, part);
    let st: Awaited<ReturnType<typeof lstat>>;
    try {
      st = await lstat(next);
    } catch {
      // The rest does not exist yet: it will be created inside `current`.
      return ok(path.join(current, ...parts.slice(i)));
    }
    if (st.isSymbolicLink()) {
      let real: string;
      try {
        real = await realpath(next);
      } catch {
        return fail([outsidePolicy(relPath, "a dangling symlink is on the path", "symlink")]);
      }
      if (!inside(realRoot, real)) {
        return fail([
          outsidePolicy(relPath, "a symlink on the path leaves the workspace", "symlink-escape"),
        ]);
      }
      current = real;
    } else {
      current = next;
    }
  }
  return ok(current);
}

export async function writeConfined(
  dir: EnvironmentDir,
  runAs: RunAs | undefined,
  relPath: string,
  bytes: Uint8Array,
): Promise<Result<{ readonly path: string }>> {
  const target = await confinedPath(dir.workspace, relPath);
  if (!target.ok) return target;
  const parent = path.dirname(target.value);
  try {
    const firstCreated = await mkdir(parent, { recursive: true });
    // O_NOFOLLOW: a symlink planted between the check and the write is refused, not followed.
    const fh = await open(
      target.value,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
      0o644,
    );
    try {
      await fh.writeFile(bytes);
      if (runAs !== undefined) await fh.chown(runAs.uid, runAs.gid);
    } finally {
      await fh.close();
    }
    if (runAs !== undefined && firstCreated !== undefined) {
      for (let d = parent; d.length >= firstCreated.length; d = path.dirname(d)) {
        await lchown(d, runAs.uid, runAs.gid);
      }
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return fail([
      {
        code: code === "ELOOP" ? "workbench/patch-outside-policy" : "sandbox/write-failed",
        path: "",
        message: `${relPath}: ${(e as Error).message}`,
      },
    ]);
  }
  const norm = normaliseRelativePath(relPath);
  return ok({ path: norm.ok ? norm.value : relPath });
}

export async function readConfined(
  dir: EnvironmentDir,
  relPath: string,
): Promise<Result<Uint8Array>> {
  const target = await confinedPath(dir.workspace, relPath);
  if (!target.ok) return target;
  try {
    const fh = await open(target.value, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return ok(new Uint8Array(await fh.readFile()));
    } finally {
      await fh.close();
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return fail([
      {
        code: code === "ENOENT" ? "sandbox/not-found" : "sandbox/read-failed",
        path: "",
        message: `${relPath}: ${code === "ENOENT" ? "no such file" : (e as Error).message}`,
      },
    ]);
  }
}

export async function removeConfined(
  dir: EnvironmentDir,
  relPath: string,
): Promise<Result<{ readonly path: string }>> {
  const target = await confinedPath(dir.workspace, relPath);
  if (!target.ok) return target;
  try {
    await unlink(target.value);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return fail([
      {
        code: code === "ENOENT" ? "sandbox/not-found" : "sandbox/remove-failed",
        path: "",
        message: `${relPath}: ${(e as Error).message}`,
      },
    ]);
  }
  return ok({ path: path.relative(dir.workspace, target.value).split(path.sep).join("/") });
}

/** Digest of every entry under the workspace (see Environment.snapshot). */
export async function snapshotTree(workspace: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string, rel: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const p = path.join(dir, entry.name);
      const r = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(p, r);
      else if (entry.isSymbolicLink()) {
        out.set(r, `symlink:${digestOfBytes(new TextEncoder().encode(await readlink(p)))}`);
      } else if (entry.isFile()) out.set(r, digestOfBytes(new Uint8Array(await readFile(p))));
      else out.set(r, "special:");
    }
  };
  await walk(workspace, "");
  return out;
}

/** Remove the environment's directory; confirmed only when it no longer exists. */
export async function removeEnvironmentDir(dir: EnvironmentDir): Promise<{ confirmed: boolean }> {
  return { confirmed: await removeTree(dir.base) };
}

/** Remove a directory tree (a symlink itself, never its target); true once nothing is at `base`. */
async function removeTree(base: string): Promise<boolean> {
  try {
    await rm(base, { recursive: true, force: true, maxRetries: 2 });
  } catch {
    // A command may have left directories without write permission: restore and retry.
    await restoreWritable(base).catch(() => undefined);
    await rm(base, { recursive: true, force: true }).catch(() => undefined);
  }
  return lstat(base).then(
    () => false,
    (e: NodeJS.ErrnoException) => e.code === "ENOENT",
  );
}

async function restoreWritable(dir: string): Promise<void> {
  await chmod(dir, 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await restoreWritable(path.join(dir, entry.name));
  }
}
