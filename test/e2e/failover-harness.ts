// Workers as separate `warrant worker --json` processes (the built CLI) over one PostgreSQL store,
// for the failover tests: start, signal and read them; dispatch loops; read what the store holds.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import pg from "pg";
import { expect } from "vitest";
import { cliPath, runCli } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { demoPack, scripted } from "./cli-run.js";

export const MODELS = ["implementer", "reviewer", "summarizer"].flatMap((r) => [
  "--model",
  scripted(r),
]);

/** One line of `worker --json`. */
export interface WorkerLine {
  readonly at: string;
  readonly event: string;
  readonly query: string | null;
  readonly [key: string]: unknown;
}

export class WorkerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: WorkerLine[] = [];
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #partial = "";

  constructor(
    name: string,
    store: string,
    opts: {
      cwd: string;
      env: NodeJS.ProcessEnv;
      concurrency?: number;
      prefix?: string[];
      /** Approve mutations with --yes (default); false: wait for `warrant approve`. */
      yes?: boolean;
      shutdownTimeoutS?: number;
    },
  ) {
    this.name = name;
    const argv = [
      cliPath,
      "worker",
      "--store",
      store,
      ...(opts.yes === false ? [] : ["--yes"]),
      "--json",
      "--concurrency",
      String(opts.concurrency ?? 2),
      "--shutdown-timeout",
      String(opts.shutdownTimeoutS ?? 30),
    ];
    const [cmd, ...pre] = opts.prefix ?? [];
    this.child = spawn(
      cmd ?? process.execPath,
      cmd === undefined ? argv : [...pre, process.execPath, ...argv],
      {
        cwd: opts.cwd,
        env: { ...process.env, NO_COLOR: "1", ...opts.env },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    this.child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      this.#partial += d;
      const parts = this.#partial.split("\n");
      this.#partial = parts.pop() ?? "";
      for (const p of parts) if (p.trim() !== "") this.lines.push(JSON.parse(p) as WorkerLine);
    });
    this.child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      this.stderr += d;
    });
    this.exited = new Promise((resolve) =>
      this.child.on("close", (code, signal) => resolve({ code, signal })),
    );
  }

  /** Loops whose drive started here and has not ended (nor been released or lost). */
  inProgress(): string[] {
    return [...this.#drives().keys()];
  }

  /** Loops in progress here whose drive has written a fact since it started: well into a drive. */
  midDrive(): string[] {
    return [...this.#drives()].filter(([, wrote]) => wrote).map(([query]) => query);
  }

  /** The drives in progress, each with whether it wrote a fact yet. */
  #drives(): Map<string, boolean> {
    const open = new Map<string, boolean>();
    for (const l of this.lines) {
      if (l.query === null) continue;
      if (l.event === "start") open.set(l.query, false);
      if (l.event === "drive" && l.kind === "fact" && open.has(l.query)) open.set(l.query, true);
      if (["end", "requeued", "lease-lost", "failed", "busy"].includes(l.event))
        open.delete(l.query);
    }
    return open;
  }

  /** `start` events: which loop, when. */
  starts(): { query: string; at: number }[] {
    return this.lines
      .filter((l) => l.event === "start" && l.query !== null)
      .map((l) => ({ query: l.query as string, at: Date.parse(l.at) }));
  }

  signal(sig: NodeJS.Signals): void {
    this.child.kill(sig);
  }

  /** What it said, for a failing assertion. */
  transcript(): string {
    return `${this.name}:\n${this.lines.map((l) => JSON.stringify(l)).join("\n")}\n${this.stderr}`;
  }
}

/** Polls `cond` every 100 ms until it holds; fails with `what` past `ms`. */
export async function until(what: string, ms: number, cond: () => boolean | Promise<boolean>) {
  await waitFor(cond, { what, timeoutMs: ms, intervalMs: 100 });
}

