// Ed25519 host signatures over a record's canonical bytes: JCS of the record without its
// `signature` field (its content ref included, so the signature binds the record's kind too).
// Pure functions of key bytes; the key file is read by the runtime, never by the core. Signing and
// public keys go through Node's own Ed25519 (OpenSSL): the same deterministic RFC 8032 bytes as
// @noble/ed25519, about ten times faster, with each secret key's key objects made once; signatures
// are verified by @noble/ed25519, as they always were.
import { createPrivateKey, createPublicKey, type KeyObject, sign } from "node:crypto";
import * as ed from "@noble/ed25519";
import { base64url, canonicalBytes } from "./canonical.js";
import type { WireRecord } from "./content-ref.js";

export const SIGNATURE_ALG = "ed25519";

export interface RecordSignature {
  readonly alg: typeof SIGNATURE_ALG;
  /** Unpadded base64url of the 32-byte public key. */
  readonly "key/public": string;
  /** Unpadded base64url of the 64-byte signature. */
  readonly value: string;
}

/** The bytes of unpadded base64url text; none (an empty array) when it is not such text. */
function fromBase64url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return new Uint8Array(0);
  const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** The bytes a host signature covers. */
export function signedBytes(record: WireRecord): Uint8Array {
  const { signature: _sig, ...rest } = record as Readonly<Record<string, unknown>>;
  return canonicalBytes(rest);
}

/** PKCS #8 and SPKI DER prefixes of an Ed25519 key (RFC 8410): the raw 32 bytes follow. */
const PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);
const SPKI_PREFIX_LENGTH = 12;

interface KeyPair {
  /** The secret bytes the pair was made from (a caller's array may change under the cache). */
  readonly secret: Buffer;
  readonly privateKey: KeyObject;
  readonly publicKey: Uint8Array;
  readonly publicText: string;
}

/** Each secret key's pair, made once per array the caller holds it in. */
const pairs = new WeakMap<Uint8Array, KeyPair>();

function keyPairOf(secretKey: Uint8Array): KeyPair {
  const cached = pairs.get(secretKey);
  // Stryker disable next-line ConditionalExpression: made `false`, every call makes the pair again (the same pair, only slower)
  if (cached?.secret.equals(secretKey) === true) return cached;
  if (secretKey.length !== 32)
    throw new Error(`an Ed25519 secret key is 32 bytes, not ${secretKey.length}`);
  const der = new Uint8Array(PKCS8_PREFIX.length + 32);
  der.set(PKCS8_PREFIX);
  der.set(secretKey, PKCS8_PREFIX.length);
  const privateKey = createPrivateKey({ key: Buffer.from(der), format: "der", type: "pkcs8" });
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" });
  const publicKey = new Uint8Array(spki.subarray(SPKI_PREFIX_LENGTH));
  const pair = {
    secret: Buffer.from(secretKey),
    privateKey,
    publicKey,
    publicText: base64url(publicKey),
  };
  pairs.set(secretKey, pair);
  return pair;
}

export async function publicKeyOf(secretKey: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(keyPairOf(secretKey).publicKey);
}

/** The record with a `signature` by the 32-byte Ed25519 secret key (replacing any earlier one). */
export async function signRecord<T extends WireRecord>(
  record: T,
  secretKey: Uint8Array,
): Promise<T & { readonly signature: RecordSignature }> {
  const pair = keyPairOf(secretKey);
  const sig = sign(null, signedBytes(record), pair.privateKey);
  const signature: RecordSignature = {
    alg: SIGNATURE_ALG,
    "key/public": pair.publicText,
    value: base64url(new Uint8Array(sig)),
  };
  return { ...record, signature };
}

/**
 * True when the record carries an ed25519 signature that verifies over its canonical bytes, by the
 * given public key when one is given (else by the key the signature names).
 */
export async function verifyRecordSignature(
  record: WireRecord,
  publicKey?: Uint8Array,
): Promise<boolean> {
  const s = (record as { signature?: unknown }).signature as Partial<RecordSignature> | undefined;
  if (typeof s !== "object" || s === null || s.alg !== SIGNATURE_ALG) return false;
  if (typeof s.value !== "string" || typeof s["key/public"] !== "string") return false;
  const sig = fromBase64url(s.value);
  const named = fromBase64url(s["key/public"]);
  if (publicKey !== undefined && base64url(publicKey) !== s["key/public"]) return false;
  try {
    // A signature that is not 64 bytes or a key that is not 32 (text that is not base64url gives
    // none) is refused here: verifyAsync throws.
    return await ed.verifyAsync(sig, signedBytes(record), named);
  } catch {
    return false;
  }
}
