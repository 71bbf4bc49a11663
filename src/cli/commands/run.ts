// `warrant run TASKPACK`: open a loop for a task pack and drive it with the live view, or with
// `--dispatch` queue it for the workers of a PostgreSQL store. Either way the preflight runs first
// and a failure opens no loop; `--check` runs the preflight alone (`--probe`: reach the endpoints).
import type { Command } from "commander";
import type { LoadedPack } from "../../index.js";
import { resolveStoreUri } from "../../library/basics.js";
import type { WarrantOptions } from "../../library/options.js";
import { OPERATOR_OPTION, OPERATOR_OPTION_HELP, operatorOf } from "../act-reply.js";
import { definitionOptions, driveOptions, liveView, withWarrant } from "../compose.js";
import { EXIT_HELP, isProcessStore, reportDrive } from "../drive-report.js";
import { EXIT_INVALID, err, formatProblem, out, printJson, UsageError } from "../io.js";
import { postgresQueue } from "../job-queue.js";
import { checkOnly, loadChecked, parseModelFlags } from "../pack-preflight.js";
import { packFileOf, requirePackFile } from "../packs.js";
import {
  SANDBOX_OPTION,
  SANDBOX_OPTION_HELP,
  sandboxChoice,
  sandboxFor,
  WEAKER_OPTION,
  WEAKER_OPTION_HELP,
} from "../sandbox-option.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";
import { flushingOnSignals } from "../telemetry-signals.js";

/**
 * `run` and `demo` create their store, and its folder inside the current folder's tree; a folder
 * elsewhere must exist already (`store/folder-missing`): a path outside is given explicitly by
 * making its folder first.
 */
const createStore = "inside-cwd" as const;

interface RunFlags {
  readonly model?: string[];
  readonly skills?: string[];
  readonly namespace?: string;
  readonly yes?: boolean;
  readonly store?: string;
  readonly dispatch?: boolean;
  readonly count?: string;
  readonly json?: boolean;
  readonly check?: boolean;
  readonly probe?: boolean;
  readonly sandbox?: string;
  readonly allowWeakerSandbox?: boolean;
  readonly operator?: string;
}

/**
 * Opens the loop and drives it to a stop or a block; prints the outcome and sets the exit code.
 * The agent definitions are checked first: their warnings are told on stderr, and a problem
 * refuses the run (exit 1) before any loop opens.
 */
export async function runPack(
  pack: LoadedPack,
  models: Record<string, string>,
  flags: {
    yes: boolean;
    interactive: boolean;
    json: boolean;
    store?: string | undefined;
    skills?: readonly string[];
    namespace?: string;
    /** Why mutations are approved without asking, for the live view (default `--yes`). */
    autoApproval?: string;
    sandbox?: WarrantOptions["sandbox"];
    /** Who approves at the prompt (or with --yes): an operator binding. */
    operator?: string;
  },
): Promise<void> {
  const view = liveView(flags.json, true, {
    ...(flags.autoApproval === undefined ? {} : { autoApproval: flags.autoApproval }),
    processStore: isProcessStore(resolveStoreUri(flags.store)),
  });
  try {
    const options = { ...driveOptions(flags, view), ...definitionOptions(flags), createStore };
    await withWarrant(flags.store, options, async (warrant) => {
      const check = await warrant.checkDefinitions(pack, { models });
      for (const w of check.warnings) err(`warrant: warning: ${formatProblem(undefined, w)}`);
      if (check.problems.length > 0) {
        // As a failed preflight: each problem on stderr, nothing on stdout, no loop opened.
        view.close();
        for (const p of check.problems) err(`warrant: ${formatProblem(undefined, p)}`);
        process.exitCode = EXIT_INVALID;
        return;
      }
      const outcome = await flushingOnSignals(warrant, () => warrant.run(pack, { models }).result);
      view.close();
      reportDrive(outcome, warrant.store.uri, flags.json);
    });
  } finally {
    view.close();
  }
}

/**
 * Opens and queues `count` loops of each pack, in one process over one store and one queue
 * connection; prints each query (`--json`: one object for one loop, else an array).
 */
