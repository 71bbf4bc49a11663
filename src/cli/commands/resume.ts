// `warrant resume QUERY`: drive an existing loop on from where its ledger stands.
import type { Command } from "commander";
import { toQueryId } from "../../library/basics.js";
import { isWarrantError } from "../../library/errors.js";
import { OPERATOR_OPTION, OPERATOR_OPTION_HELP, operatorOf } from "../act-reply.js";
import { definitionOptions, driveOptions, liveView, withWarrant } from "../compose.js";
import { EXIT_HELP, exitCodeOf, reportDrive } from "../drive-report.js";
import { EXIT_INVALID, err, out, printJson } from "../io.js";
import {
  SANDBOX_OPTION,
  SANDBOX_OPTION_HELP,
  sandboxFor,
  WEAKER_OPTION,
  WEAKER_OPTION_HELP,
} from "../sandbox-option.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";
import { flushingOnSignals } from "../telemetry-signals.js";

interface ResumeFlags {
  readonly yes?: boolean;
  readonly skills?: string[];
  readonly store?: string;
  readonly json?: boolean;
  readonly sandbox?: string;
  readonly allowWeakerSandbox?: boolean;
  readonly operator?: string;
}

export function registerResumeCommand(program: Command): void {
  program
    .command("resume")
    .description("drive an existing loop on from where its ledger stands")
    .addHelpText("after", EXIT_HELP)
    .argument("<query>", "the loop's query id")
    .option("--yes", "approve every mutation without asking (recorded as such)")
    .option(OPERATOR_OPTION, `${OPERATOR_OPTION_HELP}: who answers the approval prompt (or --yes)`)
    .option("--skills <dir...>", "more folders holding agent definitions' skills (as given to run)")
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option(SANDBOX_OPTION, SANDBOX_OPTION_HELP)
    .option(WEAKER_OPTION, WEAKER_OPTION_HELP)
    .option(
      "--json",
      "machine output: {query, store, status, stop?, blocked?, spent} (live view on stderr)",
    )
    .action(async (query: string, o: ResumeFlags) => {
      const json = o.json === true;
      const operator = operatorOf(o.operator);
      const sandbox = await sandboxFor(o.sandbox, o.allowWeakerSandbox === true);
      const view = liveView(json);
      const flags = { yes: o.yes === true, interactive: true, json, sandbox, operator };
      try {
        const options = { ...driveOptions(flags, view), ...definitionOptions(o) };
        await withWarrant(o.store, options, async (warrant) => {
          const uri = warrant.store.uri;
          let drove = false;
          const handle = warrant.resume(toQueryId(query));
          const outcome = await flushingOnSignals(warrant, () =>
            handle.result.catch((e: unknown) => {
              if (isWarrantError(e) && e.code === "loop/not-opened") return undefined;
              throw e;
            }),
          );
          view.close();
          if (outcome === undefined) {
            err(`warrant: loop/not-opened: no loop ${query} in ${uri}`);
            process.exitCode = EXIT_INVALID;
            return;
          }
          for await (const e of handle) if (e.kind === "drive-start") drove = true;
          if (!drove && outcome.status === "stopped") {
            // Nothing was left to drive: the loop had stopped and every run had concluded. The
            // exit code is still the stop's: 0 only when it succeeded.
            process.exitCode = exitCodeOf(outcome);
            if (json) {
              const { stop, document } = outcome;
              printJson({ query, store: uri, status: "stopped", stop, spent: document.spent });
              return;
            }
            out(`loop ${query} is stopped: ${outcome.stop.reason}`);
            out(`query: ${query}`);
            return;
          }
          reportDrive(outcome, uri, json);
        });
      } finally {
        view.close();
      }
    });
}
