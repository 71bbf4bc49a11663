// `warrant requeue QUERY`: hand an open loop to the workers again — one whose job used up its
// attempts (`loops --waiting failed` lists them), or one no job stands for. `warrant workers` lists
// the workers the store knows, each with the loops it holds.
import type { Command } from "commander";
import { resolveStoreUri, toQueryId } from "../../library/basics.js";
import { requireExistingStore } from "../../library/open-ledger.js";
import { withWarrant } from "../compose.js";
import { out, printJson } from "../io.js";
import { postgresQueue } from "../job-queue.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";
import { registerWorkersCommand } from "./worker.js";

export function registerRequeueCommands(program: Command): void {
  registerWorkersCommand(program);
  program
    .command("requeue")
    .description(
      "queue an open loop for the workers again (a job that used up its attempts, say); " +
        "refuses a stopped loop (queue/loop-stopped) and an unknown one (loop/not-opened)",
    )
    .argument("<query>", "the loop's query id")
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option("--json", "machine output: {query, store, status: requeued}")
    .action(async (query: string, o: { store?: string; json?: boolean }) => {
      // A mistyped store path is said as such before the store's kind is.
      requireExistingStore(resolveStoreUri(o.store));
      const queue = await postgresQueue(o.store);
      await withWarrant(o.store, { queue }, async (warrant) => {
        const id = toQueryId(query);
        await warrant.requeue(id);
        if (o.json === true) printJson({ query: id, store: warrant.store.uri, status: "requeued" });
        else out(`requeued ${id} for the workers of ${warrant.store.uri}`);
      });
    });
}
