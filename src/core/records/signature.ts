// Ed25519 host signatures over a record's canonical bytes: JCS of the record without its
// `signature` field (its content ref included, so the signature binds the record's kind too).
// Pure functions of key bytes; the key file is read by the runtime, never by the core.
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

function fromBase64url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** The bytes a host signature covers. */
export function signedBytes(record: WireRecord): Uint8Array {
  const { signature: _sig, ...rest } = record as Readonly<Record<string, unknown>>;
  return canonicalBytes(rest);
}

export async function publicKeyOf(secretKey: Uint8Array): Promise<Uint8Array> {
  return ed.getPublicKeyAsync(secretKey);
}

/** The record with a `signature` by the 32-byte Ed25519 secret key (replacing any earlier one). */
export async function signRecord<T extends WireRecord>(
  record: T,
  secretKey: Uint8Array,
): Promise<T & { readonly signature: RecordSignature }> {
  const sig = await ed.signAsync(signedBytes(record), secretKey);
  const pub = await ed.getPublicKeyAsync(secretKey);
  const signature: RecordSignature = {
    alg: SIGNATURE_ALG,
    "key/public": base64url(pub),
    value: base64url(sig),
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
  if (sig?.length !== 64 || named?.length !== 32) return false;
  if (publicKey !== undefined && base64url(publicKey) !== s["key/public"]) return false;
  try {
    return await ed.verifyAsync(sig, signedBytes(record), named);
  } catch {
    return false;
  }
}
