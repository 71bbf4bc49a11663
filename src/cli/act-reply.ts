// How an operator command reports what the library did: a plain line (a refusal on stderr, exit 1),
// or with `--json` the act's result itself: `{ok, result?, code?, message}`. The plain line is
// terminal-safe: it may name a step of a model's plan.
import { terminalLine } from "../core/text/terminal-text.js";
import type { ActResult } from "../library/operator-acts.js";
import { EXIT_INVALID, err, out, printJson } from "./io.js";
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
}

/** The options every operator act takes: the store and `--json`. */
export const ACT_OPTIONS: readonly (readonly [string, string])[] = [
  [STORE_OPTION, STORE_OPTION_HELP],
  ["--json", "machine output: {ok, result?, code?, message}"],
];
