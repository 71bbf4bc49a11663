// The full-copy environment path this project used before copy-on-write environments, kept only
// as the bench's baseline: every environment a recursive copy of the workspace chowned file by
// file, every verification two full snapshots (the baseline's and the environment's, every file
// read whole and hashed), every removal a recursive rm.
import { cp, lchown, mkdtemp, readdir, readFile, readlink, rm } from "node:fs/promises";
import path from "node:path";
import { digestOfBytes } from "../../src/core/records/canonical.js";

export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

async function chownTree(dir: string, runAs: RunAs): Promise<void> {
  await lchown(dir, runAs.uid, runAs.gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(p, runAs);
    else await lchown(p, runAs.uid, runAs.gid);
  }
}

/** A private copy of `baseline` under `tempRoot`, as environments used to be made. */
export async function legacyCreate(
  baseline: string,
  tempRoot: string,
  runAs: RunAs | undefined,
): Promise<string> {
  const base = await mkdtemp(path.join(tempRoot, "warrant-env-"));
  const workspace = path.join(base, "workspace");
  await cp(baseline, workspace, { recursive: true, verbatimSymlinks: true, force: true });
  if (runAs !== undefined) await chownTree(base, runAs);
  return base;
}

/** Every file's digest, each read whole. */
export async function legacySnapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string, rel: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      const r = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(p, r);
      else if (entry.isSymbolicLink()) {
        out.set(r, `symlink:${digestOfBytes(new TextEncoder().encode(await readlink(p)))}`);
      } else if (entry.isFile()) out.set(r, digestOfBytes(new Uint8Array(await readFile(p))));
    }
  };
  await walk(dir, "");
  return out;
}

export async function legacyDestroy(base: string): Promise<void> {
  await rm(base, { recursive: true, force: true, maxRetries: 2 });
}
