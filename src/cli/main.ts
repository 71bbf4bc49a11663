#!/usr/bin/env node
// The command line, a client of the library (createWarrant): each command registers itself from its
// own file; this file parses the arguments and turns errors into exit codes.
import { Command, CommanderError } from "commander";
import { registerAnswerCommand } from "./commands/answer.js";
import { registerApproveCommands } from "./commands/approve.js";
import { registerCancelCommand } from "./commands/cancel.js";
import { registerCidCommands } from "./commands/cid.js";
import { registerDefinitionCommands } from "./commands/definition.js";
import { registerDemoCommand } from "./commands/demo.js";
import { registerInspectCommands } from "./commands/inspect.js";
import { registerLoopCommands } from "./commands/loop.js";
import { registerRenewCommand } from "./commands/renew.js";
import { registerResumeCommand } from "./commands/resume.js";
import { registerRunCommand } from "./commands/run.js";
import { registerTurnCommands } from "./commands/turn.js";
import { registerWorkerCommand } from "./commands/worker.js";
import { EXIT_INVALID, EXIT_USAGE, err, UsageError } from "./io.js";

export function buildProgram(): Command {
  const program = new Command();
  program
    .name("warrant")
    .description(
      "Run LLM agents under warrant: hard budgets, review before any effect, contained " +
        "execution, human approval of mutations, and an append-only ledger.",
    )
    .version("0.1.0")
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText(
      "after",
      "\nEvery command takes --json for machine output. Exit codes: 0 success, 1 invalid input " +
        "or refused, 2 usage error.\nThe store is --store URI, else $WARRANT_STORE, else " +
        "sqlite:.warrant/ledger.db (also postgres://… and memory:).",
    )
    .exitOverride();
  registerDefinitionCommands(program);
  registerCidCommands(program);
  registerTurnCommands(program);
  registerLoopCommands(program);
  registerDemoCommand(program);
  registerRunCommand(program);
  registerWorkerCommand(program);
  registerResumeCommand(program);
  registerInspectCommands(program);
  registerRenewCommand(program);
  registerCancelCommand(program);
  registerApproveCommands(program);
  registerAnswerCommand(program);
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

export async function main(argv: readonly string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0 through commander; everything else it raises is usage.
      process.exitCode = e.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    if (e instanceof UsageError) {
      err(`warrant: ${e.message}`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    const code = (e as { code?: unknown }).code;
    err(`warrant: ${typeof code === "string" ? `${code}: ` : ""}${(e as Error).message}`);
    // A store URI that names no store (from --store or WARRANT_STORE) is a usage error.
    process.exitCode = code === "store/uri-invalid" ? EXIT_USAGE : EXIT_INVALID;
  }
}

await main(process.argv.slice(2));
