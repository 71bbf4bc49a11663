// The library's one error class (WarrantError, from the core) and its codes: namespaced, stable,
// either named by a contract (a refusal a record or a loop document can carry) or the host's own.
import { WarrantError } from "../core/result.js";

/** Namespaces of codes that the contracts name (they may appear in records and loop documents). */
export const CONTRACT_CODE_NAMESPACES = [
  "definition",
  "cid",
  "turn",
  "loop",
  "taskpack",
  "plan",
  "passage",
  "hil",
  "run",
  "verifier",
  "environment",
  "workbench",
  "rollback",
  "interface",
] as const;

/**
 * Namespaces of the host's own codes: its stores, models, tools (agent skills and memory among
 * them), sandboxes, runtime and operators.
 */
export const HOST_CODE_NAMESPACES = [
  "store",
  "model",
  "tool",
  "skill",
  "memory",
  "sandbox",
  "runtime",
  "records",
  "id",
  "diff",
  "apply",
  "operator",
  "internal",
] as const;

export type ContractErrorCode = `${(typeof CONTRACT_CODE_NAMESPACES)[number]}/${string}`;
export type HostErrorCode = `${(typeof HOST_CODE_NAMESPACES)[number]}/${string}`;
export type WarrantErrorCode = ContractErrorCode | HostErrorCode;

const NAMESPACES: ReadonlySet<string> = new Set([
  ...CONTRACT_CODE_NAMESPACES,
  ...HOST_CODE_NAMESPACES,
]);

/** The code is one of ours: a known namespace, a slash, a name. */
export function isWarrantErrorCode(code: unknown): code is WarrantErrorCode {
  if (typeof code !== "string") return false;
  const slash = code.indexOf("/");
  return slash > 0 && slash < code.length - 1 && NAMESPACES.has(code.slice(0, slash));
}

/** True for an error this library threw, its `code` typed. */
export function isWarrantError(
  error: unknown,
): error is WarrantError & { readonly code: WarrantErrorCode } {
  return error instanceof WarrantError && isWarrantErrorCode(error.code);
}
