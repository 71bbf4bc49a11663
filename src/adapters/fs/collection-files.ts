// The file-system side of collection CIDs (docs/spec/definitions.md): walking a skill or memory directory — every
// regular file, hidden ones included, symbolic links inside skipped, names `/`-separated and sorted
// by UTF-8 bytes — and streaming each file through the core's BLAKE3. The hashing rules stay in core.
import { open, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { blake3Digest, blake3Hasher } from "../../core/cid/cid.js";
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

/** Files up to this size are read whole, ahead of hashing; larger ones are streamed in turn. */
const WHOLE_FILE_MAX = 4 * CHUNK;
/** Reads kept in flight while the main thread hashes: hides per-file open/read/close latency. */
const READ_AHEAD = 32;

/** A small file's bytes, or null when the file is large and must be streamed. */
async function readSmall(file: string): Promise<Uint8Array | null> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    if (size > WHOLE_FILE_MAX) return null;
    const buffer = new Uint8Array(size);
    let filled = 0;
    while (filled < size) {
      const { bytesRead } = await handle.read(buffer, filled, size - filled, null);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    // A file that changes while it is hashed has no one right CID; its size as stat saw it bounds it.
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/** BLAKE3 hashes of the files, in order, reading ahead while hashing. */
async function hashFiles(files: readonly string[]): Promise<Uint8Array[]> {
  const hashes: Uint8Array[] = [];
  const pending: Array<Promise<Uint8Array | null>> = [];
  let next = 0;
  const fill = () => {
    while (next < files.length && pending.length < READ_AHEAD) {
      const p = readSmall(files[next++] as string);
      // Rejections are awaited in order below; this only keeps them from being reported unhandled.
      p.catch(() => undefined);
      pending.push(p);
    }
  };
  fill();
  for (let i = 0; i < files.length; i++) {
    const bytes = await (pending.shift() as Promise<Uint8Array | null>);
    fill();
    hashes.push(bytes === null ? await hashFile(files[i] as string) : blake3Digest(bytes));
  }
  return hashes;
}

/** A collection's files with their BLAKE3 hashes (as the CID covers them) and its CID. */
export interface HashedCollection {
  readonly cid: string;
  /** Each file's BLAKE3-256, hex, by its `/`-separated name. */
  readonly hashes: ReadonlyMap<string, string>;
  /** Where each file is on this machine, by name. */
  readonly paths: ReadonlyMap<string, string>;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/**
 * The collection of a directory, or of a single file as a collection of one named by the last
 * segment of its path: its CID and each file's hash.
 */
export async function hashedCollectionOfPath(target: string): Promise<HashedCollection> {
  const info = await stat(target);
  const files = info.isFile()
    ? [{ name: path.basename(target), path: target }]
    : await collectionFiles(target);
  const hashes = info.isFile()
    ? [await hashFile(target)]
    : await hashFiles(files.map((f) => f.path));
  const entries = files.map((f, i) => ({ name: f.name, hash: hashes[i] as Uint8Array }));
  return {
    cid: collectionCidFromHashes(entries),
    hashes: new Map(entries.map((e) => [e.name, hex(e.hash)])),
    paths: new Map(files.map((f) => [f.name, f.path])),
  };
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
  const hashes = await hashFiles(files.map((f) => f.path));
  return collectionCidFromHashes(
    files.map((f, i) => ({ name: f.name, hash: hashes[i] as Uint8Array })),
  );
}
