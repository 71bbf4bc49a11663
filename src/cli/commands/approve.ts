// `warrant approve RUN STEP` and `warrant deny RUN STEP [--reason TEXT]`: answer a waiting mutation
// (or a run's admission, STEP = admission) from any terminal; the waiting drive polls for it. RUN is
// the run's proposal ref or any unique prefix of at least 8 characters of its digest.
import type { Command } from "commander";
import { exitCodeOf } from "../../library/errors.js";
import { ACT_OPTIONS, type ActFlags, operatorOf, reply } from "../act-reply.js";
import { withWarrant } from "../compose.js";
import { EXIT_USAGE } from "../io.js";

interface DecideFlags extends ActFlags {
  readonly reason?: string;
}

export function registerApproveCommands(program: Command): void {
  for (const kind of ["approve", "deny"] as const) {
    const command = program
      .command(kind)
      .description(`${kind} a mutation step of a waiting run (or its admission: STEP = admission)`)
      .argument(
        "<run>",
        "the run's proposal ref (corpus-experiment:sha256:…), or any unique prefix of at least 8 " +
          "characters of its digest (one that starts with '-' goes after `--`)",
      )
      .argument("<step>", "the step id");
    if (kind === "deny")
      command.option("--reason <text>", "why: recorded with the denial, shown by show and record");
    for (const [flag, help] of ACT_OPTIONS) command.option(flag, help);
    command.addHelpText(
      "after",
      "\nThe act is recorded with its operator (--operator, else $WARRANT_OPERATOR, else the login " +
        "name).\nExit codes: 0 posted; 1 refused (hil/already-answered, loop/already-stopped, " +
        "loop/run-missing…); 2 usage (hil/ref-too-short, hil/ambiguous-ref with the candidates, " +
        "operator/name-invalid).",
    );
    command.action(async (run: string, step: string, o: DecideFlags) => {
      const operator = operatorOf(o.operator);
      await withWarrant(o.store, {}, async (warrant) => {
        const result =
          kind === "approve"
            ? await warrant.approve(run, step, { operator })
            : await warrant.deny(run, step, {
                operator,
                ...(o.reason === undefined ? {} : { reason: o.reason }),
              });
        reply(result, o.json === true);
        // A refusal that is the caller's input at fault (a run prefix too short, malformed or
        // ambiguous) is a usage error: the registry says which.
        if (!result.ok && exitCodeOf(result.code) === EXIT_USAGE) process.exitCode = EXIT_USAGE;
      });
    });
  }
}
