// The library's one error class (WarrantError, from the core) and its codes: namespaced, stable,
// either named by a contract (a refusal a record or a loop document can carry) or the host's own.
// The namespaces, and every code with its meaning, exit status and HTTP status, are the registry's
// (src/core/codes.ts; docs/errors.md is generated from it).
import {
  type CODE_NAMESPACES,
  type CodeNamespace,
  type CodeNamespaceKind,
  codeNamespaces,
} from "../core/codes.js";
import { WarrantError } from "../core/result.js";

export type { Code, CodeExit, CodeSpec, HttpCode } from "../core/codes.js";
export { CODES, codeSpec, exitCodeOf, httpStatus, httpStatusOf, isCode } from "../core/codes.js";

type NamespacesOf<K extends CodeNamespaceKind> = {
  [N in CodeNamespace]: (typeof CODE_NAMESPACES)[N]["kind"] extends K ? N : never;
}[CodeNamespace];

function namespacesOf<K extends CodeNamespaceKind>(kind: K): readonly NamespacesOf<K>[] {
  return codeNamespaces(kind) as readonly NamespacesOf<K>[];
}

/** Namespaces of codes that the contracts name (they may appear in records and loop documents). */
export const CONTRACT_CODE_NAMESPACES = namespacesOf("contract");

/**
 * Namespaces of the host's own codes: its stores, models, tools (agent skills and memory among
 * them), sandboxes, runtime, operators, job queue and console.
 */
export const HOST_CODE_NAMESPACES = namespacesOf("host");

export type ContractErrorCode = `${(typeof CONTRACT_CODE_NAMESPACES)[number]}/${string}`;
export type HostErrorCode = `${(typeof HOST_CODE_NAMESPACES)[number]}/${string}`;
export type WarrantErrorCode = ContractErrorCode | HostErrorCode;

const NAMESPACES: ReadonlySet<string> = new Set(codeNamespaces());

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
