#!/usr/bin/env node
// The command line: the one composition root. Each command group registers itself from its own file.
import { Command, CommanderError } from "commander";
import { registerCidCommands } from "./commands/cid.js";
import { registerDefinitionCommands } from "./commands/definition.js";
import { registerInspectCommands } from "./commands/inspect.js";
import { registerLoopCommands } from "./commands/loop.js";
import { registerOperatorCommands } from "./commands/operator.js";
import { registerRunCommands } from "./commands/run.js";
import { registerTurnCommands } from "./commands/turn.js";
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
  registerRunCommands(program);
  registerInspectCommands(program);
  registerOperatorCommands(program);
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
