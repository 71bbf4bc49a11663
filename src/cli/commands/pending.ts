// `warrant pending`: every approval waited for across the loops of the store (a mutation step of a
// run, or a run's admission), whichever process drives the loop. Each line is terminal-safe: a
// step's name and summary come from the plan.
import type { Command } from "commander";
import { terminalLine } from "../../library/basics.js";
import { withWarrant } from "../compose.js";
import { out, printJson } from "../io.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";

interface PendingFlags {
  readonly json?: boolean;
  readonly store?: string;
}

export function registerPendingCommand(program: Command): void {
  program
    .command("pending")
    .description("list the approvals loops wait for, across the store")
    .option(
      "--json",
      "machine output: [{query, run, step, kind: mutation|admission, proposal, hypothesis?, path?, summary, waitingSince}]",
    )
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .action(async (o: PendingFlags) => {
      await withWarrant(o.store, {}, async (warrant) => {
        const pending = await warrant.pending();
        if (o.json === true) {
          printJson(pending);
          return;
        }
        if (pending.length === 0) {
          out("no approval is waited for");
          return;
        }
        for (const p of pending) {
          out(
            terminalLine(
              `${p.query}  ${p.kind} ${p.step}: ${p.summary}  (waiting since ${p.waitingSince})`,
            ),
          );
          out(
            terminalLine(`  warrant approve ${p.run} ${p.step} | warrant deny ${p.run} ${p.step}`),
          );
        }
      });
    });
}
