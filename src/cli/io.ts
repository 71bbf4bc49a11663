// Output and exit-code conventions shared by every command: 0 success, 1 invalid or refused, 2 usage.
import type { Problem } from "../core/result.js";

export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;

/** Thrown by command actions for a usage error (bad flags, missing file): exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Write to stdout without truncation when stdout is a pipe: callers set process.exitCode and return,
 * never call process.exit() after a large write.
 */
export function out(text: string): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function err(text: string): void {
  process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

/** One line per problem: where (file, pointer, line:column), the code, and what to change. */
export function formatProblem(file: string | undefined, p: Problem): string {
  const where = [
    file,
    p.path === "" ? "(root)" : p.path,
    p.line === undefined ? undefined : `${p.line}:${p.column ?? 0}`,
  ]
    .filter((x) => x !== undefined)
    .join(" ");
  return `${where}: ${p.code}: ${p.message}`;
}
