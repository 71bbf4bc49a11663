// How a drive's end is told: plain lines (the stop, or what a blocked loop waits for and what the
// operator may do), or `--json` `{query, store, status, stop?, blocked?, spent}`; and the exit code:
// 0 unless the loop stopped without success or another process holds it.
import type { LoopOutcome } from "../library/run-handle.js";
import { EXIT_INVALID, EXIT_OK, err, out, printJson } from "./io.js";

export function reportDrive(outcome: LoopOutcome, storeUri: string, json: boolean): void {
  const { query } = outcome;
  if (json) {
    reportJson(outcome, storeUri);
    return;
  }
  if (outcome.status === "leased-elsewhere") {
    err(`warrant: interface/lease-lost: ${query} is being driven by another process`);
    process.exitCode = EXIT_INVALID;
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
    process.exitCode = stop.reason === "succeeded" ? EXIT_OK : EXIT_INVALID;
  } else {
    const counter = outcome.counter === undefined ? "" : ` (${outcome.counter})`;
    out(`loop blocked: ${outcome.reason}${counter}: ${outcome.detail}`);
    out(
      `  the operator may: warrant renew ${query} --extend MS | warrant answer ${query} TEXT | warrant cancel ${query}; then warrant resume ${query}`,
    );
    process.exitCode = EXIT_OK;
  }
  out(`ledger: ${storeUri}`);
  out(
    `inspect: warrant show ${query} --store ${storeUri}   (export: warrant export ${query} --store ${storeUri})`,
  );
  out(`query: ${query}`);
}

function reportJson(outcome: LoopOutcome, store: string): void {
  const { query } = outcome;
  switch (outcome.status) {
    case "leased-elsewhere":
      printJson({ query, store, status: "leased-elsewhere", code: "interface/lease-lost" });
      process.exitCode = EXIT_INVALID;
      return;
    case "stopped": {
      const { stop, document } = outcome;
      printJson({ query, store, status: "stopped", stop, spent: document.spent });
      process.exitCode = stop.reason === "succeeded" ? EXIT_OK : EXIT_INVALID;
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
      process.exitCode = EXIT_OK;
      return;
    }
    default:
      outcome satisfies never;
  }
}
