// Crash safety (docs/spec/runs.md): `warrant demo` killed with SIGKILL at random moments, then `warrant
// resume`: the loop ends stopped, its stored ledger checks, nothing was charged twice, no step ran
// twice, a run interrupted mid-step concluded `unknown`, and no environment directory is left behind.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import type { RunReportBody, StepStartedBody } from "../../src/runtime/records.js";
import { cliPath, runCli } from "../helpers/cli.js";

const TRIALS = 20;
const CONCURRENCY = 3;
const SEED = Number(process.env.WARRANT_CRASH_SEED ?? 20261130);

/** A small deterministic generator: the kill moments are reproducible from the seed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Starts the demo and SIGKILLs it `ms` after it printed fact `fact` (the demo makes 15): moments
 * spread over the whole loop whatever the machine's speed.
 */
function killedDemo(cwd: string, tmp: string, fact: number, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, NO_COLOR: "1", WARRANT_LEASE_TTL_MS: "1500", TMPDIR: tmp };
    const child = spawn(process.execPath, [cliPath, "demo"], { cwd, env });
    let printed = "";
    let timer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      printed += d;
      if (timer === undefined && printed.includes(`fact ${fact} `)) {
        timer = setTimeout(() => child.kill("SIGKILL"), ms);
      }
    });
    child.on("error", reject);
    child.on("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

async function stoppedBeforeResume(cwd: string, query: string): Promise<boolean> {
  const store = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
  try {
    const doc = await new LoopLedger(store).document(query, new Date());
    return doc?.state === "stopped";
  } finally {
    await store.close();
  }
}

/** The loop the killed demo opened, read from its store (undefined when it died before). */
async function openedLoop(cwd: string): Promise<string | undefined> {
  if (!existsSync(path.join(cwd, ".warrant/ledger.db"))) return undefined;
  const store = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
  try {
    return (await store.listLoops())[0]?.query;
  } finally {
    await store.close();
  }
}

interface Trial {
  readonly killAfterFact: number;
  readonly killAfterMs: number;
  /** The demo died before its loop stopped. */
  readonly interrupted: boolean;
  readonly query?: string;
  readonly stop?: string;
  readonly problems: readonly string[];
  /** `warrant-env-*` directories left in the trial's own temp folder after its resume. */
  readonly leftovers: readonly string[];
}

async function trial(killAfterFact: number, killAfterMs: number): Promise<Trial> {
  const cwd = mkdtempSync(path.join(tmpdir(), "warrant-crash-"));
  dirs.push(cwd);
  // The trial's own temp folder (TMPDIR of the demo and the resume): every environment it makes is
  // there, so what is left is exactly what this trial leaked. Contained commands may run as
  // another uid: they must reach their environment through it.
  const tmp = path.join(cwd, "tmp");
  mkdirSync(tmp);
  chmodSync(cwd, 0o711);
  chmodSync(tmp, 0o711);
  const envLeftovers = () => readdirSync(tmp).filter((n) => n.startsWith("warrant-env-"));
  await killedDemo(cwd, tmp, killAfterFact, killAfterMs);
  const query = await openedLoop(cwd);
  if (query === undefined) {
    return {
      killAfterFact,
      killAfterMs,
      interrupted: false,
      problems: ["no loop opened"],
      leftovers: envLeftovers(),
    };
  }
  const problems: string[] = [];
  const interrupted = !(await stoppedBeforeResume(cwd, query));
  const storeArgs = ["--store", "sqlite:.warrant/ledger.db"];
  const resumed = await runCli(["resume", query, "--yes", ...storeArgs], {
    cwd,
    timeoutMs: 60_000,
    env: { WARRANT_LEASE_TTL_MS: "1500", TMPDIR: tmp },
  });
  if (!/loop stopped|is stopped/.test(resumed.stdout))
    problems.push(`resume did not stop the loop: ${resumed.stdout}${resumed.stderr}`);
  const check = await runCli(["loop", "check", ...storeArgs, query], { cwd });
  if (check.code !== 0) problems.push(`loop check failed: ${check.stdout}${check.stderr}`);

  const store = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
  let stop: string | undefined;
  try {
    const steps = (await store.readFacts(query)).map((f) => f.fact.step);
    const records = await store.listRecords(query);
    const passages = steps.filter((s) => s.kind === "passage-charged");
    const byRole = (role: string) => passages.filter((p) => p.role === role).length;
    // The script has 3 implementer, 3 reviewer and 1 summarizer answers: more charges = a repeat.
    if (byRole("implementer") > 3 || byRole("reviewer") > 3 || byRole("summarizer") > 1) {
      problems.push(`passages charged twice: ${passages.map((p) => p.role).join(",")}`);
    }
    if (steps.filter((s) => s.kind === "cycle-opened").length > 3)
      problems.push("a cycle charged twice");
    const started = records
      .filter((r) => r.kind === "stepStarted")
      .map((r) => r.body as StepStartedBody)
      .map((b) => `${b["proposal/ref"]} ${b["step/id"]}`);
    if (new Set(started).size !== started.length)
      problems.push(`a step started twice: ${started.join("; ")}`);
    for (const r of records.filter((x) => x.kind === "runReport")) {
      const report = r.body as RunReportBody;
      const interrupted = report.steps.some((s) => s.status === "interrupted");
      if (interrupted !== (report.outcome === "unknown")) {
        problems.push(
          `run ${report["proposal/ref"]}: outcome ${report.outcome}, interrupted ${interrupted}`,
        );
      }
      if (!report["environment/destroyed"])
        problems.push(`run ${report["proposal/ref"]}: environment not destroyed`);
    }
    const last = steps.at(-1);
    const concluded = steps.filter((s) => s.kind === "concluded");
    stop = concluded.at(-1)?.kind === "concluded" ? concluded.at(-1)?.outcome : undefined;
    if (last?.kind !== "concluded")
      problems.push(`the ledger does not end with a conclusion: ${last?.kind}`);
  } finally {
    await store.close();
  }
  return {
    killAfterFact,
    killAfterMs,
    interrupted,
    query,
    ...(stop === undefined ? {} : { stop }),
    problems,
    leftovers: envLeftovers(),
  };
}

describe("crash safety: SIGKILL at random moments, then resume", () => {
  it(`${TRIALS} trials end stopped, checked, with no repeated charge or step`, {
    timeout: 240_000,
  }, async () => {
    const next = random(SEED);
    const moments = Array.from({ length: TRIALS }, () => ({
      fact: 1 + Math.floor(next() * 14),
      ms: Math.round(next() * 150),
    }));
    const results: Trial[] = [];
    let i = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (i < moments.length) {
          const m = moments[i++] as { fact: number; ms: number };
          results.push(await trial(m.fact, m.ms));
        }
      }),
    );
    const failures = results.filter((r) => r.problems.length > 0);
    expect(failures, JSON.stringify(failures, null, 2)).toEqual([]);
    // Most kills landed before the loop stopped (the rest found it already stopped).
    expect(results.filter((r) => r.interrupted).length).toBeGreaterThan(TRIALS / 2);
    // A resumed loop removes every environment of its runs, the one a kill hit between creating
    // it and journaling it included: no trial leaves a single `warrant-env-*` directory.
    const leftovers = results.flatMap((r) =>
      r.leftovers.map((n) => `fact ${r.killAfterFact} +${r.killAfterMs}ms: ${n}`),
    );
    expect(leftovers).toEqual([]);
  });
});
