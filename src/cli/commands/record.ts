// `warrant record REF`: one record of the ledger, readable (a plan with its diffs, a review with its
// findings, a run with each step's excerpt and each check's detail, a transcript turn by turn, the
// Result…), or with `--json` its body as stored, with the run report and operator acts beside an
// execution. Nothing is re-run.
import type { Command } from "commander";
import { parseRecordRef } from "../../library/basics.js";
import { readRecordView } from "../../library/record-view.js";
import { renderRecord } from "../../library/render-record.js";
import { withWarrant } from "../compose.js";
import { EXIT_INVALID, err, out, printJson, UsageError } from "../io.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";

interface RecordFlags {
  readonly json?: boolean;
  readonly store?: string;
}

export function registerRecordCommand(program: Command): void {
  program
    .command("record")
    .description("print one record of the ledger: a plan, review, run, transcript, Result, act…")
    .argument(
      "<ref>",
      "the record's ref, as `show` lists it (<prefix>:sha256:<43 characters>); an operator act's " +
        "ref (warrant-operator-act:sha256:…) too",
    )
    .option(
      "--json",
      "machine output: {ref, kind, query, body, report?: {ref, body}, acts?} (report and acts: " +
        "beside an execution, its run report with each check's detail and the acts on its steps)",
    )
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .addHelpText(
      "after",
      "\nExit codes: 0 printed; 1 record/not-found (no such record in the store); 2 a malformed ref.",
    )
    .action(async (ref: string, o: RecordFlags) => {
      const parsed = parseRecordRef(ref);
      if (!parsed.ok)
        throw new UsageError(
          `${JSON.stringify(ref)} is not a record ref: <prefix>:sha256:<43 base64url characters>`,
          "record/ref-invalid",
        );
      await withWarrant(o.store, {}, async (warrant) => {
        const view = await readRecordView(warrant.store, parsed.value);
        if (view === undefined) {
          err(`warrant: record/not-found: no record ${ref} in ${warrant.store.uri}`);
          process.exitCode = EXIT_INVALID;
          return;
        }
        if (o.json === true) {
          printJson(view);
          return;
        }
        out(
          renderRecord(view, {
            ...(view.report === undefined ? {} : { report: view.report.body }),
            ...(view.acts === undefined ? {} : { acts: view.acts }),
          }),
        );
      });
    });
}
