// The `turn` command group: `warrant turn check` validates one model turn against a tool list.
import type { Command } from "commander";
import type { Problem, Result, Role, ToolRegistry, ToolSpec, ValidTurn } from "../../index.js";
import { createToolRegistry, ROLES, validateTurn } from "../../library/pure.js";
import {
  EXIT_INVALID,
  EXIT_OK,
  formatProblem,
  maxBytesOf,
  out,
  printJson,
  readInputText,
  UsageError,
  withMaxBytes,
} from "../io.js";

interface CheckOptions {
  readonly tools: string;
  readonly role?: string;
  readonly json?: boolean;
  readonly maxBytes?: string;
}

function readText(file: string, what: string, maxBytes: number): string {
  const text = readInputText(file, maxBytes, what);
  if (text === undefined) throw new UsageError(`${what} ${file} is not UTF-8 text`);
  return text;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** TOOLS.json: `[{name, description, inputSchema, effect?}]`; a malformed list is a usage error. */
function loadTools(file: string, maxBytes: number): ToolRegistry {
  let value: unknown;
  try {
    value = JSON.parse(readText(file, "tools file", maxBytes));
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`tools file ${file} is not JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(value))
    throw new UsageError(
      `tools file ${file} must hold a JSON array of {name, description, inputSchema}`,
    );
  const specs: ToolSpec[] = value.map((t, i) => {
    if (
      !isRecord(t) ||
      typeof t.name !== "string" ||
      typeof t.description !== "string" ||
      !isRecord(t.inputSchema)
    ) {
      throw new UsageError(`tools file ${file}: /${i} must be {name, description, inputSchema}`);
    }
    const effect = t.effect === undefined ? "observation" : t.effect;
    return {
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      effect: effect as ToolSpec["effect"],
    };
  });
  const r = createToolRegistry(specs);
  if (!r.ok)
    throw new UsageError(
      `tools file ${file}:\n${r.errors.map((p) => formatProblem(undefined, p)).join("\n")}`,
    );
  return r.value;
}

function parseRole(role: string | undefined): Role | undefined {
  if (role === undefined) return undefined;
  if (!(ROLES as readonly string[]).includes(role))
    throw new UsageError(`unknown role ${role} (one of: ${ROLES.join(", ")})`);
  return role as Role;
}

function wire(p: Problem): { code: string; path: string; message: string } {
  return { code: p.code, path: p.path, message: p.message };
}

function check(turnFile: string, opts: CheckOptions): void {
  const role = parseRole(opts.role);
  const max = maxBytesOf(opts);
  const registry = loadTools(opts.tools, max);
  const text = readInputText(turnFile, max, "turn file");
  const r: Result<ValidTurn> =
    text === undefined
      ? { ok: false, errors: [{ code: "turn/json", path: "", message: "not UTF-8 text" }] }
      : validateTurn(text, role === undefined ? { registry } : { registry, role });
  if (opts.json === true) {
    printJson({ valid: r.ok, errors: r.ok ? [] : r.errors.map(wire) });
  } else if (r.ok) {
    const what =
      r.value.message === undefined
        ? `${r.value.calls.length} tool call(s)`
        : `a ${r.value.message.type} message`;
    out(`${turnFile}: valid (${what})`);
  } else {
    out(r.errors.map((p) => formatProblem(turnFile, p)).join("\n"));
  }
  process.exitCode = r.ok ? EXIT_OK : EXIT_INVALID;
}

export function registerTurnCommands(program: Command): void {
  const turn = program
    .command("turn")
    .description("model turns: check one against its tools and role");
  withMaxBytes(turn.command("check"))
    .description("validate a model turn against the tools of a passage (docs/spec/turns.md)")
    .argument("<turn>", "the turn, a JSON file (model-turn.schema.json)")
    .requiredOption("--tools <file>", "JSON array of {name, description, inputSchema}")
    .option("--role <role>", `the passage's role (${ROLES.join(", ")})`)
    .option("--json", "machine output: {valid, errors}")
    .action((turnFile: string, opts: CheckOptions) => check(turnFile, opts));
}
