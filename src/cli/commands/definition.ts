// The `definition` command group (docs/spec/cli.md): validate definition files, print a definition's content
// ID, print its normalised (JCS) form.
import type { Command } from "commander";
import { type ValidDefinition, validateDefinition } from "../../core/definition/validate.js";
import { canonicalJson } from "../../core/records/canonical.js";
import type { Problem, Result } from "../../core/result.js";
import {
  EXIT_INVALID,
  EXIT_OK,
  err,
  formatProblem,
  maxBytesOf,
  out,
  printJson,
  readInputFile,
  withMaxBytes,
} from "../io.js";

/** The stable per-file shape of `definition validate --json`. */
export interface FileVerdict {
  readonly file: string;
  readonly valid: boolean;
  readonly id?: string;
  readonly errors: ReadonlyArray<{ code: string; path: string; message: string }>;
}

interface Opts {
  readonly json?: boolean;
  readonly maxBytes?: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The whole definition pipeline over a file's bytes; bytes that are not UTF-8 are malformed JSON. */
export function validateDefinitionBytes(bytes: Uint8Array): Result<ValidDefinition> {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return {
      ok: false,
      errors: [{ code: "definition/json", path: "", message: "the file is not valid UTF-8" }],
    };
  }
  return validateDefinition(text);
}

function verdict(file: string, r: Result<ValidDefinition>): FileVerdict {
  if (r.ok) return { file, valid: true, id: r.value.id, errors: [] };
  return {
    file,
    valid: false,
    errors: r.errors.map((e) => ({ code: e.code, path: e.path, message: e.message })),
  };
}

function printProblems(
  file: string,
  problems: readonly Problem[],
  write: (s: string) => void,
): void {
  for (const p of problems) write(formatProblem(file, p));
}

function validateFiles(files: readonly string[], opts: Opts): void {
  const max = maxBytesOf(opts);
  const inputs: Array<[string, Uint8Array]> = [];
  for (const file of files) inputs.push([file, readInputFile(file, max)]);
  const results = inputs.map(([file, bytes]) => [file, validateDefinitionBytes(bytes)] as const);
  if (opts.json === true) {
    printJson(results.map(([file, r]) => verdict(file, r)));
  } else {
    for (const [file, r] of results) {
      if (r.ok) out(`${file}: valid ${r.value.id}`);
      else printProblems(file, r.errors, out);
    }
  }
  process.exitCode = results.every(([, r]) => r.ok) ? EXIT_OK : EXIT_INVALID;
}

function oneDefinition(file: string, opts: Opts): ValidDefinition | undefined {
  const r = validateDefinitionBytes(readInputFile(file, maxBytesOf(opts)));
  if (r.ok) return r.value;
  if (opts.json === true) printJson(verdict(file, r));
  else printProblems(file, r.errors, err);
  process.exitCode = EXIT_INVALID;
  return undefined;
}

export function registerDefinitionCommands(program: Command): void {
  const group = program
    .command("definition")
    .description("agent definitions: validate them, compute their content IDs, normalise them");

  withMaxBytes(group.command("validate"))
    .description("validate agent definition files (strict JSON, seed schema, semantic rules)")
    .argument("<files...>", "agent definition JSON files")
    .option("--json", "print a JSON array of {file, valid, id?, errors}")
    .action((files: string[], opts: Opts) => validateFiles(files, opts));

  withMaxBytes(group.command("id"))
    .description("print the content ID (CIDv1 json-jcs, BLAKE3) of a valid definition")
    .argument("<file>", "agent definition JSON file")
    .option("--json", "print {file, valid, id, errors}")
    .action((file: string, opts: Opts) => {
      const d = oneDefinition(file, opts);
      if (d === undefined) return;
      if (opts.json === true) printJson(verdict(file, { ok: true, value: d }));
      else out(d.id);
      process.exitCode = EXIT_OK;
    });

  withMaxBytes(group.command("normalize"))
    .description("print the normalised definition as canonical JSON (RFC 8785)")
    .argument("<file>", "agent definition JSON file")
    .option("--json", "the same output (canonical JSON is JSON)")
    .action((file: string, opts: Opts) => {
      const d = oneDefinition(file, opts);
      if (d === undefined) return;
      out(canonicalJson(d.definition));
      process.exitCode = EXIT_OK;
    });
}
