// `warrant run` on a pack whose commands may reach one host:port on the host's loopback: the run's
// report lists every connection its commands asked the egress proxy for (allowed and refused),
// tagged with its step, the live view and `show` print them, and the stored loop checks valid.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import type { RunReportBody } from "../../src/runtime/records.js";
import { repoRoot, runCli } from "../helpers/cli.js";
import { accept, result, turn } from "../runtime/harness.js";

const dirs: string[] = [];
let server: http.Server;
let port: number;
beforeAll(async () => {
  server = http.createServer((q, s) => s.end(`served ${q.url}\n`));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function pack(dir: string): string {
  const workspace = path.join(dir, "workspace");
  mkdirSync(path.join(workspace, "src"), { recursive: true });
  writeFileSync(path.join(workspace, "src/a.txt"), "a\n");
  const agents = path.join(repoRoot, "examples/agents");
  const noArgs = { type: "object", additionalProperties: false, properties: {} };
  const curl = (url: string) => ({
    effect: "observation",
    argv: ["curl", "-sS", "-m", "10", url],
    args: noArgs,
    timeoutMs: 30000,
    maxOutputBytes: 4096,
  });
  const file = path.join(dir, "task-pack.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "warrant/task-pack.v1",
      name: "egress-run",
      task: "Fetch from the allowed server, and try another port.",
      workspace: "workspace",
      agents: {
        implementer: path.join(agents, "implementer.json"),
        reviewer: path.join(agents, "reviewer.json"),
        summarizer: path.join(agents, "summarizer.json"),
      },
      commands: {
        fetch: curl(`http://127.0.0.1:${port}/allowed`),
        "fetch-other": curl(`http://127.0.0.1:${port + 1}/other`),
        "fetch-name": curl(`http://localhost:${port}/by-name`),
      },
      patchPolicy: { allow: ["src/**"], maxBytes: 4096 },
      verifier: { timeoutMs: 60000, checks: [{ name: "fetch", command: "fetch" }] },
      hil: "none",
      admission: "auto",
      network: { allow: [`127.0.0.1:${port}`] },
      limits: {
        "max/passages": 6,
        "max/cycles": 2,
        "max/experiments": 2,
        "max/wall-time-ms": 600000,
      },
    }),
  );
  return file;
}

const plan = {
  hypothesis: "the server answers on the allowed port only",
  steps: [
    { id: "get", action: "observe", profile: "fetch" },
    { id: "get-other", action: "observe", profile: "fetch-other" },
    { id: "get-name", action: "observe", profile: "fetch-name" },
  ],
  expected_checks: ["fetch"],
};

function script(dir: string, role: string, turns: readonly unknown[]): string[] {
  const file = path.join(dir, `${role}.jsonl`);
  writeFileSync(file, `${turns.map((t) => JSON.stringify(t)).join("\n")}\n`);
  return ["--model", `${role}=scripted:${file}`];
}

it("a pack with a malformed network entry is refused before anything runs, with its code and pointer", async () => {
  const cwd = mkdtempSync(path.join(tmpdir(), "warrant-egress-bad-"));
  dirs.push(cwd);
  const file = pack(cwd);
  const doc = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  doc.network = { allow: [`127.0.0.1:${port}`, "example.com:0", "example.com"] };
  writeFileSync(file, JSON.stringify(doc));
  const r = await runCli(["run", file, "--json"], { cwd, timeoutMs: 60_000 });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("/network/allow/1: taskpack/network-port");
  expect(r.stderr).toContain("/network/allow/2: taskpack/network-entry");
  expect(existsSync(path.join(cwd, ".warrant"))).toBe(false);
});

const detected = await detectSandbox();
const why = detected.ok ? "" : ` (skipped: no containment backend: ${detected.errors[0]?.message})`;

describe.skipIf(!detected.ok)(`warrant run with network on an allow-list${why}`, () => {
  it("records every connection in the run report, shows them, and checks valid", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-egress-run-"));
    dirs.push(cwd);
    const models = [
      ...script(cwd, "implementer", [turn("Plan", plan)]),
      ...script(cwd, "reviewer", [accept]),
      ...script(cwd, "summarizer", [result]),
    ];
    const r = await runCli(["run", pack(cwd), ...models], { cwd, timeoutMs: 240_000 });
    expect(r.code, r.stderr).toBe(0);
    // The live view prints each step's connections under it.
    expect(r.stdout).toContain(`step get observe-command: ok`);
    expect(r.stdout).toMatch(
      new RegExp(`net http 127\\.0\\.0\\.1:${port} allowed: \\d+ B up, \\d+ B down`),
    );
    expect(r.stdout).toContain(`net http 127.0.0.1:${port + 1} refused: egress/port-not-listed`);
    expect(r.stdout).toContain(`net http localhost:${port} refused: egress/not-listed`);

    const uri = `sqlite:${path.join(cwd, ".warrant/ledger.db")}`;
    const store = await openStore(uri);
    let report: RunReportBody;
    let query: string;
    try {
      const loops = await store.listLoops();
      query = loops[0]?.query as string;
      const reports = (await store.listRecords(query)).filter((x) => x.kind === "runReport");
      expect(reports).toHaveLength(1);
      report = reports[0]?.body as RunReportBody;
    } finally {
      await store.close();
    }
    expect(report.network?.allow).toEqual([`127.0.0.1:${port}`]);
    expect(report.network?.omitted).toBe(0);
    expect(
      report.network?.connections.map((c) => [
        c["step/id"] ?? c["check/name"],
        c.host,
        c.port,
        c.allowed,
        c.reason,
      ]),
    ).toEqual([
      ["get", "127.0.0.1", port, true, undefined],
      ["get-other", "127.0.0.1", port + 1, false, "egress/port-not-listed"],
      ["get-name", "localhost", port, false, "egress/not-listed"],
      ["fetch", "127.0.0.1", port, true, undefined],
    ]);
    expect(report.steps.find((s) => s["step/id"] === "get")?.excerpt).toContain("served /allowed");

    const shown = await runCli(["show", query, "--store", uri], { cwd });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`egress of `);
    expect(shown.stdout).toContain(
      `get-name: net http localhost:${port} refused: egress/not-listed`,
    );
    expect(shown.stdout).toContain(`check fetch: net http 127.0.0.1:${port} allowed`);

    const check = await runCli(["loop", "check", "--store", uri, query, "--json"], { cwd });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect((JSON.parse(check.stdout) as { valid: boolean }).valid).toBe(true);
  }, 300_000);
});
