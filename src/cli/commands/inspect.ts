// `warrant loops`, `show` and `export`: read a loop from the store; nothing is re-run. What `loops`
// and `show` print goes out one terminal-safe line at a time (`line`), or as rendered records,
// which are terminal-safe already: names, hosts and acts may come from models and commands.
import type { Command } from "commander";
import type { LoopDocument } from "../../index.js";
import { terminalLine, toQueryId } from "../../library/basics.js";
import type { Warrant } from "../../library/create-warrant.js";
import { reportOf } from "../../library/record-view.js";
import { renderOperatorAct, renderRecord } from "../../library/render-record.js";
import { withWarrant } from "../compose.js";
import { printBundle } from "../export-bundle.js";
import { EXIT_INVALID, err, out, printJson, UsageError } from "../io.js";
import { queueIfPostgres } from "../job-queue.js";
import { budgets, connectionLine, tokensPhrase } from "../live-view.js";
import { loopsTable, waitingLine } from "../loops-table.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";

/** One line on stdout: a line feed or control character in what it holds is escaped. */
function line(text: string): void {
  out(terminalLine(text));
}

interface InspectFlags {
  readonly json?: boolean;
  readonly store?: string;
  readonly records?: boolean;
}

/**
 * `show --records`: every record of the loop in the order stored, rendered (an execution with its
 * run report's excerpts and details), then the operator acts; with `--json`, the records' bodies
 * and the acts.
 */
async function showRecords(warrant: Warrant, query: string, json: boolean): Promise<unknown> {
  const [records, acts] = await Promise.all([
    warrant.store.listRecords(query),
    warrant.store.readOperatorActs(query),
  ]);
  if (json)
    return { records: records.map((r) => ({ ref: r.ref, kind: r.kind, body: r.body })), acts };
  for (const r of records) {
    out("");
    const report = r.kind === "execution" ? reportOf(records, r.ref) : undefined;
    out(renderRecord(r, { ...(report === undefined ? {} : { report: report.body }), acts }));
  }
  out("");
  line(`operator acts: ${acts.length}`);
  for (const a of acts) line(`  ${renderOperatorAct(a)}`);
  return undefined;
}

/** The loop's document, or undefined after saying `loop/not-opened` (exit 1). */
async function shown(warrant: Warrant, query: string) {
  const view = await warrant.show(toQueryId(query));
  if (view === undefined) {
    err(`warrant: loop/not-opened: no loop ${query} in ${warrant.store.uri}`);
    process.exitCode = EXIT_INVALID;
  }
  return view;
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
    .option(
      "--json",
      "machine output: [{query, state, stop?: {reason}, status, heldBy?, leaseUntil?, waiting?}]; " +
        "status: queued, driving, waiting, stuck (lease expired, not stopped), failed (job out of " +
        "attempts), stopped; waiting: {reason: approval|answer|budget|deadline|model|tool|definition, …}",
    )
    .option(
      "--waiting <what>",
      "only the loops waiting on `failed`: jobs that used up their attempts (warrant requeue QUERY)",
    )
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .action(async (o: InspectFlags & { waiting?: string }) => {
      if (o.waiting !== undefined && o.waiting !== "failed")
        throw new UsageError(`--waiting takes failed, not ${o.waiting}`);
      const queue = await queueIfPostgres(o.store);
      await withWarrant(o.store, queue === undefined ? {} : { queue }, async (warrant) => {
        let rows = await warrant.loops();
        if (o.waiting === "failed") rows = rows.filter((r) => r.status === "failed");
        if (o.json === true) printJson(rows);
        else for (const row of loopsTable(rows, warrant.store.uri)) line(row);
      });
    });

  program
    .command("show")
    .description("show a loop: state, budgets, facts and records")
    .argument("<query>", "the loop's query id")
    .option(
      "--json",
      "machine output: {loop, records: [{ref, kind}], usage: {modelCalls, inputTokens, outputTokens, cachedInputTokens, reasoningTokens, byRole}, egress?: [{proposal/ref, network: {allow, connections, omitted}}], waiting?: {reason, …} (as loops --json)}",
    )
    .option(
      "--records",
      "also print every record in order, readable (as `warrant record REF`), and the operator " +
        "acts; with --json: records: [{ref, kind, body}] and acts: [{query, kind, target, text?, operator, at}]",
    )
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .action(async (query: string, o: InspectFlags) => {
      await withWarrant(o.store, {}, async (warrant) => {
        const view = await shown(warrant, query);
        if (view === undefined) return;
        if (o.json === true) {
          const extra = o.records === true ? await showRecords(warrant, query, true) : {};
          printJson({ ...view, ...(extra as object) });
          return;
        }
        const { loop: doc, records } = view;
        line(`${query}  ${doc.state}${doc.stop === undefined ? "" : ` (${doc.stop.reason})`}`);
        line(`binding: ${doc["binding/ref"]}   deadline: ${doc.deadline}`);
        line(`budgets: ${budgets(doc, false)}`);
        if (view.waiting !== undefined) line(`waiting: ${waitingLine(view.waiting)}`);
        line(`usage: ${tokensPhrase(view.usage)}`);
        for (const [role, u] of Object.entries(view.usage.byRole))
          if (u !== undefined) line(`  ${role}: ${tokensPhrase(u)}`);
        line("facts:");
        doc.facts.forEach((_, i) => {
          line(describeStep(doc, i));
        });
        line(`records: ${records.length}`);
        for (const r of records) line(`  ${r.kind.padEnd(12)} ${r.ref}`);
        for (const run of view.egress ?? []) {
          const n = run.network;
          line(`egress of ${run["proposal/ref"]} (allow: ${n.allow.join(", ")}):`);
          for (const c of n.connections) {
            const during =
              c["step/id"] ?? (c["check/name"] === undefined ? "" : `check ${c["check/name"]}`);
            line(`  ${during === "" ? "" : `${during}: `}${connectionLine(c)}`);
          }
          if (n.omitted > 0) line(`  … ${n.omitted} more not listed`);
        }
        if (o.records === true) await showRecords(warrant, query, false);
      });
    });

  program
    .command("export")
    .description("print the loop document (corpus-task-pack-loop.v1) on stdout")
    .argument("<query>", "the loop's query id")
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option("--json", "the document is JSON either way")
    .option(
      "--bundle",
      "print an audit bundle instead: facts, records, signed heads, operator acts and host key, " +
        "for warrant loop check BUNDLE",
    )
    .action(async (query: string, o: InspectFlags & { bundle?: boolean }) => {
      await withWarrant(o.store, {}, async (warrant) => {
        const view = await shown(warrant, query);
        if (view === undefined) return;
        if (o.bundle === true) await printBundle(warrant.store, query, new Date());
        else printJson(view.loop);
      });
    });
}
