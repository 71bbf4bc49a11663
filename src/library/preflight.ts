// The preflight: what `warrant run` (and `run --dispatch`, and `run --check` alone) checks before
// any loop opens or anything is charged. It is a list of checks over the loaded pack, the model URI
// of each role and the environment; a module joins the list with one line in PREFLIGHT_CHECKS. No
// check prints or returns a key.
import type { Problem } from "../core/result.js";
import type { Sandbox } from "../core/sandbox/sandbox-port.js";
import type { LoadedPack } from "../runtime/task-pack.js";
import { MODEL_PROBE } from "./model-probe.js";
import { commandCheck, toolchainHoldings } from "./preflight-commands.js";
import { DEFINITION_CHECK } from "./preflight-definitions.js";
import { MODEL_CHECK } from "./preflight-models.js";
import { SCRIPT_CHECK } from "./preflight-scripts.js";
import { MCP_SERVER_CHECK } from "./preflight-tools.js";

export type Env = Readonly<Record<string, string | undefined>>;

export interface PreflightSubject {
  readonly pack: LoadedPack;
  /** The model URI each role runs on (its `--model ROLE=URI`, else its definition's). */
  readonly models: Readonly<Record<string, string>>;
  /**
   * The roles whose model the run names instead of their definition's (`--model`). Absent: every
   * entry of `models` is one, and a role with none has no model.
   */
  readonly overrides?: Readonly<Record<string, string>>;
  /** More folders holding the definitions' skills, and the memory namespace the run names. */
  readonly skills?: readonly string[];
  readonly namespace?: string;
  /** Where keys, base URLs and PATH are read (the command line passes its environment). */
  readonly env: Env;
  /** Also reach each live model's endpoint (a request to it; see MODEL_PROBE). */
  readonly probe?: boolean;
  /** Also read every line of each role's scripted model as the turn it will be (SCRIPT_CHECK). */
  readonly scripts?: boolean;
  /** How long a probe waits for an endpoint (default 10 s). */
  readonly probeTimeoutMs?: number;
  /**
   * The sandbox the run would use: given, each command profile's program is also looked up in
   * it, on the baseline (the `commands` check; see preflight-commands.ts).
   */
  readonly sandbox?: () => Promise<Sandbox | undefined>;
  /** The store the run would use: given, no toolchain may hold it or its host key. */
  readonly store?: string;
}

/** What a check found: a problem, and whether it is the caller's usage (exit 2) or invalid (1). */
export interface CheckProblem extends Problem {
  /** A flag, a file or a variable the caller must give (exit 2), rather than content to fix (1). */
  readonly usage?: boolean;
}

export interface CheckOutcome {
  readonly problems: readonly CheckProblem[];
  /** What the check saw, said for the operator (never a key). */
  readonly notes?: readonly string[];
}

export interface PreflightCheck {
  /** A short name (`models`, `mcp-servers`, `probe`), shown with what it found. */
  readonly name: string;
  run(subject: PreflightSubject): Promise<CheckOutcome>;
}

export interface PreflightProblem extends Problem {
  readonly check: string;
  readonly usage: boolean;
}

export interface PreflightReport {
  readonly ok: boolean;
  readonly checks: readonly {
    readonly name: string;
    readonly ok: boolean;
    readonly notes: readonly string[];
  }[];
  readonly problems: readonly PreflightProblem[];
  /** True when a problem is the caller's usage: the command line exits 2 rather than 1. */
  readonly usage: boolean;
}

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
