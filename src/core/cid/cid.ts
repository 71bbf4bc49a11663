// CIDv1 over BLAKE3-256 (docs/spec/definitions.md): the codecs the project uses, encoding, and a full decode that checks
// every part (multibase, version, codec, multihash, digest length) rather than matching a regex.
import { blake3 } from "@noble/hashes/blake3.js";
import { base32 } from "multiformats/bases/base32";
import { CID } from "multiformats/cid";
import * as Digest from "multiformats/hashes/digest";
import { fail, ok, type Problem, type Result } from "../result.js";

/** Multicodec `raw`: a blob's bytes as they are. */
export const CODEC_RAW = 0x55;
/** Multicodec `json-jcs`: RFC 8785 canonical JSON; the codec of agent-definition content IDs. */
export const CODEC_JSON_JCS = 0xb601;
/** Multicodec `blake3-hashseq`: an iroh hash sequence (a collection). */
export const CODEC_BLAKE3_HASHSEQ = 0x80;
/** Multihash code of BLAKE3 with a 32-byte digest. */
export const MULTIHASH_BLAKE3 = 0x1e;
export const BLAKE3_DIGEST_BYTES = 32;

export const KNOWN_CODECS: ReadonlySet<number> = new Set([
  CODEC_RAW,
  CODEC_JSON_JCS,
  CODEC_BLAKE3_HASHSEQ,
]);

/** BLAKE3-256 of bytes. */
export function blake3Digest(bytes: Uint8Array): Uint8Array {
  return blake3(bytes);
}

/** An incremental BLAKE3-256, for callers that stream a file rather than hold it whole. */
export interface Blake3Hasher {
  update(chunk: Uint8Array): Blake3Hasher;
  digest(): Uint8Array;
}

export function blake3Hasher(): Blake3Hasher {
  const h = blake3.create();
  const hasher: Blake3Hasher = {
    update(chunk) {
      h.update(chunk);
      return hasher;
    },
    digest: () => h.digest(),
  };
  return hasher;
}

/** The base32-lower CIDv1 string of a codec and a BLAKE3-256 digest. */
export function cidFromDigest(codec: number, digest: Uint8Array): string {
  return CID.create(1, codec, Digest.create(MULTIHASH_BLAKE3, digest)).toString();
}

/** A blob CID: codec raw, BLAKE3-256 of the bytes (`bafkr4i…`). */
export function blobCid(bytes: Uint8Array): string {
  return cidFromDigest(CODEC_RAW, blake3(bytes));
}

/** A json-jcs CID: the caller passes the JCS bytes (`baga6yaq6…`). */
export function jsonJcsCid(jcsBytes: Uint8Array): string {
  return cidFromDigest(CODEC_JSON_JCS, blake3(jcsBytes));
}

export interface DecodedCid {
  readonly version: 1;
  readonly codec: number;
  readonly multihash: number;
  readonly digest: Uint8Array;
}

function invalid(message: string): Result<DecodedCid> {
  const problem: Problem = { code: "cid/invalid", path: "", message };
  return fail([problem]);
}

/**
 * Decodes a CID string and checks every part: multibase `b` (base32 lower, zero padding bits),
 * CIDv1, a codec this project knows (or the one expected), multihash BLAKE3 (0x1e) with a 32-byte
 * digest, no trailing bytes, and that re-encoding gives the same text.
 */
export function decodeCid(text: string, expectedCodec?: number): Result<DecodedCid> {
  if (!text.startsWith("b")) return invalid("a CID must be multibase base32 lower ('b' prefix)");
  let bytes: Uint8Array;
  try {
    bytes = base32.decode(text);
  } catch (e) {
    return invalid(`not valid base32: ${(e as Error).message}`);
  }
  let cid: CID;
  try {
    cid = CID.decode(bytes);
  } catch (e) {
    return invalid(`not a CID: ${(e as Error).message}`);
  }
  if (cid.version !== 1) return invalid(`CID version ${cid.version}; version 1 is required`);
  if (expectedCodec !== undefined && cid.code !== expectedCodec) {
    return invalid(
      `codec 0x${cid.code.toString(16)}; expected 0x${expectedCodec.toString(16)} here`,
    );
  }
  if (expectedCodec === undefined && !KNOWN_CODECS.has(cid.code)) {
    return invalid(`unknown codec 0x${cid.code.toString(16)}`);
  }
  if (cid.multihash.code !== MULTIHASH_BLAKE3) {
    return invalid(`multihash 0x${cid.multihash.code.toString(16)}; BLAKE3 (0x1e) is required`);
  }
  if (cid.multihash.digest.length !== BLAKE3_DIGEST_BYTES) {
    return invalid(`digest of ${cid.multihash.digest.length} bytes; 32 are required`);
  }
  if (cid.toString() !== text) return invalid("not the canonical spelling of this CID");
  return ok({
    version: 1,
    codec: cid.code,
    multihash: cid.multihash.code,
    digest: cid.multihash.digest,
  });
}
