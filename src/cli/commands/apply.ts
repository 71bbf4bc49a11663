// `warrant apply QUERY`: take a loop's verified change into a folder, or onto a new git branch.
import type { Command } from "commander";
import { terminalLine } from "../../library/basics.js";
import { withWarrant } from "../compose.js";
import { out, printJson, UsageError } from "../io.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";
import { refuse } from "./diff.js";

interface ApplyFlags {
  readonly run?: string;
  readonly to?: string;
  readonly git?: boolean;
  readonly branch?: string;
  readonly json?: boolean;
  readonly store?: string;
}

export function registerApplyCommand(program: Command): void {
  program
    .command("apply")
    .description(
      "apply the change a loop's verified run made (default: its last verified run) to a folder " +
        "(default: the pack's workspace), or commit it on a new branch with --git",
    )
    .argument("<query>", "the loop's query id")
    .option(
      "--run <run>",
      "a run of the loop: its proposal ref, or a unique prefix (8+ characters)",
    )
    .option("--to <dir>", "the folder to apply to (default: the workspace the run started from)")
    .option(
      "--git",
      "DIR is a git work tree without uncommitted changes to tracked files: commit the change on a " +
        "new branch (your checkout, index and current branch stay as they are)",
    )
    .option("--branch <name>", "the branch --git creates (default warrant/<short query>)")
    .option(
      "--json",
      'machine output: {query, run, to, result: "applied"|"already-applied", files: [{path, status}], branch?, commit?}',
    )
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .addHelpText(
      "after",
      "\nBefore anything is written the loop must pass its audit (as `warrant loop check --store`: " +
        "apply/audit-failed), every path of the change must be one a run may write (apply/path-invalid) " +
        "and every content the one its digest names (apply/content-mismatch). Files are reached " +
        "folder by folder, never through a symbolic link (apply/outside). Every touched file in DIR " +
        "must still hold the content the run started from, else nothing is written (apply/diverged). " +
        "Each file is written atomically and a failure midway restores what was written. Applying " +
        "the same run again is a no-op. With --git, untracked files are fine unless one is where " +
        "the change goes.\n" +
        "Exit codes: 0 applied or already applied; 1 refused (apply/not-verified, apply/audit-failed, " +
        "apply/path-invalid, apply/content-mismatch, apply/outside, apply/diverged, " +
        "apply/dirty-worktree, apply/not-a-repository, apply/branch-exists, apply/no-changeset, " +
        "apply/write-failed, …); 2 usage.",
    )
    .action(async (query: string, o: ApplyFlags) => {
      if (o.branch !== undefined && o.git !== true) throw new UsageError("--branch needs --git");
      await withWarrant(o.store, {}, async (warrant) => {
        try {
          const { applyChange } = await import("../../library/changes.js");
          const r = await applyChange(warrant.store, query, {
            ...(o.run === undefined ? {} : { run: o.run }),
            ...(o.to === undefined ? {} : { to: o.to }),
            ...(o.git === true ? { git: true } : {}),
            ...(o.branch === undefined ? {} : { branch: o.branch }),
          });
          if (o.json === true) printJson(r);
          else if (r.result === "already-applied")
            out(
              `already applied: run ${r.run} is in ${r.branch === undefined ? terminalLine(r.to) : `branch ${r.branch} (${r.commit})`}`,
            );
          else {
            for (const f of r.files) out(`${f.status.padEnd(8)} ${terminalLine(f.path)}`);
            out(
              r.branch === undefined
                ? `applied run ${r.run} to ${terminalLine(r.to)}`
                : `committed run ${r.run} as ${r.commit} on branch ${r.branch} in ${terminalLine(r.to)} (your current branch is unchanged)`,
            );
          }
        } catch (e) {
          refuse(e, o.json === true);
        }
      });
    });
}
