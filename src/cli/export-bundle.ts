// `warrant export QUERY --bundle`: one JSON file with everything `warrant loop check BUNDLE` needs
// to audit the loop offline (facts and records as stored, signed heads, operator acts, host key,
// and the head it was exported under).
import type { LedgerStore } from "../index.js";
import { printJson } from "./io.js";

export async function printBundle(store: LedgerStore, query: string, now: Date): Promise<void> {
  // Loaded only here: `loops` and `show`, registered beside `export`, do not load the bundle's audit.
  const { exportBundle } = await import("../library/bundle.js");
  const bundle = await exportBundle(store, query, { now });
  if (bundle !== undefined) printJson(bundle);
}
