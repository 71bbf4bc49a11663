// `warrant cancel QUERY`: stop a loop; a running run stops at its next step boundary.
import type { Command } from "commander";
import { toQueryId } from "../../library/basics.js";
import { ACT_OPTIONS, type ActFlags, operatorOf, reply } from "../act-reply.js";
import { withWarrant } from "../compose.js";

export function registerCancelCommand(program: Command): void {
  const command = program
    .command("cancel")
    .description("cancel a loop: a running run stops at its next step boundary")
    .argument("<query>", "the loop's query id");
  for (const [flag, help] of ACT_OPTIONS) command.option(flag, help);
  command.action(async (query: string, o: ActFlags) => {
    const operator = operatorOf(o.operator);
    await withWarrant(o.store, {}, async (warrant) =>
      reply(await warrant.cancel(toQueryId(query), { operator }), o.json === true),
    );
  });
}
