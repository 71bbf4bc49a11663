// The `definition` command group (docs/spec/cli.md): validate definition files, print a definition's
// content ID, print its normalised (JCS) form, show it as Warrant would run it.
import type { Command } from "commander";
import type { AgentReport, Problem, Result, ValidDefinition } from "../../index.js";
import { canonicalJson, validateDefinition } from "../../library/pure.js";
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

interface ShowOpts extends Opts {
  readonly skills?: string[];
  readonly namespace?: string;
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

function agentLines(a: AgentReport, indent: string, write: (s: string) => void): void {
  write(`${indent}${a.name}  ${a.id}`);
  const i = `${indent}  `;
  for (const m of a.models) {
    const use =
      a.override !== undefined && m.index === 0 ? "overridden" : m.used ? "used" : "unused";
    const sent =
      m.sent === undefined || Object.keys(m.sent).length === 0
        ? ""
        : ` sends ${JSON.stringify(m.sent)}`;
    write(
      `${i}model ${m.index}: ${m.provider} ${m.model} → ${m.uri ?? "(cannot be made)"} (${use})${sent}`,
    );
    for (const u of m.unhonoured ?? []) write(`${i}  not sent: ${u.setting} (${u.reason})`);
  }
  if (a.override !== undefined) write(`${i}override: ${a.override}`);
  for (const s of a.skills)
    write(`${i}skill ${s.name}: ${s.cid} ${s.verified ? "verified" : "NOT VERIFIED"}`);
  for (const m of a.memory) {
    if (!m.writable)
      write(
        `${i}memory ${m.path}: read-only ${m.cid ?? ""} ${m.verified === true ? "verified" : "NOT VERIFIED"}`,
      );
    else
      write(
        `${i}memory ${m.path}: writable, ${m.scope}${m.namespace === "" ? "" : ` ${m.namespace}`}`,
      );
  }
  for (const t of a.tools) write(`${i}tool ${t.name} → ${t.boundTo ?? "(unbound)"}`);
  for (const m of a.middleware) {
    const { name, ...config } = m;
    write(`${i}middleware ${name} ${JSON.stringify(config)}`);
  }
  if (a.permissions.length > 0) write(`${i}permissions: ${a.permissions.join(", ")}`);
  if (a.guardrails.length > 0) write(`${i}guardrails: ${a.guardrails.join(", ")}`);
  for (const sub of a.subAgents) {
    write(`${i}sub-agent agent.${sub.name}:`);
    agentLines(sub, `${i}  `, write);
  }
}

async function showDefinition(file: string, opts: ShowOpts): Promise<void> {
  const d = oneDefinition(file, opts);
  if (d === undefined) return;
  // Loaded here only: validate, id and normalize never load the runtime or an adapter.
  const { describeDefinition } = await import("../../library/definition-show.js");
  const shown = await describeDefinition(d, file, {
    ...(opts.skills === undefined ? {} : { skills: opts.skills }),
    ...(opts.namespace === undefined ? {} : { namespace: opts.namespace }),
  });
  if (opts.json === true) printJson(shown);
  else {
    agentLines(shown.agent, "", out);
    for (const w of shown.warnings) out(`warning: ${formatProblem(undefined, w)}`);
    for (const p of shown.problems) out(formatProblem(file, p));
  }
  process.exitCode = shown.problems.length === 0 ? EXIT_OK : EXIT_INVALID;
}

export function registerDefinitionCommands(program: Command): void {
  const group = program
    .command("definition")
    .description(
      "agent definitions: validate them, compute their content IDs, normalise them, show how they run",
    );

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

  withMaxBytes(group.command("show"))
    .description(
      "show a definition as Warrant runs it: models and settings per provider, skills and memory with their verified CIDs, tools, middleware, sub-agents",
    )
    .argument("<file>", "agent definition JSON file")
    .option("--skills <dir...>", "more folders holding its skills (<dir>/<name>/)")
    .option("--namespace <name>", "whose memory namespace-scoped memory is")
    .option("--json", "print {file, id, agent, problems, warnings}")
    .action((file: string, opts: ShowOpts) => showDefinition(file, opts));

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
