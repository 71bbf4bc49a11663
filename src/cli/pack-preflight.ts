// Before any loop opens: the task pack loaded and the preflight run (models, keys, scripts, MCP
// servers, agent definitions); `run --check` prints the whole report.
import path from "node:path";
import type { LoadedPack } from "../index.js";
import { parseModelUri, ROLES, resolveStoreUri } from "../library/basics.js";
import { effectiveModelUris } from "../library/definition-models.js";
import type { PreflightReport } from "../library/preflight.js";

/** The preflight, loaded by the command that runs it (not when help lists the commands). */
const preflight: typeof import("../library/preflight.js").preflight = async (...a) =>
  (await import("../library/preflight.js")).preflight(...a);

import { definitionOptions } from "./compose.js";
import { EXIT_INVALID, EXIT_USAGE, err, formatProblem, out, printJson, UsageError } from "./io.js";
import { loadOrFail } from "./packs.js";
import { sandboxLookup } from "./sandbox-option.js";

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
 * What the preflight checks: each role's model as it will run (its `--model`, else its definition's
 * first) with the overrides apart, and where skills and namespaced memory come from.
 */
function definitionSubject(
  pack: LoadedPack,
  overrides: Record<string, string>,
  o: { readonly skills?: readonly string[]; readonly namespace?: string },
) {
  return {
    pack,
    models: effectiveModelUris(pack, overrides, process.env),
    overrides,
    env: process.env,
    ...definitionOptions(o),
  };
}

/** Prints a failed preflight's problems on stderr and sets the exit code (2 usage, else 1). */
function refuse(report: PreflightReport): void {
  for (const p of report.problems) err(`warrant: ${p.code}: ${p.message}`);
  process.exitCode = report.usage ? EXIT_USAGE : EXIT_INVALID;
}

/**
 * `run --check`: the pack's loading and the preflight, reported whole — with each command
 * profile's program looked up in the sandbox `--sandbox` names, on the baseline; no loop is opened.
 */
export async function checkOnly(
  file: string,
  models: Record<string, string>,
  flags: {
    probe: boolean;
    json: boolean;
    skills?: readonly string[];
    namespace?: string;
    sandbox?: string | undefined;
    allowWeakerSandbox?: boolean;
    store?: string | undefined;
  },
): Promise<void> {
  const { loadPack } = await import("../index.js");
  const loaded = await loadPack(file);
  const sandbox = await sandboxLookup(flags.sandbox, flags.allowWeakerSandbox === true);
  const report: PreflightReport = loaded.ok
    ? await preflight({
        ...definitionSubject(loaded.value, models, flags),
        probe: flags.probe,
        scripts: true,
        store: resolveStoreUri(flags.store),
        sandbox,
      })
    : {
        ok: false,
        usage: false,
        checks: [{ name: "pack", ok: false, notes: [] }],
        problems: loaded.errors.map((p) => ({ ...p, check: "pack", usage: false })),
      };
  if (flags.json) {
    printJson({ taskpack: path.resolve(file), ...report });
  } else {
    for (const c of report.checks) {
      out(`${c.ok ? "ok  " : "FAIL"} ${c.name}`);
      for (const n of c.notes) out(`       ${n}`);
      for (const p of report.problems)
        if (p.check === c.name) out(`       ${formatProblem(undefined, p)}`);
    }
    out(report.ok ? "preflight passed" : "preflight failed");
  }
  if (!report.ok) process.exitCode = report.usage ? EXIT_USAGE : EXIT_INVALID;
}

/**
 * A task pack loaded and preflighted before any loop opens: a model, a key, a script or a server
 * missing is said now (and undefined returned, the exit code set).
 */
export async function loadChecked(
  file: string,
  models: ReturnType<typeof parseModelFlags>,
  o: {
    readonly skills?: readonly string[];
    readonly namespace?: string;
    readonly probe?: boolean;
    readonly store?: string | undefined;
  },
): Promise<LoadedPack | undefined> {
  const pack = await loadOrFail(file);
  if (pack === undefined) return undefined;
  const report = await preflight({
    ...definitionSubject(pack, models, o),
    probe: o.probe === true,
    store: resolveStoreUri(o.store),
  });
  if (!report.ok) {
    refuse(report);
    return undefined;
  }
  return pack;
}
