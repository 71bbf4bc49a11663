// Who acts: an operator's name, as `--operator NAME`, `WARRANT_OPERATOR`, the login name or a
// console token names it, and the binding the ledger records for it (`node-operator-binding:NAME`,
// the form the loop contract's `operator/binding-ref` takes). A name is checked before anything is
// recorded: `operator/name-invalid` says why it is refused.
import { userInfo } from "node:os";
import { WarrantError } from "../core/result.js";
import { terminalLine } from "../core/text/terminal-text.js";

/** The prefix of an operator binding: `node-operator-binding:NAME`. */
export const OPERATOR_BINDING_PREFIX = "node-operator-binding:";

/** The longest operator name: 128 characters. */
export const OPERATOR_NAME_MAX = 128;

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Why `name` is not an operator name, or undefined when it is one: a name is 1 to 128 characters,
 * with no white space and no control character (the ledger's binding is `node-operator-binding:`
 * followed by non-space characters).
 */
export function operatorNameProblem(name: string): string | undefined {
  if (name === "") return "an operator name is not empty";
  const chars = [...name];
  if (chars.length > OPERATOR_NAME_MAX)
    return `an operator name is at most ${OPERATOR_NAME_MAX} characters (this one has ${chars.length})`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
  if (/[\u0000-\u001f\u007f-\u009f]/u.test(name))
    return "an operator name holds no control character";
  if (/\s/u.test(name)) return "an operator name holds no white space";
  return undefined;
}

/** The quoted name for a message: cut at 60 characters, every control character escaped. */
function shown(name: string): string {
  const cut = [...name].slice(0, 60).join("");
  return terminalLine(`"${cut}"${cut.length < name.length ? "…" : ""}`);
}

/**
 * The binding of an operator: NAME (or a binding already, `node-operator-binding:NAME`) checked
 * and prefixed. Refused with `operator/name-invalid`, saying where the name came from (`from`).
 */
export function operatorBindingOf(nameOrBinding: string, from = "the operator"): string {
  const name = nameOrBinding.startsWith(OPERATOR_BINDING_PREFIX)
    ? nameOrBinding.slice(OPERATOR_BINDING_PREFIX.length)
    : nameOrBinding;
  const problem = operatorNameProblem(name);
  if (problem !== undefined)
    throw new WarrantError("operator/name-invalid", `${from} ${shown(name)}: ${problem}`);
  return `${OPERATOR_BINDING_PREFIX}${name}`;
}

/** NAME of `node-operator-binding:NAME` (a string without the prefix is returned as it is). */
export function operatorNameOf(binding: string): string {
  return binding.startsWith(OPERATOR_BINDING_PREFIX)
    ? binding.slice(OPERATOR_BINDING_PREFIX.length)
    : binding;
}

/** The login name: `$USER`, else `$LOGNAME`, else the account's; `local` when none is known. */
function loginName(env: Env): string {
  const given = env.USER ?? env.LOGNAME;
  let name = given;
  if (name === undefined || name === "") {
    try {
      name = userInfo().username;
    } catch {
      name = "";
    }
  }
  // A login name is not the operator's choice: what a binding cannot hold becomes `-`.
  return (name ?? "").replace(/[^A-Za-z0-9._@-]/g, "-").slice(0, OPERATOR_NAME_MAX) || "local";
}

/**
 * The operator acting on this host when no name is given: `$WARRANT_OPERATOR` (checked: refused
 * with `operator/name-invalid`), else the login name.
 */
export function defaultOperatorBinding(env: Env = process.env): string {
  const named = env.WARRANT_OPERATOR;
  if (named !== undefined) return operatorBindingOf(named, "WARRANT_OPERATOR");
  return `${OPERATOR_BINDING_PREFIX}${loginName(env)}`;
}
