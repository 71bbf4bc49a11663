// The per-loop hash chain over facts: each stored fact carries SHA-256(previous hash ‖ JCS(fact)).
import { canonicalJson } from "../records/canonical.js";
import { sha256 } from "../records/sha256.js";
import type { Fact } from "./types.js";

/** The previous hash of a loop's first fact. */
export const GENESIS_HASH = "0".repeat(64);

export function chainHash(previousHash: string, fact: Fact): string {
  return sha256(`${previousHash}\n${canonicalJson(fact)}`, "hex");
}
