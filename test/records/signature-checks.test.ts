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
});
