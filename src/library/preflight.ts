// The preflight: what `warrant run` (and `run --dispatch`, and `run --check` alone) checks before
// any loop opens or anything is charged. It is a list of checks over the loaded pack, the model URI
// of each role and the environment; a module joins the list with one line in PREFLIGHT_CHECKS. No
// check prints or returns a key.
import { MODEL_PROBE } from "./model-probe.js";
import { commandCheck, toolchainHoldings } from "./preflight-commands.js";
import { DEFINITION_CHECK } from "./preflight-definitions.js";
import { MODEL_CHECK } from "./preflight-models.js";
import { SCRIPT_CHECK } from "./preflight-scripts.js";
import { MCP_SERVER_CHECK } from "./preflight-tools.js";
import type {
  CheckOutcome,
  PreflightCheck,
  PreflightProblem,
  PreflightReport,
  PreflightSubject,
} from "./preflight-types.js";

export type {
  CheckOutcome,
  CheckProblem,
  Env,
  PreflightCheck,
  PreflightProblem,
  PreflightReport,
  PreflightSubject,
} from "./preflight-types.js";

/** The checks run before every loop opens, in order. */
export const PREFLIGHT_CHECKS: readonly PreflightCheck[] = [
  MODEL_CHECK,
  MCP_SERVER_CHECK,
  DEFINITION_CHECK,
];

/** The `toolchains` check: no toolchain holds the store or its host key. */
const STORE_HOLDINGS: PreflightCheck = {
  name: "toolchains",
  async run({ pack, store }) {
    return { problems: store === undefined ? [] : await toolchainHoldings(pack, store) };
  },
};

/**
 * Runs `checks` (default PREFLIGHT_CHECKS; then, when the subject asks or gives them, the scripts
 * check, the toolchains against its store, the commands in its sandbox, and the probe), each to
 * its end: every problem is reported, not the first. A check that throws is reported as
 * `runtime/preflight-check` rather than ending the preflight.
 */
export async function preflight(
  subject: PreflightSubject,
  checks: readonly PreflightCheck[] = PREFLIGHT_CHECKS,
): Promise<PreflightReport> {
  const all = [
    ...checks,
    ...(subject.scripts === true ? [SCRIPT_CHECK] : []),
    ...(subject.store === undefined ? [] : [STORE_HOLDINGS]),
    ...(subject.sandbox === undefined ? [] : [commandCheck(subject.sandbox)]),
    ...(subject.probe === true ? [MODEL_PROBE] : []),
  ];
  const rows: PreflightReport["checks"][number][] = [];
  const problems: PreflightProblem[] = [];
  for (const check of all) {
    let outcome: CheckOutcome;
    try {
      outcome = await check.run(subject);
    } catch (e) {
      const message = `the ${check.name} check failed: ${(e as Error).message}`;
      outcome = { problems: [{ code: "runtime/preflight-check", path: "", message }] };
    }
    for (const p of outcome.problems)
      problems.push({ ...p, check: check.name, usage: p.usage === true });
    rows.push({ name: check.name, ok: outcome.problems.length === 0, notes: outcome.notes ?? [] });
  }
  return {
    ok: problems.length === 0,
    checks: rows,
    problems,
    usage: problems.some((p) => p.usage),
  };
}
