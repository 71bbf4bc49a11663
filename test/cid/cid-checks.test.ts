// decodeCid's refusals name what is wrong: the version, the codec, the digest's length; and the
// CIDs it makes are those of the bytes given (each input well formed up to the check that refuses).
import { base32 } from "multiformats/bases/base32";
import { describe, expect, it } from "vitest";
import {
  BLAKE3_DIGEST_BYTES,
  blake3Digest,
  blobCid,
  CODEC_RAW,
  cidFromDigest,
  decodeCid,
} from "../../src/core/cid/cid.js";

const enc = new TextEncoder();
const message = (text: string, codec?: number) => {
  const r = decodeCid(text, codec);
  return r.ok ? "" : `${r.errors[0]?.code} ${r.errors[0]?.path} ${r.errors[0]?.message}`;
};

describe("decodeCid names the part that is wrong", () => {
  it("a CIDv0 spelled in base32 lower: its version", () => {
    // A CIDv0 is a bare SHA-256 multihash: 0x12 0x20 and 32 bytes.
    const v0 = base32.encode(Uint8Array.from([0x12, 0x20, ...new Uint8Array(32).fill(7)]));
    expect(v0.startsWith("b")).toBe(true);
    expect(message(v0)).toMatch(/^cid\/invalid {2}CID version 0; version 1 is required$/);
  });

  it("an unknown codec by its number, when no codec is expected", () => {
    const dagPb = cidFromDigest(0x70, blake3Digest(enc.encode("x")));
    expect(message(dagPb)).toBe("cid/invalid  unknown codec 0x70");
  });

  it("a BLAKE3 digest of another length by its length", () => {
    const short = cidFromDigest(CODEC_RAW, new Uint8Array(16).fill(1));
    expect(message(short)).toBe("cid/invalid  digest of 16 bytes; 32 are required");
    expect(message(cidFromDigest(CODEC_RAW, new Uint8Array(BLAKE3_DIGEST_BYTES)))).toBe("");
  });
});

describe("blobCid", () => {
  it("is the raw CID of BLAKE3 over the bytes given", () => {
    const bytes = enc.encode("hello");
    const cid = blobCid(bytes);
    expect(cid).toBe(cidFromDigest(CODEC_RAW, blake3Digest(bytes)));
    const r = decodeCid(cid, CODEC_RAW);
    expect(r.ok && r.value.digest).toEqual(blake3Digest(bytes));
    expect(blobCid(enc.encode("hellp"))).not.toBe(cid);
  });
});
