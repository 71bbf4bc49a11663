// A regular file under a host directory, read only when its real path stays inside that directory
// (a symlink out of it, a directory, a FIFO or a device is never opened) and it is small enough.
import { constants } from "node:fs";
import { open, realpath } from "node:fs/promises";
import path from "node:path";

/** The file's bytes, or undefined when it is absent, escapes `root`, is not regular or too large. */
export async function readConfinedFile(
  root: string,
  relPath: string,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  if (relPath === "" || path.isAbsolute(relPath) || relPath.split("/").includes(".."))
    return undefined;
  const base = await realpath(root).catch(() => undefined);
  const real = await realpath(path.join(root, relPath)).catch(() => undefined);
  if (base === undefined || real === undefined || !real.startsWith(`${base}${path.sep}`))
    return undefined;
  const fh = await open(
    real,
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  ).catch(() => undefined);
  if (fh === undefined) return undefined;
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > maxBytes) return undefined;
    return new Uint8Array(await fh.readFile());
  } finally {
    await fh.close();
  }
}
