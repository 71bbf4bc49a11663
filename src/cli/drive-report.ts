// How a drive's end is told: plain lines (the stop, or what a blocked loop waits for and what the
// operator may do about it), or `--json` `{query, store, status, stop?, blocked?, spent}`; and the
// exit code a script can trust: 0 only when the loop stopped `succeeded`, 1 when it stopped
// otherwise (or another process holds it), 3 when it is blocked or waiting.

import type { BlockReason } from "../index.js";
import { terminalLine } from "../library/basics.js";
import type { LoopOutcome } from "../library/run-handle.js";
import { EXIT_BLOCKED, EXIT_INVALID, EXIT_OK, err, out, printJson } from "./io.js";

/** The exit code of a drive's outcome (docs/cli.md, "Exit codes of run, resume and demo"). */
export function exitCodeOf(outcome: LoopOutcome): number {
  switch (outcome.status) {
    case "stopped":
      return outcome.stop.reason === "succeeded" ? EXIT_OK : EXIT_INVALID;
    case "blocked":
      return EXIT_BLOCKED;
    case "leased-elsewhere":
      return EXIT_INVALID;
    default:
      return outcome satisfies never;
  }
}

/** A `memory:` store lives in this process only: no other command can read or resume its loops. */
export function isProcessStore(storeUri: string): boolean {
  return storeUri.startsWith("memory:");
}

/**
 * What can lift a block, as the operator's commands. A spent budget counter cannot be lifted at
 * all: `renew` moves only the deadline and a loop's limits are fixed when it opens, so the loop
 * can only be closed.
 */
export function liftHint(query: string, reason: BlockReason, counter?: string): string {
  const then = `; then warrant resume ${query}`;
  const cancel = `warrant cancel ${query}`;
  switch (reason) {
    case "budget":
      return `nothing lifts a spent budget${counter === undefined ? "" : ` (${counter})`}: renew moves only the deadline and the loop's limits are fixed when it opens; close the loop with: ${cancel}`;
    case "deadline":
      return `the operator may: warrant renew ${query} --extend MS (MS from now)${then} | ${cancel}`;
    case "admission":
      return `the operator may: warrant renew ${query} --extend MS (MS from now)${then}, and approve the admission when asked | ${cancel}`;
    case "operator-question":
      return `the operator may: warrant answer ${query} TEXT${then} | ${cancel}`;
    case "model":
    case "tool":
    case "definition":
      return `the operator may: make the ${reason} reachable or valid again${then} | ${cancel}`;
    default:
      return reason satisfies never;
  }
}

export function reportDrive(outcome: LoopOutcome, storeUri: string, json: boolean): void {
  const { query } = outcome;
  process.exitCode = exitCodeOf(outcome);
  if (json) {
    reportJson(outcome, storeUri);
    return;
  }
  const ephemeral = isProcessStore(storeUri);
  if (outcome.status === "leased-elsewhere") {
    err(`warrant: interface/lease-lost: ${query} is being driven by another process`);
    out(`query: ${query}`);
    return;
  }
  if (outcome.status === "stopped") {
    const stop = outcome.stop;
    const detail =
      "execution/ref" in stop
        ? ` (${stop["execution/ref"]}${"refusal/code" in stop ? `, ${stop["refusal/code"]}` : ""})`
        : ` (by ${stop["operator/binding-ref"]})`;
    out(`loop stopped: ${stop.reason}${detail}`);
  } else {
    const counter = outcome.counter === undefined ? "" : ` (${outcome.counter})`;
    // The detail may quote a model's question or a tool's error: one terminal-safe line.
    out(terminalLine(`loop blocked: ${outcome.reason}${counter}: ${outcome.detail}`));
    out(
      ephemeral
        ? "  the loop lives in a memory: store, gone when this process exits: nothing can resume it"
        : `  ${liftHint(query, outcome.reason, outcome.counter)}`,
    );
  }
  if (ephemeral) {
    // `show` and `export` in another process would find nothing: no hint that cannot work.
    out(`ledger: ${storeUri} (kept in this process only; use --store sqlite:PATH to keep it)`);
  } else {
    out(`ledger: ${storeUri}`);
    out(
      `inspect: warrant show ${query} --store ${storeUri}   (export: warrant export ${query} --store ${storeUri})`,
    );
  }
  out(`query: ${query}`);
}

function reportJson(outcome: LoopOutcome, store: string): void {
  const { query } = outcome;
  switch (outcome.status) {
    case "leased-elsewhere":
      printJson({ query, store, status: "leased-elsewhere", code: "interface/lease-lost" });
      return;
    case "stopped": {
      const { stop, document } = outcome;
      printJson({ query, store, status: "stopped", stop, spent: document.spent });
      return;
    }
    case "blocked": {
      const { reason, counter, detail, document } = outcome;
      printJson({
        query,
        store,
        status: "blocked",
        blocked: { reason, ...(counter === undefined ? {} : { counter }), detail },
        spent: document.spent,
      });
      return;
    }
    default:
      outcome satisfies never;
  }
}

/** The exit codes of `run`, `resume` and `demo`, as their `--help` says them. */
export const EXIT_HELP =
  "\nExit codes: 0 the loop stopped succeeded; 1 it stopped otherwise (unknown, safety-refused,\n" +
  "cancelled), the input was invalid or refused, or another process drives it; 2 usage error;\n" +
  "3 the loop is blocked or waiting (budget, deadline, operator question, admission, model, tool or\n" +
  "definition unreachable): see the printed hint for what can lift it.";
