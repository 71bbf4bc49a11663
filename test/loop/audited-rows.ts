// The loops of audited-loop.ts (one concluded verification-failed, one verified), written once and
// kept as data in test/fixtures/audit/audited-rows.json, so that a test of the audit (which is pure) audits rows without
// building, signing or storing a loop first; audited-rows.test.ts keeps the data equal to what
// `built()` writes. Each loader returns a fresh copy the test may change.
import { readFileSync } from "node:fs";
import type { OperatorAct, RawLoop } from "../../src/core/ports/ledger-store.js";

export interface CachedLoop {
  readonly rows: RawLoop;
  readonly acts: readonly OperatorAct[];
  readonly proposal: string;
}

export interface CachedLoops {
  readonly failed: CachedLoop;
  readonly verified: CachedLoop;
  /** The unpadded base64url public keys of KEY, NEXT and OTHER (audited-loop.ts). */
  readonly keys: { readonly key: string; readonly next: string; readonly other: string };
}

export const ROWS_FILE = new URL("../fixtures/audit/audited-rows.json", import.meta.url);
const text = readFileSync(ROWS_FILE, "utf8");

/** A fresh copy of the cached loops. */
export const cachedLoops = (): CachedLoops => JSON.parse(text) as CachedLoops;
