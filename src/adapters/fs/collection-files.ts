// The file-system side of collection CIDs (SPEC §2): walking a skill or memory directory — every
// regular file, hidden ones included, symbolic links inside skipped, names `/`-separated and sorted
// by UTF-8 bytes — and streaming each file through the core's BLAKE3. The hashing rules stay in core.
import { open, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { blake3Hasher } from "../../core/cid/cid.js";
import { collectionCidFromHashes, compareUtf8 } from "../../core/cid/collection.js";

export interface CollectionFile {
  /** `/`-separated path relative to the collection root. */
  readonly name: string;
  /** Where the file is on this machine. */
  readonly path: string;
}

const CHUNK = 1 << 20;

/**
 * The regular files under `root`, sorted by the UTF-8 bytes of their names. `root` itself may be a
 * symbolic link (followed); links inside it are skipped, as are sockets, FIFOs and devices.
 */
export async function collectionFiles(root: string): Promise<CollectionFile[]> {
  const files: CollectionFile[] = [];
  async function walk(dir: string, prefix: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const name = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      const full = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) await walk(full, name);
      else if (entry.isFile()) files.push({ name, path: full });
    }
  }
  await walk(root, "");
  return files.sort((a, b) => compareUtf8(a.name, b.name));
}

/** BLAKE3-256 of a file, read in 1 MiB chunks. */
export async function hashFile(file: string): Promise<Uint8Array> {
  const hasher = blake3Hasher();
  const handle = await open(file, "r");
  try {
    const buffer = new Uint8Array(CHUNK);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
      if (bytesRead === 0) break;
      hasher.update(bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return hasher.digest();
}

/**
 * The collection CID of a directory, or of a single file as a collection of one named by the last
 * segment of its path.
 */
export async function collectionCidOfPath(target: string): Promise<string> {
  const info = await stat(target);
  if (info.isFile()) {
    return collectionCidFromHashes([{ name: path.basename(target), hash: await hashFile(target) }]);
  }
  const files = await collectionFiles(target);
  const entries = [];
  for (const f of files) entries.push({ name: f.name, hash: await hashFile(f.path) });
  return collectionCidFromHashes(entries);
}
