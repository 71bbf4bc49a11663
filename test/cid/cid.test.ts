// Blob and collection CIDs and their decoding (docs/spec/definitions.md), with the vectors of docs/spec/definitions.md.
import { describe, expect, it } from "vitest";
import {
  blake3Digest,
  blake3Hasher,
  blobCid,
  CODEC_BLAKE3_HASHSEQ,
  CODEC_JSON_JCS,
  CODEC_RAW,
  cidFromDigest,
  decodeCid,
  jsonJcsCid,
} from "../../src/core/cid/cid.js";
import {
  collectionCid,
  collectionCidFromHashes,
  collectionMetadata,
  compareUtf8,
  leb128,
} from "../../src/core/cid/collection.js";

const enc = new TextEncoder();

describe("blob CID", () => {
  it("matches the docs/spec vector for 'hello'", () => {
    expect(blobCid(enc.encode("hello"))).toBe(
      "bafkr4ihkr4ld3m4gqkjf4reryxsy2s5tkbxprqkow6fin2iiyvreuzzab4",
    );
  });

  it("streams to the same digest as one call", () => {
    const bytes = enc.encode("a".repeat(5000));
    const h = blake3Hasher().update(bytes.subarray(0, 1234)).update(bytes.subarray(1234));
    expect(h.digest()).toEqual(blake3Digest(bytes));
  });
});

describe("collection CID", () => {
  it("matches the docs/spec vector for abc.txt and def.txt", () => {
    const vector = "bagaachraifnmn56rqtgbdxx5x2zvasw4slukuq2t7w3iefcmsqldn7axmrpq";
    expect(
      collectionCid([
        { name: "abc.txt", bytes: enc.encode("abc") },
        { name: "def.txt", bytes: enc.encode("def") },
      ]),
    ).toBe(vector);
    // Entry order does not matter: names are sorted.
    expect(
      collectionCid([
        { name: "def.txt", bytes: enc.encode("def") },
        { name: "abc.txt", bytes: enc.encode("abc") },
      ]),
    ).toBe(vector);
  });

  it("lays out the metadata blob as CollectionV0., LEB128 count, LEB128 lengths and names", () => {
    expect([...collectionMetadata(["ab", "ć"])]).toEqual([
      ...enc.encode("CollectionV0."),
      2,
      2,
      0x61,
      0x62,
      2,
      0xc4,
      0x87,
    ]);
  });

  it("encodes LEB128", () => {
    expect([...leb128(0)]).toEqual([0]);
    expect([...leb128(127)]).toEqual([127]);
    expect([...leb128(128)]).toEqual([0x80, 0x01]);
    expect([...leb128(300)]).toEqual([0xac, 0x02]);
    expect(() => leb128(-1)).toThrow();
  });

  it("sorts names by UTF-8 bytes, not UTF-16 code units", () => {
    // U+FF5E is one UTF-16 unit above the surrogates, but its UTF-8 bytes sort before U+1F600's.
    expect(compareUtf8("\uff5e", "😀")).toBeLessThan(0);
    expect("\uff5e" < "😀").toBe(false);
    const a = collectionCid([
      { name: "😀", bytes: enc.encode("1") },
      { name: "\uff5e", bytes: enc.encode("2") },
    ]);
    const meta = collectionMetadata(["\uff5e", "😀"]);
    const seq = new Uint8Array(96);
    seq.set(blake3Digest(meta), 0);
    seq.set(blake3Digest(enc.encode("2")), 32);
    seq.set(blake3Digest(enc.encode("1")), 64);
    expect(a).toBe(cidFromDigest(CODEC_BLAKE3_HASHSEQ, blake3Digest(seq)));
  });

  it("refuses two entries with one name", () => {
    const h = blake3Digest(new Uint8Array());
    expect(() =>
      collectionCidFromHashes([
        { name: "a", hash: h },
        { name: "a", hash: h },
      ]),
    ).toThrow(/named/);
  });

  it("an empty collection has a CID", () => {
    expect(collectionCid([]).startsWith("bagaachra")).toBe(true);
  });
});

describe("decodeCid", () => {
  const blob = blobCid(enc.encode("hello"));

  it("decodes every part of a valid CID", () => {
    const r = decodeCid(blob);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.version).toBe(1);
    expect(r.value.codec).toBe(CODEC_RAW);
    expect(r.value.multihash).toBe(0x1e);
    expect(r.value.digest).toEqual(blake3Digest(enc.encode("hello")));
  });

  it.each([
    ["a CIDv0", "QmdfTbBqBPQ7VNxZEYEj14VmRuZBkqFbiwReogJgS1zR1n", /base32/],
    ["base58btc", "zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA", /base32/],
    ["upper-case base32", blob.toUpperCase(), /base32/],
    ["trailing garbage", `${blob}a`, /./],
    ["a truncated CID", blob.slice(0, 40), /./],
    ["not base32", "b!!!!", /base32/],
    ["non-zero padding bits", `${blob.slice(0, -1)}5`, /./],
    [
      "a sha2-256 multihash",
      "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy",
      /multihash/,
    ],
    ["a short digest (regex-admitted blob CID)", `bafkr4iz${"a".repeat(51)}`, /./],
  ])("refuses %s", (_what, text, message) => {
    const r = decodeCid(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]?.code).toBe("cid/invalid");
    expect(r.errors[0]?.message).toMatch(message);
  });

  it("refuses a codec other than the one expected, and unknown codecs", () => {
    const r = decodeCid(blob, CODEC_JSON_JCS);
    expect(r.ok ? "" : r.errors[0]?.message).toMatch(/codec 0x55; expected 0xb601/);
    const dagPb = cidFromDigest(0x70, blake3Digest(enc.encode("x")));
    expect(decodeCid(dagPb).ok).toBe(false);
    expect(decodeCid(dagPb, 0x70).ok).toBe(true);
  });
});

describe("decodeCid, each check alone", () => {
  it("a BLAKE3 multihash of 16 bytes in a well-formed CIDv1: cid/invalid at the root", () => {
    const short = cidFromDigest(CODEC_RAW, new Uint8Array(16).fill(1));
    const r = decodeCid(short);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]).toMatchObject({ code: "cid/invalid", path: "" });
  });

  it("the same bytes spelled with non-zero padding bits: not the canonical spelling", () => {
    const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
    const cid = blobCid(enc.encode("hello"));
    const last = alphabet.indexOf(cid.at(-1) as string);
    // 36 bytes are 288 bits: the last of 58 characters carries 2 padding bits.
    const padded = `${cid.slice(0, -1)}${alphabet[last | 1]}`;
    expect(padded).not.toBe(cid);
    expect(decodeCid(cid).ok).toBe(true);
    const r = decodeCid(padded);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]?.code).toBe("cid/invalid");
  });

  it("jsonJcsCid is the json-jcs CID of BLAKE3 over the bytes given", () => {
    const bytes = enc.encode('{"a":1}');
    const r = decodeCid(jsonJcsCid(bytes), CODEC_JSON_JCS);
    expect(r.ok && r.value.digest).toEqual(blake3Digest(bytes));
  });
});
