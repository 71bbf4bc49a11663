// `warrant run` with a task pack whose implementer declares the fixture MCP server (stdio): the
// implementer calls calc.add through the built CLI, the loop succeeds, the CLI exits on its own and
// no server process outlives it.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { cliPath, repoRoot } from "../helpers/cli.js";
import { accept, plan, result, turn } from "../runtime/harness.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const pack = path.join(repoRoot, "test/fixtures/runtime/mcp.task-pack.json");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
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

function scripts(dir: string): string[] {
  const write = (role: string, turns: unknown[]) => {
    const file = path.join(dir, `${role}.jsonl`);
    writeFileSync(file, `${turns.map((t) => JSON.stringify(t)).join("\n")}\n`);
    return ["--model", `${role}=scripted:${file}`];
  };
  const add = {
    kind: "tool_calls",
    summary: "ask calc",
    tool_calls: [{ name: "calc.add", arguments_json: '{"a":2,"b":3}' }],
    message: null,
  };
  return [
    ...write("implementer", [add, turn("Plan", plan("good-fix"))]),
    ...write("reviewer", [accept]),
    ...write("summarizer", [result]),
  ];
}

describe("warrant run with an MCP server declared by the implementer", () => {
  it("calls the server's tool, succeeds, exits and leaves no server process", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-mcp-run-"));
    dirs.push(cwd);
    const child = spawn(process.execPath, [cliPath, "run", pack, "--yes", ...scripts(cwd)], {
      cwd,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    // Servers seen while the run goes on (the CLI's own children).
    const seen = new Set<number>();
    const watch = setInterval(() => {
      for (const pid of serversOf(child.pid as number)) seen.add(pid);
    }, 50);
    // A CLI that never exits fails the test, and neither it nor its servers outlive the test.
    const killer = setTimeout(() => child.kill("SIGKILL"), 45_000);
    onTestFinished(() => {
      child.kill("SIGKILL");
      for (const pid of seen) if (alive(pid)) process.kill(pid, "SIGKILL");
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on("close", (c, s) => resolve([c, s])),
    );
    clearInterval(watch);
    clearTimeout(killer);

    expect(signal, stderr).toBeNull();
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain("loop stopped: succeeded");
    expect(seen.size).toBe(1);
    for (const pid of seen) expect(alive(pid)).toBe(false);

    // The ledger keeps the MCP call and its answer in the implementer's transcript.
    const query = (stdout.trim().split("\n").at(-1) ?? "").slice("query: ".length);
    const store = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
    try {
      const transcripts = (await store.listRecords(query)).filter((r) => r.kind === "transcript");
      const calls = transcripts.flatMap((t) =>
        (t.body as { entries: { kind: string }[] }).entries.filter((e) => e.kind === "tool-call"),
      );
      expect(calls).toMatchObject([
        { name: "calc.add", args: { a: 2, b: 3 }, result: { ok: true, content: "5" } },
      ]);
    } finally {
      await store.close();
    }
  });
});
