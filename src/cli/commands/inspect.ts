// `warrant loops`, `show` and `export`: read a loop from the store; nothing is re-run.
import type { Command } from "commander";
import { openStore, resolveStoreUri } from "../../adapters/store/open-store.js";
import type { LedgerStore } from "../../core/loop/ledger-store.js";
import type { LoopDocument } from "../../core/loop/types.js";
import { budgets } from "../../runtime/live-view.js";
import { LoopLedger } from "../../runtime/loop-ledger.js";
import { EXIT_INVALID, err, out, printJson } from "../io.js";
import { printBundle } from "./export-bundle.js";

export async function withStore<T>(
  flag: string | undefined,
  f: (store: LedgerStore) => Promise<T>,
): Promise<T> {
  const store = await openStore(resolveStoreUri(flag));
  try {
    return await f(store);
  } finally {
    await store.close();
  }
}

async function documentOr1(store: LedgerStore, query: string): Promise<LoopDocument | undefined> {
  const doc = await new LoopLedger(store).document(query, new Date());
  if (doc === undefined) {
    err(`warrant: loop/not-opened: no loop ${query} in ${store.uri}`);
    process.exitCode = EXIT_INVALID;
  }
  return doc;
}

function describeStep(doc: LoopDocument, i: number): string {
  const f = doc.facts[i];
  if (f === undefined) return "";
  const s = f.step;
  const detail = (() => {
    switch (s.kind) {
      case "opened":
        return `${s["binding/ref"]} until ${s.deadline}`;
      case "passage-charged":
        return `${s.role} ${s["passage/ref"]}`;
      case "cycle-opened":
      case "run-admitted":
        return s["proposal/ref"];
      case "concluded":
        return `${s.outcome}${s["refusal/code"] === undefined ? "" : ` (${s["refusal/code"]})`} ${s["execution/ref"]}`;
      case "renewed":
        return `until ${s.deadline} by ${s["operator/binding-ref"]}`;
      case "cancelled":
        return `by ${s["operator/binding-ref"]}`;
      default:
        return s satisfies never;
    }
  })();
  return `${String(f.sequence).padStart(4)} ${f["recorded-at"]} ${s.kind} ${detail}`;
}

export function registerInspectCommands(program: Command): void {
  program
    .command("loops")
    .description("list the loops in the store with their state")
    .option("--json", "machine output: [{query, state, stop?: {reason}}]")
    .option(
      "--store <uri>",
      "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)",
    )
    .action(async (o: { json?: boolean; store?: string }) => {
      await withStore(o.store, async (store) => {
        const ledger = new LoopLedger(store);
        const now = new Date();
        const rows: { query: string; state: string; stop?: { reason: string } }[] = [];
        for (const l of await store.listLoops()) {
          const doc = await ledger.document(l.query, now);
          if (doc === undefined) continue;
          rows.push({
            query: l.query,
            state: doc.state,
            ...(doc.stop === undefined ? {} : { stop: { reason: doc.stop.reason } }),
          });
        }
        if (o.json === true) printJson(rows);
        else
          for (const r of rows)
            out(`${r.query}  ${r.state}${r.stop === undefined ? "" : ` (${r.stop.reason})`}`);
      });
    });

  program
    .command("show")
    .description("show a loop: state, budgets, facts and records")
    .argument("<query>", "the loop's query id")
    .option("--json", "machine output: {loop, records: [{ref, kind}]}")
    .option(
      "--store <uri>",
      "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)",
    )
    .action(async (query: string, o: { json?: boolean; store?: string }) => {
      await withStore(o.store, async (store) => {
        const doc = await documentOr1(store, query);
        if (doc === undefined) return;
        const records = (await store.listRecords(query)).map((r) => ({ ref: r.ref, kind: r.kind }));
        if (o.json === true) {
          printJson({ loop: doc, records });
          return;
        }
        out(`${query}  ${doc.state}${doc.stop === undefined ? "" : ` (${doc.stop.reason})`}`);
        out(`binding: ${doc["binding/ref"]}   deadline: ${doc.deadline}`);
        out(`budgets: ${budgets(doc, false)}`);
        out("facts:");
        doc.facts.forEach((_, i) => {
          out(describeStep(doc, i));
        });
        out(`records: ${records.length}`);
        for (const r of records) out(`  ${r.kind.padEnd(12)} ${r.ref}`);
      });
    });

  program
    .command("export")
    .description("print the loop document (corpus-task-pack-loop.v1) on stdout")
    .argument("<query>", "the loop's query id")
    .option(
      "--store <uri>",
      "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)",
    )
    .option("--json", "the document is JSON either way")
    .option(
      "--bundle",
      "print an audit bundle instead: facts, records, signed heads, operator acts and host key, " +
        "for warrant loop check BUNDLE",
    )
    .action(async (query: string, o: { store?: string; bundle?: boolean }) => {
      await withStore(o.store, async (store) => {
        const now = new Date();
        const doc = await documentOr1(store, query);
        if (doc === undefined) return;
        if (o.bundle === true) await printBundle(store, query, doc, now);
        else printJson(doc);
      });
    });
}
