// The console's operators: a JSON file mapping each operator's name to the bearer token that person
// uses (`warrant serve --operators FILE`). A name without a token (null or ""), or a file that does
// not exist yet (then the default operator is its one name), gets a fresh random token, handed back
// to be shown once; `save()` writes the file back with mode 0600 (called once the console is up, so
// that a token is never kept that was not shown). A token never reaches an error message.
import { randomBytes } from "node:crypto";
import { chmodSync, lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { WarrantError } from "../core/result.js";
import { terminalLine } from "../core/text/terminal-text.js";
import { operatorBindingOf } from "./operators.js";

/** A console token: 16 to 256 of A-Z a-z 0-9 . _ ~ - (what a URL fragment carries as it is). */
export const CONSOLE_TOKEN = /^[A-Za-z0-9._~-]{16,256}$/;

/** The largest operators file read: 1 MiB. */
const MAX_FILE_BYTES = 1024 * 1024;

export interface ConsoleOperator {
  /** The operator's name, as the file gives it. */
  readonly name: string;
  /** `node-operator-binding:NAME`: what the ledger records for the acts of this token. */
  readonly binding: string;
  readonly token: string;
  /** The token was made now (and written to the file): show it once. */
  readonly generated: boolean;
}

export interface OperatorTokens {
  readonly file: string;
  readonly operators: readonly ConsoleOperator[];
  /** The file (as it was found) may be read by other users than its owner. */
  readonly readableByOthers: boolean;
  /**
   * Writes every token, those made now with them, to the file (mode 0600, through a temporary file
   * renamed over it); does nothing when no token was made. `operator/file-unwritable` when it
   * cannot.
   */
  save(): void;
}

export interface OperatorTokenOptions {
  /** The name a new file starts with: `node-operator-binding:NAME` or NAME. */
  readonly defaultOperator: string;
  /** Makes a token (default: 24 random bytes, base64url). */
  readonly newToken?: () => string;
}

const fileError = (file: string, message: string) =>
  new WarrantError("operator/file-invalid", `${terminalLine(file)}: ${message}`, { path: file });

function readMap(file: string): Record<string, unknown> | undefined {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw fileError(file, `cannot be read (${(e as NodeJS.ErrnoException).code ?? "error"})`);
  }
  if (!stat.isFile()) throw fileError(file, "is not a regular file");
  if (stat.size > MAX_FILE_BYTES) throw fileError(file, `is over ${MAX_FILE_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    throw fileError(file, 'is not JSON: it maps each operator\'s name to a token, {"alice": null}');
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw fileError(file, "is a JSON object mapping each operator's name to a token or null");
  return value as Record<string, unknown>;
}

/** Writes `map` to `file` with mode 0600, through a temporary file renamed over it. */
function writeMap(file: string, map: Record<string, string>): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(temp, `${JSON.stringify(map, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    chmodSync(temp, 0o600);
    renameSync(temp, file);
  } catch (e) {
    rmSync(temp, { force: true });
    throw new WarrantError(
      "operator/file-unwritable",
      `${terminalLine(file)}: the new tokens cannot be written (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
      { path: file },
    );
  }
}

/**
 * The operators of `file` with their tokens, tokens made for the names that have none (and, when
 * the file does not exist, for the default operator). Refused: `operator/file-invalid` (not a JSON
 * object, an empty map, a token that is not a string of 16 to 256 of A-Z a-z 0-9 . _ ~ -, a token
 * given to two names), `operator/name-invalid` (a name that is not one), `operator/file-unwritable`.
 */
export function loadOperatorTokens(file: string, o: OperatorTokenOptions): OperatorTokens {
  const newToken = o.newToken ?? (() => randomBytes(24).toString("base64url"));
  const found = readMap(file);
  const readableByOthers = found !== undefined && (lstatSync(file).mode & 0o077) !== 0;
  const given =
    found ?? ({ [o.defaultOperator.replace(/^node-operator-binding:/, "")]: null } as const);
  const names = Object.keys(given);
  if (names.length === 0)
    throw fileError(file, 'names no operator: give each person a name, {"alice": null}');
  const operators: ConsoleOperator[] = [];
  const seen = new Set<string>();
  for (const name of names) {
    const binding = operatorBindingOf(name, `${file}: the operator`);
    const value = (given as Record<string, unknown>)[name];
    const none = value === null || value === "";
    if (!none && (typeof value !== "string" || !CONSOLE_TOKEN.test(value)))
      throw fileError(
        file,
        `the token of ${terminalLine(JSON.stringify(name))} is not 16 to 256 of A-Z a-z 0-9 . _ ~ - (null makes one)`,
      );
    const token = none ? newToken() : (value as string);
    if (seen.has(token))
      throw fileError(
        file,
        `${terminalLine(JSON.stringify(name))} has the token of another operator: each person has their own`,
      );
    seen.add(token);
    operators.push({ name, binding, token, generated: none });
  }
  const made = operators.some((x) => x.generated);
  return {
    file,
    operators,
    readableByOthers,
    save: () => {
      if (made) writeMap(file, Object.fromEntries(operators.map((x) => [x.name, x.token])));
    },
  };
}
