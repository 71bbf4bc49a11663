// The `loop` command group: `warrant loop simulate SCRIPT.json` runs a command script through the
// decider; `warrant loop check LOOP.json` and `warrant loop check --store URI QUERY` check a loop.
import type { Command } from "commander";
import { openStore } from "../../adapters/store/open-store.js";
import { checkLoopDocument, checkStoredLoop } from "../../core/loop/check.js";
import type { LedgerRecord } from "../../core/loop/ledger-store.js";
import { parseScript } from "../../core/loop/script.js";
import { simulate } from "../../core/loop/simulate.js";
import { type LoopState, stateNameAt } from "../../core/loop/state.js";
import { parseInstant } from "../../core/loop/time.js";
import type { Problem, Result } from "../../core/result.js";
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

/** A JSON input file (a usage error when unreadable, not regular or too large; `loop/json` when not JSON). */
function readJson(file: string, what: string, maxBytes: number): Result<unknown> {
  const text = readInputText(file, maxBytes, what);
  if (text === undefined) {
    return { ok: false, errors: [{ code: "loop/json", path: "", message: "not UTF-8 text" }] };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return {
      ok: false,
      errors: [{ code: "loop/json", path: "", message: `not JSON: ${(e as Error).message}` }],
    };
  }
}

const wire = (p: Problem) => ({ code: p.code, path: p.path, message: p.message });

function parseNow(text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const ms = parseInstant(text);
  if (ms === undefined) throw new UsageError(`--now ${text} is not an RFC 3339 date-time`);
  return new Date(ms);
}

function simulateAction(file: string, opts: { json?: boolean; maxBytes?: string }): void {
  const read = readJson(file, "script", maxBytesOf(opts));
  const script = read.ok ? parseScript(read.value) : read;
  if (!script.ok) {
    if (opts.json === true) printJson({ valid: false, errors: script.errors.map(wire) });
    else out(script.errors.map((p) => formatProblem(file, p)).join("\n"));
    process.exitCode = EXIT_INVALID;
    return;
  }
  const sim = simulate(script.value);
  if (opts.json === true) {
    printJson({ outcomes: sim.outcomes, loop: sim.loop });
  } else {
    const lines = sim.outcomes.map((o, i) => {
      const head = `${String(i + 1).padStart(4)} ${o.op.padEnd(14)} ${o.result}`;
      if (o.result === "refused") {
        const counter = o.counter === undefined ? "" : ` (${o.counter})`;
        return `${head} ${o.code}${counter}: ${sim.messages[i] ?? ""}`;
      }
      return `${head} #${o.sequence}`;
    });
    const doc = sim.loop;
    if (doc === null) lines.push("loop: never opened");
    else {
      const spent = Object.entries(doc.spent)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ");
      const stop = doc.stop === undefined ? "" : ` (${doc.stop.reason})`;
      lines.push(
        `loop ${doc["query/id"]}: ${doc.state}${stop}, deadline ${doc.deadline}, ${doc.facts.length} facts; spent ${spent}`,
      );
    }
    out(lines.join("\n"));
  }
  process.exitCode = EXIT_OK;
}

function report(
  subject: { file: string } | { query: string },
  result: Result<LoopState>,
  now: Date | undefined,
  json: boolean,
): void {
  const name = "file" in subject ? subject.file : subject.query;
  if (result.ok) {
    const state = result.value;
    const facts = state.facts.length;
    const stateName =
      state.stop !== undefined
        ? "stopped"
        : now === undefined
          ? "open or deadline-passed"
          : stateNameAt(state, now.getTime());
    if (json) printJson({ ...subject, valid: true, state: stateName, facts, errors: [] });
    else out(`${name}: valid (${stateName}, ${facts} facts)`);
    process.exitCode = EXIT_OK;
  } else {
    if (json) printJson({ ...subject, valid: false, errors: result.errors.map(wire) });
    else out(result.errors.map((p) => formatProblem(name, p)).join("\n"));
    process.exitCode = EXIT_INVALID;
  }
}

interface CheckOpts {
  readonly now?: string;
  readonly store?: string;
  readonly json?: boolean;
  readonly maxBytes?: string;
}

async function checkAction(target: string, opts: CheckOpts): Promise<void> {
  const now = parseNow(opts.now);
  const json = opts.json === true;
  if (opts.store === undefined) {
    const read = readJson(target, "loop document", maxBytesOf(opts));
    report(
      { file: target },
      read.ok ? checkLoopDocument(read.value, now === undefined ? {} : { now }) : read,
      now,
      json,
    );
    return;
  }
  const store = await openStore(opts.store);
  try {
    const stored = await store.readFacts(target);
    const records = new Map<string, LedgerRecord>(
      (await store.listRecords(target)).map((r) => [r.ref, r]),
    );
    const at = now ?? new Date();
    report({ query: target }, checkStoredLoop(target, stored, records, at), at, json);
  } finally {
    await store.close();
  }
}

export function registerLoopCommands(program: Command): void {
  const loop = program
    .command("loop")
    .description("simulate and check bounded experiment loops (corpus-task-pack-loop.v1)");
  withMaxBytes(loop.command("simulate"))
    .description("run a loop command script through the loop core (no model, no sandbox)")
    .argument("<script>", "SCRIPT.json (SPEC §10)")
    .option("--json", "machine output: {outcomes, loop}")
    .action((file: string, opts: { json?: boolean; maxBytes?: string }) =>
      simulateAction(file, opts),
    );
  withMaxBytes(loop.command("check"))
    .description(
      "check a loop document (schema, contiguous facts, every fact legal in order, projection " +
        "equal to the fold), or with --store a stored loop (also its hash chain and records)",
    )
    .argument("<target>", "LOOP.json, or the QUERY id with --store")
    .option("--now <time>", "check the state against this RFC 3339 instant")
    .option(
      "--store <uri>",
      "check the loop QUERY in this store (sqlite:PATH, postgres://…, memory:)",
    )
    .option("--json", "machine output: {file | query, valid, state?, facts?, errors}")
    .action((target: string, opts: CheckOpts) => checkAction(target, opts));
  for (const c of loop.commands) c.exitOverride();
  loop.exitOverride();
}