async function dispatchPacks(
  packs: readonly LoadedPack[],
  count: number,
  models: Record<string, string>,
  storeFlag: string | undefined,
  json: boolean,
  definitions: ReturnType<typeof definitionOptions>,
  operator: string,
): Promise<void> {
  const queue = await postgresQueue(storeFlag);
  const view = liveView(json);
  const flags = { yes: false, interactive: false, json, operator };
  const options = { ...driveOptions(flags, view), ...definitions, queue, createStore };
  await withWarrant(storeFlag, options, async (warrant) => {
    const uri = warrant.store.uri;
    const queries: string[] = [];
    try {
      for (const pack of packs)
        for (let i = 0; i < count; i++) {
          const query = await warrant.dispatch(pack, { models });
          queries.push(query);
          if (!json) {
            if (queries.length === 1) out(`dispatched to the workers of ${uri}`);
            out(`query: ${query}`);
          }
        }
    } finally {
      view.close();
    }
    if (json) {
      const rows = queries.map((query) => ({ query, store: uri, status: "dispatched" }));
      printJson(rows.length === 1 ? rows[0] : rows);
    }
  });
}

export function registerRunCommand(program: Command): void {
  program
    .command("run")
    .description("open a loop for a task pack and drive it")
    .argument(
      "<taskpack...>",
      "task-pack file, or a folder holding task-pack.json (with --dispatch, one or more)",
    )
    .addHelpText("after", EXIT_HELP)
    .option(
      "--model <role=uri...>",
      "a role's model instead of its agent definition's (recorded as an override): scripted:PATH, openai:MODEL, openai-compatible:URL#MODEL, anthropic:MODEL",
    )
    .option("--skills <dir...>", "more folders holding agent definitions' skills (<dir>/<name>/)")
    .option("--namespace <name>", "whose memory namespace-scoped agent memory is")
    .option("--yes", "approve every mutation without asking (recorded as such)")
    .option(OPERATOR_OPTION, `${OPERATOR_OPTION_HELP}: who answers the approval prompt (or --yes)`)
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option(
      "--dispatch",
      "open the loop and queue it for `warrant worker` (PostgreSQL) instead; several task packs " +
        "and --count dispatch many loops in one process",
    )
    .option("--count <n>", "with --dispatch: loops opened and queued per task pack", "1")
    .option(SANDBOX_OPTION, SANDBOX_OPTION_HELP)
    .option(WEAKER_OPTION, WEAKER_OPTION_HELP)
    .option(
      "--check",
      "only the preflight (models, keys, scripts, MCP servers, agent definitions), opening nothing; --json: " +
        "{taskpack, ok, usage, checks: [{name, ok, notes}], problems: [{check, code, path, message, usage}]}",
    )
    .option("--probe", "the preflight also reaches each live model's endpoint (GET /models)")
    .option(
      "--json",
      "machine output: {query, store, status, stop?, blocked?, spent} (live view on stderr)",
    )
    .action(async (given: string[], o: RunFlags) => {
      const models = parseModelFlags(o.model ?? []);
      const files = given.map(packFileOf);
      // A bad choice is a usage error before anything else; the backend is proven only to drive.
      sandboxChoice(o.sandbox);
      const count = Number(o.count ?? "1");
      if (!Number.isSafeInteger(count) || count < 1)
        throw new UsageError("--count takes a positive integer");
      if ((o.dispatch !== true || o.check === true) && (files.length !== 1 || count !== 1))
        throw new UsageError("several task packs and --count need --dispatch (and no --check)");
      if (o.dispatch === true && o.check !== true) {
        const packs: LoadedPack[] = [];
        for (const file of files) {
          const pack = await loadChecked(file, models, o);
          if (pack === undefined) return;
          packs.push(pack);
        }
        await dispatchPacks(
          packs,
          count,
          models,
          o.store,
          o.json === true,
          definitionOptions(o),
          operatorOf(o.operator),
        );
        return;
      }
      const file = files[0] as string;
      if (o.check === true) {
        requirePackFile(file);
        await checkOnly(file, models, {
          probe: o.probe === true,
          json: o.json === true,
          sandbox: o.sandbox,
          allowWeakerSandbox: o.allowWeakerSandbox === true,
          store: o.store,
          ...definitionOptions(o),
        });
        return;
      }
      const pack = await loadChecked(file, models, o);
      if (pack === undefined) return;
      await runPack(pack, models, {
        operator: operatorOf(o.operator),
        yes: o.yes === true,
        interactive: true,
        json: o.json === true,
        store: o.store,
        sandbox: await sandboxFor(o.sandbox, o.allowWeakerSandbox === true),
        ...definitionOptions(o),
      });
    });
}
