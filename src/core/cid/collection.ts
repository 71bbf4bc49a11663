// iroh collections (docs/spec/definitions.md): the `CollectionV0.` metadata blob, the BLAKE3 hash sequence, and its
// CID (codec blake3-hashseq). Entries are sorted by the UTF-8 bytes of their names.
import { WarrantError } from "../result.js";
import { BLAKE3_DIGEST_BYTES, blake3Digest, CODEC_BLAKE3_HASHSEQ, cidFromDigest } from "./cid.js";

const encoder = new TextEncoder();
const HEADER = encoder.encode("CollectionV0.");

export interface CollectionEntry {
  /** `/`-separated path relative to the collection's root. */
  readonly name: string;
  readonly bytes: Uint8Array;
}

export interface HashedCollectionEntry {
  readonly name: string;
  /** BLAKE3-256 of the entry's bytes. */
  readonly hash: Uint8Array;
}

/** Compares two strings by their UTF-8 bytes (not UTF-16 code units, which order differently). */
export function compareUtf8(a: string, b: string): number {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = (x[i] as number) - (y[i] as number);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Unsigned LEB128. */
export function leb128(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new WarrantError("cid/leb128", `cannot encode ${n} as unsigned LEB128`);
  }
  const out: number[] = [];
  let v = n;
  do {
    let byte = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) byte |= 0x80;
    out.push(byte);
  } while (v > 0);
  return Uint8Array.from(out);
}

/** The metadata blob: `CollectionV0.`, LEB128 count, then per name LEB128 byte length and bytes. */
export function collectionMetadata(names: readonly string[]): Uint8Array {
  const parts: Uint8Array[] = [HEADER, leb128(names.length)];
  for (const name of names) {
    const bytes = encoder.encode(name);
    parts.push(leb128(bytes.length), bytes);
  }
  return concat(parts);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The collection CID from names and their BLAKE3 hashes. Entries may come in any order; names must
 * be unique (a duplicate is a caller bug and throws).
 */
export function collectionCidFromHashes(entries: readonly HashedCollectionEntry[]): string {
  const sorted = [...entries].sort((a, b) => compareUtf8(a.name, b.name));
  for (let i = 1; i < sorted.length; i++) {
    if (
      (sorted[i - 1] as HashedCollectionEntry).name === (sorted[i] as HashedCollectionEntry).name
    ) {
      throw new WarrantError(
        "cid/duplicate-name",
        `two collection entries are named ${JSON.stringify((sorted[i] as HashedCollectionEntry).name)}`,
      );
    }
  }
  const seq = new Uint8Array(BLAKE3_DIGEST_BYTES * (sorted.length + 1));
  seq.set(blake3Digest(collectionMetadata(sorted.map((e) => e.name))), 0);
  sorted.forEach((e, i) => {
    if (e.hash.length !== BLAKE3_DIGEST_BYTES) {
      throw new WarrantError("cid/hash-length", `hash of ${e.name} is not 32 bytes`);
    }
    seq.set(e.hash, BLAKE3_DIGEST_BYTES * (i + 1));
  });
  return cidFromDigest(CODEC_BLAKE3_HASHSEQ, blake3Digest(seq));
}

/** The collection CID of (name, bytes) entries (`bagaachra…`). */
export function collectionCid(entries: readonly CollectionEntry[]): string {
  return collectionCidFromHashes(
    entries.map((e) => ({ name: e.name, hash: blake3Digest(e.bytes) })),
  );
}
