// `warrant diff QUERY`: the change a loop's verified run made to its baseline, as a git-style diff.
import type { Command } from "commander";
import { terminalLine, terminalSafe, WarrantError } from "../../library/basics.js";
import { withWarrant } from "../compose.js";
import { EXIT_INVALID, err, printJson } from "../io.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";

interface DiffFlags {
  readonly run?: string;
  readonly json?: boolean;
  readonly store?: string;
}

/** A refusal: `warrant: code: message` on stderr, and `{ok: false, code, message}` with --json. */
export function refuse(e: unknown, json: boolean): void {
  if (!(e instanceof WarrantError)) throw e;
  if (json) printJson({ ok: false, code: e.code, message: e.message });
  err(`warrant: ${e.code}: ${terminalLine(e.message)}`);
  process.exitCode = EXIT_INVALID;
}

export function registerDiffCommand(program: Command): void {
  program
    .command("diff")
    .description(
      "show the change a loop's verified run made to its baseline (default: its last verified run), " +
        "as a git-style unified diff; ignored paths are left out",
    )
    .argument("<query>", "the loop's query id")
    .option(
      "--run <run>",
      "a run of the loop: its proposal ref, or a unique prefix (8+ characters)",
    )
    .option(
      "--json",
      'machine output: {query, run, baseline, files: [{path, status: "modified"|"added"|"deleted", before, after}], diff}',
    )
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .addHelpText(
      "after",
      "\nPaths are quoted as git quotes them (core.quotePath). Into a pipe or a file the diff is " +
        "written byte for byte, so `warrant diff QUERY | git apply` takes it; on a terminal, control " +
        "characters in file contents are shown escaped (\\x1b).\n" +
        "Exit codes: 0 the diff was printed; 1 refused (loop/not-opened, diff/run-unknown, " +
        "diff/not-verified, diff/no-changeset for a loop verified before changes were kept, " +
        "diff/changeset-incomplete).",
    )
    .action(async (query: string, o: DiffFlags) => {
      await withWarrant(o.store, {}, async (warrant) => {
        try {
          // The change's checks load here, not when help lists the command.
          const { loopChange } = await import("../../library/changes.js");
          const change = await loopChange(warrant.store, query, {
            ...(o.run === undefined ? {} : { run: o.run }),
          });
          if (o.json === true) printJson(change);
          // Byte for byte into a pipe or a file (so that `git apply` takes it); on a terminal,
          // control characters in contents are shown escaped (paths are quoted already).
          else if (change.diff !== "")
            process.stdout.write(process.stdout.isTTY ? terminalSafe(change.diff) : change.diff);
        } catch (e) {
          refuse(e, o.json === true);
        }
      });
    });
}
