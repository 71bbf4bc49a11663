// `warrant run TASKPACK`: open a loop for a task pack and drive it with the live view, or with
// `--dispatch` queue it for the workers of a PostgreSQL store.
import path from "node:path";
import type { Command } from "commander";
import { parseModelUri } from "../../adapters/models/model-uri.js";
import { ROLES } from "../../core/loop/types.js";
import type { LoadedPack } from "../../runtime/task-pack.js";
import { definitionOptions, driveOptions, liveView, withWarrant } from "../compose.js";
import { reportDrive } from "../drive-report.js";
import { EXIT_INVALID, err, formatProblem, out, printJson, UsageError } from "../io.js";
import { loadOrFail } from "../packs.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";
import { postgresQueue } from "./worker.js";

interface RunFlags {
  readonly model?: string[];
  readonly skills?: string[];
  readonly namespace?: string;
  readonly yes?: boolean;
  readonly store?: string;
  readonly dispatch?: boolean;
  readonly json?: boolean;
}

/** `--model ROLE=URI` flags, scripted paths made absolute so `resume` finds them from anywhere. */
export function parseModelFlags(flags: readonly string[]): Record<string, string> {
  const models: Record<string, string> = {};
  for (const flag of flags) {
    const eq = flag.indexOf("=");
    const role = flag.slice(0, eq);
    if (eq < 0 || !(ROLES as readonly string[]).includes(role)) {
      throw new UsageError(`--model takes ROLE=URI with ROLE one of ${ROLES.join(", ")}: ${flag}`);
    }
    const uri = flag.slice(eq + 1);
    const parsed = parseModelUri(uri);
    if (!parsed.ok)
      throw new UsageError(`--model ${role}: ${parsed.errors[0]?.message ?? "invalid"}`);
    models[role] =
      parsed.value.kind === "scripted" ? `scripted:${path.resolve(parsed.value.path)}` : uri;
  }
  return models;
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
  },
): Promise<void> {
  const view = liveView(flags.json);
  try {
    const options = { ...driveOptions(flags, view), ...definitionOptions(flags) };
    await withWarrant(flags.store, options, async (warrant) => {
      const check = await warrant.checkDefinitions(pack, { models });
      for (const w of check.warnings) err(`warrant: warning: ${formatProblem(undefined, w)}`);
      if (check.problems.length > 0) {
        view.close();
        for (const p of check.problems) err(formatProblem(pack.file, p));
        if (flags.json) printJson({ status: "refused", errors: check.problems });
        process.exitCode = EXIT_INVALID;
        return;
      }
      const outcome = await warrant.run(pack, { models }).result;
      view.close();
      reportDrive(outcome, warrant.store.uri, flags.json);
    });
  } finally {
    view.close();
  }
}

async function dispatchPack(
  pack: LoadedPack,
  models: Record<string, string>,
  storeFlag: string | undefined,
  json: boolean,
  definitions: ReturnType<typeof definitionOptions>,
): Promise<void> {
  const queue = await postgresQueue(storeFlag);
  const view = liveView(json);
  const flags = { yes: false, interactive: false, json };
  const options = { ...driveOptions(flags, view), ...definitions, queue };
  await withWarrant(storeFlag, options, async (warrant) => {
    const query = await warrant.dispatch(pack, { models }).finally(() => view.close());
    const uri = warrant.store.uri;
    if (json) {
      printJson({ query, store: uri, status: "dispatched" });
      return;
    }
    out(`dispatched to the workers of ${uri}`);
    out(`query: ${query}`);
  });
}

export function registerRunCommand(program: Command): void {
  program
    .command("run")
    .description("open a loop for a task pack and drive it")
    .argument("<taskpack>", "task-pack file")
    .option(
      "--model <role=uri...>",
      "a role's model instead of its agent definition's (recorded as an override): scripted:PATH, openai:MODEL, openai-compatible:URL#MODEL, anthropic:MODEL",
    )
    .option("--skills <dir...>", "more folders holding agent definitions' skills (<dir>/<name>/)")
    .option("--namespace <name>", "whose memory namespace-scoped agent memory is")
    .option("--yes", "approve every mutation without asking (recorded as such)")
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option("--dispatch", "open the loop and queue it for `warrant worker` (PostgreSQL) instead")
    .option(
      "--json",
      "machine output: {query, store, status, stop?, blocked?, spent} (live view on stderr)",
    )
    .action(async (file: string, o: RunFlags) => {
      const models = parseModelFlags(o.model ?? []);
      const pack = await loadOrFail(file);
      if (pack === undefined) return;
      if (o.dispatch === true) {
        await dispatchPack(pack, models, o.store, o.json === true, definitionOptions(o));
        return;
      }
      await runPack(pack, models, {
        yes: o.yes === true,
        interactive: true,
        json: o.json === true,
        store: o.store,
        ...definitionOptions(o),
      });
    });
}
