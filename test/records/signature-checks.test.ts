// verifyRecordSignature, each check decided alone: every signature below is well formed up to the
// part under test (a real Ed25519 signature of the record, by a real key), so that part is what
// makes it fail; a malformed part is answered false, never thrown.
import { describe, expect, it } from "vitest";
import { base64url } from "../../src/core/records/canonical.js";
import {
  publicKeyOf,
  signRecord,
  verifyRecordSignature,
} from "../../src/core/records/signature.js";

const record = { "query/id": "query:q1", note: "n", "created-at": "2026-12-01T10:00:00Z" };
const key = new Uint8Array(32).fill(7);

async function signed() {
  return signRecord(record, key);
}

describe("verifyRecordSignature, each check alone", () => {
  it("a real signature under another alg name: false", async () => {
    const s = await signed();
    expect(await verifyRecordSignature(s)).toBe(true);
    expect(await verifyRecordSignature({ ...s, signature: { ...s.signature, alg: "rsa" } })).toBe(
      false,
    );
  });

  it("a null signature, or value or key/public that are not strings: false, not a throw", async () => {
    const s = await signed();
    for (const signature of [
      null,
      { ...s.signature, value: [s.signature.value] },
      { ...s.signature, "key/public": [s.signature["key/public"]] },
    ]) {
      await expect(
        verifyRecordSignature({ ...s, signature }),
        JSON.stringify(signature),
      ).resolves.toBe(false);
    }
  });

  it("a key/public that is not base64url, beside a real signature value: false, not a throw", async () => {
    const s = await signed();
    const signature = { ...s.signature, "key/public": "!!" };
    await expect(verifyRecordSignature({ ...s, signature })).resolves.toBe(false);
  });

  it("a 32-byte key/public that is no Ed25519 point: false, not a throw", async () => {
    const s = await signed();
    const signature = { ...s.signature, "key/public": base64url(new Uint8Array(32).fill(0xff)) };
    await expect(verifyRecordSignature({ ...s, signature })).resolves.toBe(false);
  });

  it("signatures and keys holding every base64url character verify (- and _ decoded)", async () => {
    let dash = false;
    let underscore = false;
    for (let i = 1; i <= 40; i++) {
      const s = await signRecord({ ...record, note: `n${i}` }, new Uint8Array(32).fill(i));
      const text = s.signature.value + s.signature["key/public"];
      dash ||= text.includes("-");
      underscore ||= text.includes("_");
      expect(await verifyRecordSignature(s), text).toBe(true);
      expect(await verifyRecordSignature(s, await publicKeyOf(new Uint8Array(32).fill(i)))).toBe(
        true,
      );
    }
    expect(dash && underscore).toBe(true);
  });

  it("a signature value of 63 or 65 bytes, or a key/public of 31 or 33, beside real parts: false, not a throw", async () => {
    const s = await signed();
    const sig = Buffer.from(s.signature.value, "base64url");
    const pub = Buffer.from(s.signature["key/public"], "base64url");
    for (const signature of [
      { ...s.signature, value: base64url(sig.subarray(0, 63)) },
      { ...s.signature, value: base64url(Buffer.concat([sig, Buffer.of(0)])) },
      { ...s.signature, "key/public": base64url(pub.subarray(0, 31)) },
      { ...s.signature, "key/public": base64url(Buffer.concat([pub, Buffer.of(0)])) },
    ]) {
      await expect(
        verifyRecordSignature({ ...s, signature }),
        JSON.stringify(signature),
      ).resolves.toBe(false);
    }
  });

  it("a value that is not base64url, beside a real key: false, not a throw", async () => {
    const s = await signed();
    for (const value of ["!!", `${s.signature.value.slice(0, -1)}+`]) {
      const signature = { ...s.signature, value };
      await expect(verifyRecordSignature({ ...s, signature }), value).resolves.toBe(false);
    }
  });
});

describe("signRecord, a secret key changed in place", () => {
  it("signs by the key the array holds now, not the one it held when first used", async () => {
    const secret = new Uint8Array(32).fill(9);
    const first = await signRecord(record, secret);
    secret.fill(10);
    const second = await signRecord(record, secret);
    expect(second.signature["key/public"]).toBe(
      base64url(await publicKeyOf(new Uint8Array(32).fill(10))),
    );
    expect(second.signature["key/public"]).not.toBe(first.signature["key/public"]);
    expect(await verifyRecordSignature(second)).toBe(true);
  });
});
