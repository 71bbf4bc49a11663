// `warrant eval run|report|compare|certify`: eval sets (docs/evals.md). `run` drives every cell of a
// set (task × agent × epoch) as `warrant run` drives one loop, resumably, and prints the report;
// `report` prints an eval's report (JSON, or a self-contained HTML page); `compare` pairs two evals
// (or two agents of one) by task; `certify` proves each task real with its oracle diff.
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import type { Comparison, EvalEvent, EvalReport } from "../../index.js";
import { terminalLine, terminalSafe } from "../../library/basics.js";
import type { CertifyReport } from "../../library/evals/certify.js";
import { evalReportHtml } from "../../library/evals/html.js";
import type { LoadedEvalSet } from "../../library/evals/load.js";
import { uriModels } from "../../library/uri-models.js";
import { withWarrant } from "../compose.js";
import {
  EXIT_BLOCKED,
  EXIT_INVALID,
  err,
  formatProblem,
  out,
  printJson,
  UsageError,
} from "../io.js";
import { postgresQueue } from "../job-queue.js";
import {
  SANDBOX_OPTION,
  SANDBOX_OPTION_HELP,
  sandboxChoice,
  sandboxFor,
  WEAKER_OPTION,
  WEAKER_OPTION_HELP,
} from "../sandbox-option.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";
import { flushingOnSignals } from "../telemetry-signals.js";

const EVAL_EXIT_HELP = `
Exit codes: 0 every cell scored; 1 invalid input (the set's problems, each with its JSON Pointer
and line:column); 2 usage error; 3 the set stopped at its spend limit, or cells are left unscored
(errors after their retries, loops that wait on an operator).`;

function positiveInt(text: string | undefined, name: string, fallback: number, min = 1): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min)
    throw new UsageError(`${name} takes an integer ≥ ${min}, not ${JSON.stringify(text)}`);
  return n;
}

