// `warrant answer QUERY TEXT`: answer the question a loop is blocked on.
import type { Command } from "commander";
import { toQueryId } from "../../library/basics.js";
import { ACT_OPTIONS, type ActFlags, operatorOf, reply } from "../act-reply.js";
import { withWarrant } from "../compose.js";

export function registerAnswerCommand(program: Command): void {
  const command = program
    .command("answer")
    .description("answer the question a loop is blocked on")
    .argument("<query>", "the loop's query id")
    .argument("<text>", "the answer");
  for (const [flag, help] of ACT_OPTIONS) command.option(flag, help);
  command.action(async (query: string, text: string, o: ActFlags) => {
    const operator = operatorOf(o.operator);
    await withWarrant(o.store, {}, async (warrant) =>
      reply(await warrant.answer(toQueryId(query), text, { operator }), o.json === true),
    );
  });
}
