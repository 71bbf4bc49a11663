// `warrant demo`: the bundled fix-failing-test example end to end with scripted agents, in the real
// sandbox; it approves each mutation itself unless `--interactive`.
import type { Command } from "commander";
import { OPERATOR_OPTION, OPERATOR_OPTION_HELP, operatorOf } from "../act-reply.js";
import { EXIT_HELP } from "../drive-report.js";
import { err, out } from "../io.js";
import { demoPackFile, loadOrFail } from "../packs.js";
import {
  SANDBOX_OPTION,
  SANDBOX_OPTION_HELP,
  sandboxFor,
  WEAKER_OPTION,
  WEAKER_OPTION_HELP,
} from "../sandbox-option.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";
import { runPack } from "./run.js";

interface DemoFlags {
  readonly store?: string;
  readonly interactive?: boolean;
  readonly json?: boolean;
  readonly sandbox?: string;
  readonly allowWeakerSandbox?: boolean;
  readonly operator?: string;
}

export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description("run the bundled fix-failing-test example end to end with scripted agents")
    .addHelpText("after", EXIT_HELP)
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option(SANDBOX_OPTION, SANDBOX_OPTION_HELP)
    .option(WEAKER_OPTION, WEAKER_OPTION_HELP)
    .option("--interactive", "ask before each mutation instead of approving it")
    .option(OPERATOR_OPTION, `${OPERATOR_OPTION_HELP}: who approves each mutation`)
    .option(
      "--json",
      "machine output: {query, store, status, stop?, blocked?, spent} (live view on stderr)",
    )
    .action(async (o: DemoFlags) => {
      const operator = operatorOf(o.operator);
      const sandbox = await sandboxFor(o.sandbox, o.allowWeakerSandbox === true);
      const pack = await loadOrFail(demoPackFile());
      if (pack === undefined) return;
      const interactive = o.interactive === true;
      const json = o.json === true;
      // With --json stdout carries only the result; the story goes with the live view to stderr.
      const say = json ? err : out;
      say("warrant demo: fix-failing-test with scripted agents, in the real sandbox.");
      if (!interactive)
        say("The demo approves each mutation itself (run with --interactive to decide).");
      // The demo's agent definitions name their scripted models: no model is overridden.
      await runPack(
        pack,
        {},
        {
          operator,
          yes: !interactive,
          interactive,
          json,
          store: o.store,
          autoApproval: "the demo approves each mutation; --interactive to decide",
          sandbox,
        },
      );
    });
}
