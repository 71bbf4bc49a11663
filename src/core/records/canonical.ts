// Canonical JSON (RFC 8785 / JCS) and the content refs and digests taken over it (SPEC §1).
import { sha256 } from "@noble/hashes/sha2.js";
import canonicalizeImpl from "canonicalize";
import { WarrantError } from "../result.js";

const encoder = new TextEncoder();

/** JCS text of a JSON value. Throws on values JSON cannot carry (undefined root, cycles). */
export function canonicalJson(value: unknown): string {
  const text = canonicalizeImpl(value);
  if (text === undefined) throw new WarrantError("records/not-json", "value has no JSON form");
  return text;
}

export function canonicalBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalJson(value));
}

/** Unpadded base64url. */
export function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** `sha256:<43 base64url>` over the JCS bytes of a value. */
export function digestOf(value: unknown): string {
  return `sha256:${base64url(sha256(canonicalBytes(value)))}`;
}

/** `sha256:<43 base64url>` over raw bytes. */
export function digestOfBytes(bytes: Uint8Array): string {
  return `sha256:${base64url(sha256(bytes))}`;
}

/**
 * A content ref `<prefix>:sha256:<b64>`: the digest of the record without its own ref field and
 * without any `signature` field.
 */
export function contentRef(
  prefix: string,
  record: Readonly<Record<string, unknown>>,
  refField: string,
): string {
  const { [refField]: _ref, signature: _sig, ...rest } = record;
  return `${prefix}:${digestOf(rest)}`;
}

/** Lower-case hex. */
export function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}
