#!/usr/bin/env node
// The command line, a client of the library (createWarrant): each command registers itself from its
// own file; this file parses the arguments and turns errors into exit codes.
import { Command, CommanderError } from "commander";
import { EXIT_USAGE, err, handleBrokenPipes, UsageError } from "./io.js";

type Register = (program: Command) => void;

/**
 * Each command group's file and the commands it registers, in help order. A command's file is
 * imported only when that command runs (or help lists them all), so start-up does not pay for
 * modules the command does not use.
 */
const GROUPS: readonly { readonly commands: readonly string[]; load(): Promise<Register> }[] = [
  {
    commands: ["definition"],
    load: async () => (await import("./commands/definition.js")).registerDefinitionCommands,
  },
  { commands: ["cid"], load: async () => (await import("./commands/cid.js")).registerCidCommands },
  {
    commands: ["turn"],
    load: async () => (await import("./commands/turn.js")).registerTurnCommands,
  },
  {
    commands: ["loop"],
    load: async () => (await import("./commands/loop.js")).registerLoopCommands,
  },
  {
    commands: ["demo"],
    load: async () => (await import("./commands/demo.js")).registerDemoCommand,
  },
  { commands: ["run"], load: async () => (await import("./commands/run.js")).registerRunCommand },
  {
    commands: ["eval"],
    load: async () => (await import("./commands/eval.js")).registerEvalCommands,
  },
  {
    commands: ["worker"],
    load: async () => (await import("./commands/worker.js")).registerWorkerCommand,
  },
  {
    commands: ["workers", "requeue"],
    load: async () => (await import("./commands/requeue.js")).registerRequeueCommands,
  },
  {
    commands: ["resume"],
    load: async () => (await import("./commands/resume.js")).registerResumeCommand,
  },
  {
    commands: ["record"],
    load: async () => (await import("./commands/record.js")).registerRecordCommand,
  },
  {
    commands: ["loops", "show", "export"],
    load: async () => (await import("./commands/inspect.js")).registerInspectCommands,
  },
  {
    commands: ["renew"],
    load: async () => (await import("./commands/renew.js")).registerRenewCommand,
  },
  {
    commands: ["cancel"],
    load: async () => (await import("./commands/cancel.js")).registerCancelCommand,
  },
  {
    commands: ["approve", "deny"],
    load: async () => (await import("./commands/approve.js")).registerApproveCommands,
  },
  {
    commands: ["pending"],
    load: async () => (await import("./commands/pending.js")).registerPendingCommand,
  },
  {
    commands: ["serve"],
    load: async () => (await import("./commands/serve.js")).registerServeCommand,
  },
  {
    commands: ["diff"],
    load: async () => (await import("./commands/diff.js")).registerDiffCommand,
  },
  {
    commands: ["apply"],
    load: async () => (await import("./commands/apply.js")).registerApplyCommand,
  },
  {
    commands: ["answer"],
    load: async () => (await import("./commands/answer.js")).registerAnswerCommand,
  },
];

/** The groups `argv` needs: the named command's, none for the version, else all (help). */
function groupsFor(argv: readonly string[]): typeof GROUPS {
  const first = argv[0];
  if (first === "--version" || first === "-V") return [];
  const named = GROUPS.find((g) => first !== undefined && g.commands.includes(first));
  return named === undefined ? GROUPS : [named];
}

export async function buildProgram(argv: readonly string[] = []): Promise<Command> {
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
        "or refused, 2 usage error, 3 blocked or waiting (run, resume, demo: 0 only when the " +
        "loop succeeded).\nThe store is --store URI, else $WARRANT_STORE, else " +
        "sqlite:.warrant/ledger.db (also postgres://… and memory:).",
    )
    .exitOverride();
  for (const group of groupsFor(argv)) (await group.load())(program);
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

/** The commands whose first argument is a run's digest or a prefix of it. */
const TAKES_DIGEST = new Set(["approve", "deny"]);

/**
 * The unknown "option" commander names in an act on a run, when it reads like a digest prefix (at
 * least 8 base64url characters, its first a '-'); undefined for any other error.
 */
function digestReadAsOption(argv: readonly string[], e: CommanderError): string | undefined {
  if (e.code !== "commander.unknownOption" || !TAKES_DIGEST.has(argv[0] ?? "")) return undefined;
  const named = /unknown option '([^']*)'/.exec(e.message)?.[1];
  return named !== undefined && /^-[A-Za-z0-9_-]{7,}$/.test(named) ? named : undefined;
}

/** Commands that drive a loop: a reader closing their output does not stop the drive. */
const DRIVING = new Set(["run", "resume", "demo", "worker", "eval"]);

export async function main(argv: readonly string[]): Promise<void> {
  handleBrokenPipes(!DRIVING.has(argv[0] ?? ""));
  const program = await buildProgram(argv);
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0 through commander; everything else it raises is usage.
      process.exitCode = e.exitCode === 0 ? 0 : EXIT_USAGE;
      const read = digestReadAsOption(argv, e);
      if (read !== undefined)
        err(
          `warrant: ${read} may be a run's digest prefix (base64url digests can start with '-'): ` +
            `put it after \`--\` (warrant ${argv[0]} [options] -- ${read} STEP), or write it ` +
            "with its corpus-experiment:sha256: prefix",
        );
      return;
    }
    if (e instanceof UsageError) {
      err(`warrant: ${e.message}`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    const code = (e as { code?: unknown }).code;
    err(`warrant: ${typeof code === "string" ? `${code}: ` : ""}${(e as Error).message}`);
    // The registry says which codes are usage errors (a store URI that names no store, from
    // --store or WARRANT_STORE, among them); any other failure is 1. Loaded only on failure, so
    // start-up stays as small as the command.
    const { exitCodeOf } = await import("../library/errors.js");
    process.exitCode = exitCodeOf(code);
  }
}

await main(process.argv.slice(2));
