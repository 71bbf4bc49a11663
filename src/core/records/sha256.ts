// SHA-256 by Node's own implementation, in one call where Node has `crypto.hash` (20.12 and later):
// what is hashed on every append and every model request (the facts' chain, request digests).
import * as crypto from "node:crypto";

const oneShot = (crypto as { hash?: typeof crypto.hash }).hash;

/** SHA-256 of `data` (text as UTF-8, or bytes), as lowercase hex or unpadded base64url. */
export function sha256(data: string | Uint8Array, encoding: "hex" | "base64url"): string {
  return oneShot === undefined
    ? crypto.createHash("sha256").update(data).digest(encoding)
    : oneShot("sha256", data, encoding);
}
