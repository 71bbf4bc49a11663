// The per-loop hash chain over facts: each stored fact carries SHA-256(previous hash ‖ JCS(fact)).
import { sha256 } from "@noble/hashes/sha2.js";
import { canonicalJson, hex } from "../records/canonical.js";
import type { Fact } from "./types.js";

/** The previous hash of a loop's first fact. */
export const GENESIS_HASH = "0".repeat(64);

const encoder = new TextEncoder();

export function chainHash(previousHash: string, fact: Fact): string {
  return hex(sha256(encoder.encode(`${previousHash}\n${canonicalJson(fact)}`)));
}
