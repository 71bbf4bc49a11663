// `warrant export QUERY --bundle`: one JSON file with everything `warrant loop check BUNDLE` needs
// to audit the loop offline (facts and records as stored, signed heads, operator acts, host key).
import { makeBundle } from "../core/loop/bundle.js";
import type { LedgerStore } from "../core/loop/ledger-store.js";
import type { LoopDocument } from "../core/loop/types.js";
import { printJson } from "./io.js";

export async function printBundle(
  store: LedgerStore,
  query: string,
  doc: LoopDocument,
  now: Date,
): Promise<void> {
  const [rows, acts] = await Promise.all([store.readRawLoop(query), store.readOperatorActs(query)]);
  printJson(makeBundle(query, rows, acts, doc, now));
}
