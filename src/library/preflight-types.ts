// The preflight's shapes, shared by its checks (preflight-*.ts) and the list that runs them
// (preflight.ts): what a check is given, what it finds, and the report.

import type { Sandbox } from "../core/ports/sandbox.js";
import type { Problem } from "../core/result.js";
import type { LoadedPack } from "../runtime/task-pack.js";

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
