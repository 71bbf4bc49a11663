// `warrant run`, `resume` and `worker` with a task pack whose implementer declares the fixture MCP
// server (stdio): the implementer calls calc.add through the built CLI, the CLI exits on its own
// (a worker goes on) and no server process outlives the drive that started it.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { cliPath, repoRoot, runCli } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { accept, plan, result, turn } from "../runtime/harness.js";

const pg = await postgresForTests();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-mcp-run-"));
  dirs.push(d);
  return d;
}

const pack = path.join(repoRoot, "test/fixtures/runtime/mcp.task-pack.json");
const add = {
  kind: "tool_calls",
  summary: "ask calc",
  tool_calls: [{ name: "calc.add", arguments_json: '{"a":2,"b":3}' }],
  message: null,
};
const Plan = turn("Plan", plan("good-fix"));

/** Whether `pid` still runs: a zombie (exited, not yet reaped by its parent) has ended. */
function alive(pid: number): boolean {
  try {
    // `pid (name) S …`: the state follows the name's closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return false;
  }
}

/** The fixture MCP servers `parent` started and that still run. */
function serversOf(parent: number): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(parent)], { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.includes("server.mjs"))
      .map((l) => Number(l.trim().split(/\s+/)[0]));
  } catch {
    return []; // ps exits 1 when there is no child at all
  }
}

/** Writes a role's scripted answers; the `--model` flags naming them. */
function script(dir: string, role: string, turns: readonly unknown[]): string[] {
  const file = path.join(dir, `${role}.jsonl`);
  writeFileSync(file, `${turns.map((t) => JSON.stringify(t)).join("\n")}\n`);
  return ["--model", `${role}=scripted:${file}`];
}

interface Started {
  readonly child: ChildProcess;
  /** Fixture servers seen as the CLI's children while it ran. */
  readonly seen: Set<number>;
  output(): { stdout: string; stderr: string };
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the built CLI, watching for the MCP servers it starts; neither outlives the test. */
function start(args: readonly string[], cwd: string): Started {
  const child = spawn(process.execPath, [cliPath, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const seen = new Set<number>();
  const watch = setInterval(() => {
    for (const pid of serversOf(child.pid as number)) seen.add(pid);
  }, 50);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => {
      clearInterval(watch);
      resolve({ code, signal });
    }),
  );
  onTestFinished(() => {
    clearInterval(watch);
    if (child.exitCode === null) child.kill("SIGKILL");
    for (const pid of seen) if (alive(pid)) process.kill(pid, "SIGKILL");
  });
  return { child, seen, output: () => ({ stdout, stderr }), done };
}

/** Runs the CLI to its end; a CLI that does not exit within 40 s fails the test. */
async function cli(args: readonly string[], cwd: string) {
  const s = start(args, cwd);
  const killer = setTimeout(() => s.child.kill("SIGKILL"), 40_000);
  const { code, signal } = await s.done;
  clearTimeout(killer);
  const { stdout, stderr } = s.output();
  expect(signal, `the CLI did not exit: ${stdout}\n${stderr}`).toBeNull();
  return { code, stdout, stderr, seen: s.seen };
}

const queryOf = (stdout: string) =>
  (stdout.trim().split("\n").at(-1) ?? "").slice("query: ".length);

async function mcpCalls(storeUri: string, query: string) {
  const store = await openStore(storeUri);
  try {
    const transcripts = (await store.listRecords(query)).filter((r) => r.kind === "transcript");
    return transcripts.flatMap((t) =>
      (t.body as { entries: { kind: string }[] }).entries.filter((e) => e.kind === "tool-call"),
    );
  } finally {
    await store.close();
  }
}

describe("warrant run with an MCP server declared by the implementer", () => {
  it("calls the server's tool, succeeds, exits and leaves no server process", async () => {
    const cwd = tempDir();
    const models = [
      ...script(cwd, "implementer", [add, Plan]),
      ...script(cwd, "reviewer", [accept]),
      ...script(cwd, "summarizer", [result]),
    ];
    const r = await cli(["run", pack, "--yes", ...models], cwd);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain("loop stopped: succeeded");
    expect(r.seen.size).toBe(1);
    for (const pid of r.seen) expect(alive(pid)).toBe(false);
    // The ledger keeps the MCP call and its answer in the implementer's transcript.
    const calls = await mcpCalls(
      `sqlite:${path.join(cwd, ".warrant/ledger.db")}`,
      queryOf(r.stdout),
    );
    expect(calls).toMatchObject([
      { name: "calc.add", args: { a: 2, b: 3 }, result: { ok: true, content: "5" } },
    ]);
  });

  it("a run blocked after an MCP call exits without its server; resume reconnects, succeeds and exits without it", async () => {
    const cwd = tempDir();
    const models = [
      ...script(cwd, "implementer", [add]),
      ...script(cwd, "reviewer", [accept]),
      ...script(cwd, "summarizer", [result]),
    ];
    const blocked = await cli(["run", pack, "--yes", ...models], cwd);
    // Blocked, waiting on its model: exit 3.
    expect(blocked.code, blocked.stderr).toBe(3);
    expect(blocked.stdout).toMatch(/loop blocked: model/);
    expect(blocked.seen.size).toBe(1);
    for (const pid of blocked.seen) expect(alive(pid)).toBe(false);

    // The implementer's script goes on (its earlier answers are skipped by the calls they made).
    script(cwd, "implementer", [add, add, Plan]);
    const resumed = await cli(["resume", queryOf(blocked.stdout), "--yes"], cwd);
    expect(resumed.code, `${resumed.stdout}\n${resumed.stderr}`).toBe(0);
    expect(resumed.stdout).toContain("loop stopped: succeeded");
    expect(resumed.seen.size).toBe(1);
    for (const pid of resumed.seen) expect(alive(pid)).toBe(false);
  });

  describe.skipIf(!pg.enabled)("a worker over PostgreSQL", () => {
    const schemas = new TestSchemas(pg.url, "mcpworker");
    afterAll(async () => {
      await schemas.sql(`DROP SCHEMA IF EXISTS "${TestSchemas.schemaOf(store)}_jobs" CASCADE`);
      await schemas.dropAll();
    });
    const store = schemas.uri();

    it("closes a loop's MCP server when that loop's drive ends, and goes on running", async () => {
      const cwd = tempDir();
      const models = [
        ...script(cwd, "implementer", [add, Plan]),
        ...script(cwd, "reviewer", [accept]),
        ...script(cwd, "summarizer", [result]),
      ];
      const dispatched = await runCli(["run", pack, ...models, "--store", store, "--dispatch"], {
        cwd,
      });
      expect(dispatched.code, dispatched.stderr).toBe(0);
      const worker = start(["worker", "--store", store, "--yes", "--json"], cwd);
      await expect
        .poll(() => worker.output().stdout, { timeout: 40_000, interval: 100 })
        .toContain('"event":"end"');
      expect(worker.output().stdout).toContain('"reason":"succeeded"');
      expect(worker.seen.size).toBe(1);
      // The worker closes its servers as the drive ends, not before it prints the end event.
      await expect
        .poll(() => serversOf(worker.child.pid as number), { timeout: 5_000 })
        .toEqual([]);
      await expect.poll(() => [...worker.seen].filter(alive), { timeout: 5_000 }).toEqual([]);
      expect(worker.child.exitCode).toBeNull();
      worker.child.kill("SIGTERM");
      await worker.done;
    });
  });
});