const pct = (v: number | null) => (v === null ? "—" : `${(v * 100).toFixed(1)}%`);
const usd = (v: number | null) => (v === null ? "unknown" : `$${v.toFixed(4)}`);

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/** The report as people read it: one row per agent, then the errors, then where to go next. */
function printReport(report: EvalReport): void {
  out(
    terminalLine(
      `eval ${report.eval}  set ${report.set.name}  ${report.epochs} epoch(s)  status ${report.status}${report.limits.reached === null ? "" : ` (stopped at its ${report.limits.reached} limit)`}`,
    ),
  );
  const ks = Object.keys(report.agents[0]?.passAtK ?? {});
  const head = [
    "AGENT",
    "SCORED",
    "PASSED",
    "FAILED",
    "ERRORS",
    "PASS RATE",
    "95% CI",
    ...ks.map((k) => `PASS@${k}`),
    "TOKENS",
    "COST",
  ];
  const rows = report.agents.map((a) => [
    terminalSafe(a.agent),
    String(a.scored),
    String(a.passed),
    String(a.failed),
    String(a.errors),
    pct(a.passRate),
    `${pct(a.ci95[0])}–${pct(a.ci95[1])}`,
    ...ks.map((k) => pct(a.passAtK[k] ?? null)),
    String(a.tokens.input + a.tokens.output),
    usd(a.costUsd),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  for (const r of [head, ...rows])
    out(
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    );
  for (const q of report.tasks.filter((t) => t.quarantined))
    out(
      terminalLine(
        `quarantined: ${q.task} (not certified${q.certification === undefined ? "" : `: ${q.certification}`})`,
      ),
    );
  for (const e of report.errors)
    out(
      terminalLine(
        `error: ${e.task} × ${e.agent} epoch ${e.epoch} (${e.query}): ${e.code}: ${e.message}`,
      ),
    );
  const pending = report.cells.filter((c) => c.outcome === "pending" || c.outcome === "not-run");
  if (pending.length > 0) out(`unscored: ${pending.length} cell(s) pending or not run`);
}

/** The progress line on a terminal: done/total, passed, tokens and cost, elapsed, ETA. */
function progressLine(e: Extract<EvalEvent, { kind: "cell-end" }>, startedAt: number): string {
  const p = e.progress;
  const elapsed = Date.now() - startedAt;
  const eta = p.done === 0 ? undefined : (elapsed / p.done) * (p.total - p.done);
  return `cells ${p.done}/${p.total}  passed ${p.passed}  tokens ${p.tokens}  cost ${usd(p.costUsd)}  elapsed ${duration(elapsed)}${eta === undefined || p.done === p.total ? "" : `  eta ${duration(eta)}`}`;
}

interface RunFlags {
  readonly store?: string;
  readonly concurrency?: string;
  readonly retries?: string;
  readonly dispatch?: boolean;
  readonly json?: boolean;
  readonly sandbox?: string;
  readonly allowWeakerSandbox?: boolean;
}

async function evalRun(file: string, o: RunFlags): Promise<void> {
  const concurrency = positiveInt(o.concurrency, "--concurrency", 2);
  const retries = positiveInt(o.retries, "--retries", 2, 0);
  sandboxChoice(o.sandbox);
  const queue = o.dispatch === true ? await postgresQueue(o.store) : undefined;
  const sandbox = await sandboxFor(o.sandbox, o.allowWeakerSandbox === true);
  const options = {
    models: uriModels(process.env),
    ...(sandbox === undefined ? {} : { sandbox }),
    createStore: "inside-cwd" as const,
    ...(queue === undefined ? {} : { queue }),
  };
  await withWarrant(o.store, options, async (warrant) => {
    const loaded = await warrant.evals.load(file);
    if (!loaded.ok) {
      for (const p of loaded.errors) err(`warrant: ${formatProblem(terminalSafe(file), p)}`);
      process.exitCode = EXIT_INVALID;
      return;
    }
    const set: LoadedEvalSet = loaded.value;
    if (o.dispatch === true && set.set.approval === "auto")
      err(
        "warrant: note: with --dispatch the workers approve mutations as they were started: `warrant worker --yes` for a set whose approval is auto",
      );
    const tty = o.json !== true && process.stdout.isTTY === true;
    const startedAt = Date.now();
    const report = await flushingOnSignals(warrant, async () => {
      const handle = warrant.evals.run(set, {
        concurrency,
        retries,
        ...(o.dispatch === true ? { dispatch: true } : {}),
      });
      if (o.json !== true) out(terminalLine(`eval ${set.id}: ${set.cells.length} cells`));
      for await (const e of handle) {
        if (o.json === true) continue;
        if (e.kind === "cell-end") {
          if (tty) process.stdout.write(`\r\x1b[2K${terminalLine(progressLine(e, startedAt))}`);
          else {
            const c = e.cell;
            out(
              terminalLine(
                `${c.task} × ${c.agent} epoch ${c.epoch}: ${c.outcome}${c.stop === null ? "" : ` (${c.stop})`}  [${e.progress.done}/${e.progress.total}]`,
              ),
            );
          }
        } else if (e.kind === "cell-retry") {
          if (tty) process.stdout.write("\r\x1b[2K");
          out(
            terminalLine(
              `retry ${e.retry}: ${e.task} × ${e.agent} epoch ${e.epoch} in ${e.delayMs} ms (${e.code}: ${e.message})`,
            ),
          );
        } else if (e.kind === "limit-reached") {
          if (tty) process.stdout.write("\r\x1b[2K");
          out(`the set's ${e.limit} limit is reached: no new cell starts`);
        }
      }
      if (tty) process.stdout.write("\n");
      return handle.result;
    });
    if (o.json === true) printJson(report);
    else printReport(report);
    process.exitCode = report.status === "complete" ? 0 : EXIT_BLOCKED;
  });
}

async function evalReport(
  id: string,
  o: { store?: string; json?: boolean; html?: string },
): Promise<void> {
  await withWarrant(o.store, {}, async (warrant) => {
    const report = await warrant.evals.report(id);
    if (o.html !== undefined) writeFileSync(o.html, evalReportHtml(report));
    if (o.json === true) printJson(report);
    else {
      printReport(report);
      if (o.html !== undefined) out(terminalLine(`wrote ${o.html}`));
    }
  });
}

function printComparison(c: Comparison): void {
  out(
    terminalLine(
      `base ${c.base.eval}:${c.base.agent}  head ${c.head.eval}:${c.head.agent}  (${c.tasks.length} paired tasks)`,
    ),
  );
  const w = Math.max(4, ...c.tasks.map((t) => t.task.length));
  out(`${"TASK".padEnd(w)}  BASE    HEAD    DELTA`);
  for (const t of c.tasks)
    out(
      `${terminalSafe(t.task).padEnd(w)}  ${pct(t.base).padEnd(6)}  ${pct(t.head).padEnd(6)}  ${(t.head - t.base).toFixed(3)}`,
    );
  out(
    `delta ${c.delta.toFixed(3)}  95% CI [${c.ci95[0].toFixed(3)}, ${c.ci95[1].toFixed(3)}]  ${c.regression ? "REGRESSION" : "no regression"}`,
  );
}

async function evalCompare(
  base: string,
  head: string,
  o: { store?: string; json?: boolean; failOnRegression?: boolean },
): Promise<void> {
  await withWarrant(o.store, {}, async (warrant) => {
    const c = await warrant.evals.compare(base, head);
    if (o.json === true) printJson(c);
    else printComparison(c);
    if (c.regression && o.failOnRegression === true) {
      err(
        `warrant: eval/regression: ${c.head.eval}:${c.head.agent} is worse than ${c.base.eval}:${c.base.agent} (delta ${c.delta.toFixed(3)}, 95% CI [${c.ci95[0].toFixed(3)}, ${c.ci95[1].toFixed(3)}])`,
      );
      process.exitCode = EXIT_INVALID;
    }
  });
}

function printCertify(r: CertifyReport): void {
  const w = Math.max(4, ...r.tasks.map((t) => t.task.length));
  out(`${"TASK".padEnd(w)}  STATUS                 BASELINE  ORACLE`);
  for (const t of r.tasks)
    out(
      `${terminalSafe(t.task).padEnd(w)}  ${t.status.padEnd(21)}  ${`${t.baseline.passed}/${t.baseline.runs}`.padEnd(8)}  ${t.oracle.passed}/${t.oracle.runs}`,
    );
}

async function evalCertify(
  file: string,
  o: {
    store?: string;
    json?: boolean;
    epochs?: string;
    sandbox?: string;
    allowWeakerSandbox?: boolean;
  },
): Promise<void> {
  const epochs = positiveInt(o.epochs, "--epochs", 3);
  sandboxChoice(o.sandbox);
  const sandbox = await sandboxFor(o.sandbox, o.allowWeakerSandbox === true);
  const options = {
    ...(sandbox === undefined ? {} : { sandbox }),
    createStore: "inside-cwd" as const,
  };
  await withWarrant(o.store, options, async (warrant) => {
    const loaded = await warrant.evals.load(file);
    if (!loaded.ok) {
      for (const p of loaded.errors) err(`warrant: ${formatProblem(terminalSafe(file), p)}`);
      process.exitCode = EXIT_INVALID;
      return;
    }
    const r = await flushingOnSignals(warrant, () =>
      warrant.evals.certify(loaded.value, { epochs }),
    );
    if (o.json === true) printJson({ tasks: r.tasks });
    else printCertify(r);
    process.exitCode = r.tasks.every((t) => t.status === "certified") ? 0 : EXIT_BLOCKED;
  });
}

export function registerEvalCommands(program: Command): void {
  const group = program
    .command("eval")
    .description("eval sets: run tasks × agent configurations × epochs, report and compare them");
  group
    .command("run")
    .description(
      "run every cell (task × agent × epoch) of an eval set, each one loop; running again starts nothing that stopped and drives on what was interrupted",
    )
    .argument("<set>", "the eval-set file (warrant-eval-set.v1)")
    .addHelpText("after", EVAL_EXIT_HELP)
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option("--concurrency <n>", "cells driven at once on this machine", "2")
    .option(
      "--retries <n>",
      "how many times a cell that ends in an infrastructure error is tried again",
      "2",
    )
    .option("--dispatch", "queue the cells for `warrant worker`s (PostgreSQL) and wait for them")
    .option(SANDBOX_OPTION, SANDBOX_OPTION_HELP)
    .option(WEAKER_OPTION, WEAKER_OPTION_HELP)
    .option("--json", "print nothing but the final report (JSON, docs/evals.md)")
    .action((file: string, o: RunFlags) => evalRun(file, o));
  group
    .command("report")
    .description("print an eval's report, computed from the store")
    .argument("<eval>", "an eval's id (eval:<set name>-<16 characters>) or its set's file")
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option("--json", "the report as JSON (docs/evals.md)")
    .option("--html <file>", "also write the report as one self-contained HTML page")
    .action((id: string, o: { store?: string; json?: boolean; html?: string }) =>
      evalReport(id, o),
    );
  group
    .command("compare")
    .description(
      "compare two evals (or two agents of one) paired by task, with a seeded 95% bootstrap interval",
    )
    .argument("<base>", "EVAL or EVAL:AGENT")
    .argument("<head>", "EVAL or EVAL:AGENT")
    .addHelpText(
      "after",
      "\nA regression is a 95% interval of the mean difference (head − base) wholly below zero.\nExit codes: 0; 1 with --fail-on-regression when head regressed (eval/regression), or an unknown eval or agent.",
    )
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option("--json", "{base, head, tasks: [{task, base, head}], delta, ci95, regression}")
    .option("--fail-on-regression", "exit 1 (eval/regression) when head regressed: a CI gate")
    .action((base: string, head: string, o) => evalCompare(base, head, o));
  group
    .command("certify")
    .description(
      "run each task's verifier on the untouched baseline (it must fail) and with its oracle diff applied (it must pass), K times each; no model is called",
    )
    .argument("<set>", "the eval-set file")
    .addHelpText(
      "after",
      "\nStatuses: certified, flaky (mixed results), broken-oracle (the oracle does not pass), passes-without-change (the baseline passes).\nExit codes: 0 every task with an oracle certified; 1 invalid input; 3 otherwise.",
    )
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option("--epochs <k>", "runs of each side per task", "3")
    .option(SANDBOX_OPTION, SANDBOX_OPTION_HELP)
    .option(WEAKER_OPTION, WEAKER_OPTION_HELP)
    .option("--json", "{tasks: [{task, status, baseline: {passed, runs}, oracle: {passed, runs}}]}")
    .action((file: string, o) => evalCertify(file, o));
}
