// `warrant approve RUN STEP` and `warrant deny RUN STEP`: answer a waiting mutation (or a run's
// admission, STEP = admission) from any terminal; the waiting drive polls for it.
import type { Command } from "commander";
import { ACT_OPTIONS, type ActFlags, reply } from "../act-reply.js";
import { withWarrant } from "../compose.js";

export function registerApproveCommands(program: Command): void {
  for (const kind of ["approve", "deny"] as const) {
    const command = program
      .command(kind)
      .description(`${kind} a mutation step of a waiting run (or its admission: STEP = admission)`)
      .argument("<run>", "the run's proposal ref (corpus-experiment:sha256:…)")
      .argument("<step>", "the step id");
    for (const [flag, help] of ACT_OPTIONS) command.option(flag, help);
    command.action(async (run: string, step: string, o: ActFlags) => {
      await withWarrant(o.store, {}, async (warrant) =>
        reply(await warrant[kind](run, step), o.json === true),
      );
    });
  }
}
