// The per-loop hash chain over facts: each stored fact carries SHA-256(previous hash ‖ JCS(fact)).
import * as crypto from "node:crypto";
import { canonicalJson } from "../records/canonical.js";
import type { Fact } from "./types.js";

/** The previous hash of a loop's first fact. */
export const GENESIS_HASH = "0".repeat(64);

/** `crypto.hash` (one call, no Hash object) where Node has it (20.12 and later). */
const oneShot = (crypto as { hash?: typeof crypto.hash }).hash;

/** Lowercase hex SHA-256 of `text` as UTF-8 (Node's own: every append hashes its facts). */
function sha256Hex(text: string): string {
  return oneShot === undefined
    ? crypto.createHash("sha256").update(text).digest("hex")
    : oneShot("sha256", text, "hex");
}

export function chainHash(previousHash: string, fact: Fact): string {
  return sha256Hex(`${previousHash}\n${canonicalJson(fact)}`);
}