/** Whether the store's worker registry lists a worker of process `pid`. */
export async function registered(url: string, schema: string, pid: number): Promise<boolean> {
  const rows = await sql<{ pid: number }>(
    url,
    `SELECT pid FROM "${schema}".warrant_workers WHERE pid = $1`,
    [pid],
  );
  return rows.length > 0;
}

/** Opens and queues `count` loops of the demo pack in one process; their queries. */
export async function dispatch(store: string, cwd: string, count: number): Promise<string[]> {
  const r = await runCli(
    [
      "run",
      demoPack,
      ...MODELS,
      "--store",
      store,
      "--dispatch",
      "--count",
      String(count),
      "--json",
    ],
    { cwd, timeoutMs: 120_000 },
  );
  expect(r.code, r.stderr).toBe(0);
  const parsed = JSON.parse(r.stdout) as { query: string } | { query: string }[];
  return (Array.isArray(parsed) ? parsed : [parsed]).map((x) => x.query);
}

/** SQL on the store's server. */
export async function sql<R extends pg.QueryResultRow>(
  url: string,
  text: string,
  values?: unknown[],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Each loop's stop reason (undefined while not stopped), read as `loops --json` prints it. */
export async function loopStates(
  store: string,
  cwd: string,
): Promise<Map<string, { status: string; stop?: string }>> {
  const r = await runCli(["loops", "--json", "--store", store], { cwd });
  if (r.code !== 0) return new Map();
  const rows = JSON.parse(r.stdout) as {
    query: string;
    status: string;
    stop?: { reason: string };
  }[];
  return new Map(
    rows.map((x) => [
      x.query,
      { status: x.status, ...(x.stop === undefined ? {} : { stop: x.stop.reason }) },
    ]),
  );
}

/**
 * For a failure's message: each loop's facts (sequence and kind) and the output of each step that
 * failed in its runs, as `export --bundle` holds them.
 */
export async function loopStory(store: string, cwd: string, query: string): Promise<string> {
  const r = await runCli(["export", query, "--bundle", "--store", store], { cwd });
  if (r.code !== 0) return `${query}: export failed: ${r.stderr}`;
  const bundle = JSON.parse(r.stdout) as {
    facts: { sequence: number; kind: string }[];
    records: { kind: string; body: string }[];
  };
  const facts = bundle.facts.map((f) => `${f.sequence} ${f.kind}`).join(", ");
  const failed = bundle.records
    .filter((x) => x.kind === "runReport")
    .flatMap((x) => {
      const report = JSON.parse(x.body) as {
        steps: { "step/id": string; status: string; "exit/code"?: number; excerpt?: string }[];
        checks: { name: string; passed: boolean; detail?: string }[];
      };
      return [
        ...report.steps
          .filter((st) => st.status === "failed")
          .map(
            (st) =>
              `step ${st["step/id"]} (exit ${String(st["exit/code"])}): ${(st.excerpt ?? "").slice(-1500)}`,
          ),
        ...report.checks
          .filter((c) => !c.passed)
          .map((c) => `check ${c.name}: ${(c.detail ?? "").slice(-1500)}`),
      ];
    });
  return `${query}: facts ${facts}\n${failed.join("\n")}`;
}

/**
 * What the ledger says was charged and run, per loop: every passage charged once (a charge is a
 * `passage-charged` fact; its passage ref never twice), every step started once, every admitted
 * run concluded once.
 */
export async function assertNothingTwice(url: string, schema: string, queries: readonly string[]) {
  const facts = await sql<{ query: string; fact: string }>(
    url,
    `SELECT query, fact FROM "${schema}".warrant_facts ORDER BY query, sequence`,
  );
  const steps = await sql<{ query: string; body: string }>(
    url,
    `SELECT query, body FROM "${schema}".warrant_records WHERE kind = 'stepStarted'`,
  );
  for (const q of queries) {
    const kinds = facts
      .filter((f) => f.query === q)
      .map((f) => JSON.parse(f.fact) as { step: { kind: string; "passage/ref"?: string } });
    const charged = kinds.filter((k) => k.step.kind === "passage-charged");
    const refs = charged.map((k) => k.step["passage/ref"]);
    expect(new Set(refs).size, `${q}: a passage charged twice`).toBe(refs.length);
    const admitted = kinds.filter((k) => k.step.kind === "run-admitted").length;
    const concluded = kinds.filter((k) => k.step.kind === "concluded").length;
    expect(concluded, `${q}: runs admitted vs concluded`).toBe(admitted);
    const started = steps
      .filter((s) => s.query === q)
      .map((s) => {
        const b = JSON.parse(s.body) as { "proposal/ref": string; "step/id": string };
        return `${b["proposal/ref"]} ${b["step/id"]}`;
      });
    expect(new Set(started).size, `${q}: a step started twice`).toBe(started.length);
  }
}

export interface TakeoverTimes {
  /** From the SIGKILL to the other worker's drive start. */
  readonly takeoverMs: number;
  /** From the SIGKILL to the loop's stop under the other worker. */
  readonly stoppedMs: number;
}

/**
 * One trial: two workers (one slot each) and one loop; the worker driving it is SIGKILLed once its
 * drive wrote a fact; the other takes the loop over and drives it to its stop, with no operator. The
 * dead worker's environment and lease row are gone afterwards. `prefixes` run each worker under a
 * command (`ip netns exec NS`), `storeUrls` are the server as each worker reaches it.
 */
export async function takeoverTrial(
  url: string,
  schema: string,
  ttlMs: number,
  mkdir: (label: string) => string,
  registry: WorkerProcess[],
  opts: { storeUrls?: [string, string]; prefixes?: [string[], string[]] } = {},
): Promise<TakeoverTimes> {
  const cwd = mkdir("trial-cwd");
  const envDir = mkdir("trial-env");
  const env = { WARRANT_LEASE_TTL_MS: String(ttlMs), TMPDIR: envDir };
  const [query] = await dispatch(`${url}?schema=${schema}`, cwd, 1);
  const pair = (["a", "b"] as const).map(
    (name, i) =>
      new WorkerProcess(name, `${opts.storeUrls?.[i] ?? url}?schema=${schema}`, {
        cwd,
        env,
        concurrency: 1,
        ...(opts.prefixes === undefined ? {} : { prefix: opts.prefixes[i] as string[] }),
      }),
  ) as [WorkerProcess, WorkerProcess];
  registry.push(...pair);
  await until("a drive to start", 60_000, () => pair.some((w) => w.inProgress().length > 0));
  const victim = pair[0].inProgress().length > 0 ? pair[0] : pair[1];
  const survivor = victim === pair[0] ? pair[1] : pair[0];
  await until(`${victim.name}'s drive to write`, 60_000, () =>
    victim.midDrive().includes(query as string),
  );
  const killedAt = Date.now();
  victim.signal("SIGKILL");
  await until(`${query} to stop under the other worker`, 120_000, () =>
    survivor.lines.some((l) => l.event === "end" && l.query === query),
  );
  const started = survivor.starts().find((s) => s.query === query && s.at > killedAt);
  const ended = survivor.lines.find((l) => l.event === "end" && l.query === query);
  expect(started, survivor.transcript()).toBeDefined();
  expect(ended?.status).toBe("stopped");
  survivor.signal("SIGTERM");
  expect(await survivor.exited).toEqual({ code: 0, signal: null });
  expect(readdirSync(envDir).filter((n) => n.startsWith("warrant-env-"))).toEqual([]);
  expect(await sql(url, `SELECT query FROM "${schema}".warrant_leases`)).toEqual([]);
  return {
    takeoverMs: (started?.at ?? 0) - killedAt,
    stoppedMs: Date.parse(ended?.at ?? "") - killedAt,
  };
}
