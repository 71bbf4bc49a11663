// `warrant renew QUERY (--deadline T | --extend MS)`: move a loop's deadline.
import type { Command } from "commander";
import { toQueryId } from "../../library/basics.js";
import { ACT_OPTIONS, type ActFlags, operatorOf, reply } from "../act-reply.js";
import { withWarrant } from "../compose.js";
import { UsageError } from "../io.js";

interface RenewFlags extends ActFlags {
  readonly deadline?: string;
  readonly extend?: string;
}

/** The new deadline the flags name: a time, or MS from now. */
function deadlineOf(o: RenewFlags): Date {
  if ((o.deadline === undefined) === (o.extend === undefined)) {
    throw new UsageError("renew takes exactly one of --deadline T and --extend MS");
  }
  if (o.extend !== undefined) {
    const ms = Number(o.extend);
    if (!Number.isSafeInteger(ms) || ms <= 0) {
      throw new UsageError("--extend takes a positive integer (ms)");
    }
    // MS from now: the loop refuses a deadline not later than the current one, or more than its
    // max/wall-time-ms after now (loop/renewal-invalid).
    return new Date(Date.now() + ms);
  }
  const at = Date.parse(o.deadline ?? "");
  if (Number.isNaN(at)) throw new UsageError("--deadline takes an RFC 3339 time");
  return new Date(at);
}

export function registerRenewCommand(program: Command): void {
  const command = program
    .command("renew")
    .description("move a loop's deadline: to a time, or MS from now")
    .argument("<query>", "the loop's query id")
    .option("--deadline <time>", "the new deadline (RFC 3339)")
    .option(
      "--extend <ms>",
      "the new deadline is MS from now, not from the current deadline (it must still be later " +
        "than the current one, and at most max/wall-time-ms from now)",
    );
  for (const [flag, help] of ACT_OPTIONS) command.option(flag, help);
  command.action(async (query: string, o: RenewFlags) => {
    const deadline = deadlineOf(o);
    const operator = operatorOf(o.operator);
    await withWarrant(o.store, {}, async (warrant) =>
      reply(await warrant.renew(toQueryId(query), deadline, { operator }), o.json === true),
    );
  });
}
