// How an operator command reports what the library did: a plain line (a refusal on stderr, exit 1),
// or with `--json` the act's result itself: `{ok, result?, code?, message}`. The plain line is
// terminal-safe: it may name a step of a model's plan.

import { terminalLine } from "../library/basics.js";
import { isWarrantError } from "../library/errors.js";
import type { ActResult } from "../library/operator-acts.js";
import { defaultOperatorBinding, operatorBindingOf } from "../library/operators.js";
import { EXIT_INVALID, err, out, printJson, UsageError } from "./io.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "./store-option.js";

export function reply(result: ActResult, json: boolean): void {
  if (json) printJson(result);
  else if (result.ok) out(terminalLine(result.message));
  else err(terminalLine(`warrant: ${result.code}: ${result.message}`));
  if (!result.ok) process.exitCode = EXIT_INVALID;
}

export interface ActFlags {
  readonly store?: string;
  readonly json?: boolean;
  readonly operator?: string;
}

export const OPERATOR_OPTION = "--operator <name>";
export const OPERATOR_OPTION_HELP =
  "who acts, recorded with the act (default: $WARRANT_OPERATOR, else the login name; 1 to 128 " +
  "characters, no white space or control character)";

/** The options every operator act takes: the store, `--json` and `--operator`. */
export const ACT_OPTIONS: readonly (readonly [string, string])[] = [
  [STORE_OPTION, STORE_OPTION_HELP],
  ["--json", "machine output: {ok, result?, code?, message}"],
  [OPERATOR_OPTION, OPERATOR_OPTION_HELP],
];

/**
 * The operator binding an act or a drive records: `--operator NAME`, else `$WARRANT_OPERATOR`, else
 * the login name. A name that is not one (empty, too long, white space or control characters) is a
 * usage error, `operator/name-invalid`, before any store is opened.
 */
export function operatorOf(flag: string | undefined): string {
  try {
    return flag === undefined ? defaultOperatorBinding() : operatorBindingOf(flag, "--operator");
  } catch (e) {
    if (isWarrantError(e)) throw new UsageError(e.message, e.code);
    throw e;
  }
}
