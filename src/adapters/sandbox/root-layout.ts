// What a contained command sees of the host: the system directories read-only, nothing else of
// the host file system (no /home, /root, /work, /var, /run), a private /tmp, a minimal /dev, its
// own /proc, and its workspace writable at the same path as on the host.
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";

export type LayoutEntry =
  | { readonly kind: "ro-dir"; readonly path: string }
  | { readonly kind: "symlink"; readonly path: string; readonly target: string };

const SYSTEM_DIRS = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
  "/opt",
];

/** Device nodes bound into the private /dev (the unshare backend; bwrap's --dev makes its own). */
export const DEVICE_NODES = ["null", "zero", "full", "random", "urandom", "tty"];

/**
 * The read-only part of the layout: the system directories that exist here (merged-/usr links kept
 * as links), the install prefix of the running Node when it lives elsewhere, and `extra` paths.
 */
export function readOnlyLayout(extra: readonly string[] = []): LayoutEntry[] {
  const wanted = [...SYSTEM_DIRS];
  const nodePrefix = path.dirname(path.dirname(realpathSync(process.execPath)));
  if (!SYSTEM_DIRS.some((d) => nodePrefix === d || nodePrefix.startsWith(`${d}/`))) {
    wanted.push(nodePrefix);
  }
  wanted.push(...extra.map((p) => path.resolve(p)));
  const out: LayoutEntry[] = [];
  for (const p of [...new Set(wanted)]) {
    try {
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out.push({ kind: "symlink", path: p, target: readlinkSync(p) });
      else if (st.isDirectory()) out.push({ kind: "ro-dir", path: p });
    } catch {
      // Absent here: nothing to expose.
    }
  }
  return out;
}
