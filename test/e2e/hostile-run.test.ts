// `warrant run --json` on a pack whose command leaves every hostile shape in its environment — a
// FIFO, a name that is not UTF-8, a 3 GiB sparse file, a tree past PATH_MAX, a directory without
// permissions — and whose next step reads them: the run ends with a JSON result, what the host met
// is recorded as findings, the environment and the pinned baseline are gone, and the stored loop
// checks valid.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import type { RunReportBody } from "../../src/runtime/records.js";
import { repoRoot, runCli } from "../helpers/cli.js";
import { accept, result, turn } from "../runtime/harness.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const LEAVE_SHAPES = [
  'const fs = require("fs");',
  'require("child_process").execFileSync("mkfifo", ["src/pipe"]);',
  'fs.writeFileSync(Buffer.from("src/bad\\xffname", "latin1"), "x");',
  'fs.closeSync(fs.openSync("src/sparse", "w")); fs.truncateSync("src/sparse", 3 * 2 ** 30);',
  'fs.mkdirSync("src/locked/in", { recursive: true }); fs.writeFileSync("src/locked/in/f", "s");',
  'fs.chmodSync("src/locked/in", 0); fs.chmodSync("src/locked", 0);',
  'process.chdir("src"); for (let i = 0; i < 400; i++) { fs.mkdirSync("d123456789abcdef"); process.chdir("d123456789abcdef"); }',
  'fs.writeFileSync("leaf", "deep");',
].join(" ");

function pack(dir: string): string {
  const workspace = path.join(dir, "workspace");
  mkdirSync(path.join(workspace, "src"), { recursive: true });
  mkdirSync(path.join(workspace, "test"));
  writeFileSync(path.join(workspace, "src/a.txt"), "a\n");
  writeFileSync(path.join(workspace, "test/t.txt"), "t\n");
  const agents = path.join(repoRoot, "examples/agents");
  const noArgs = { type: "object", additionalProperties: false, properties: {} };
  const file = path.join(dir, "task-pack.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "warrant/task-pack.v1",
      name: "hostile-shapes",
      task: "Leave hostile shapes behind and read them.",
      workspace: "workspace",
      agents: {
        implementer: path.join(agents, "implementer.json"),
        reviewer: path.join(agents, "reviewer.json"),
        summarizer: path.join(agents, "summarizer.json"),
      },
      commands: {
        "leave-shapes": {
          effect: "mutation",
          argv: ["node", "-e", LEAVE_SHAPES],
          args: noArgs,
          timeoutMs: 60000,
          maxOutputBytes: 4096,
        },
        ok: {
          effect: "observation",
          argv: ["true"],
          args: noArgs,
          timeoutMs: 5000,
          maxOutputBytes: 1024,
        },
      },
      patchPolicy: { allow: ["src/**"], maxBytes: 4096 },
      verifier: {
        timeoutMs: 120000,
        checks: [
          { name: "ok", command: "ok" },
          { name: "tests-unchanged", unchanged: ["test/**"] },
          { name: "only-allowed-changed", onlyAllowedChanged: true },
        ],
      },
      hil: "none",
      admission: "auto",
      // The 3 GiB sparse file is past the default disk limit's file size (RLIMIT_FSIZE), and
      // hashing it (3 GiB of zeros) may take longer than the default 30 s of change capture on a
      // loaded machine: this test is about the shapes, not that bound (interrupt-run.test.ts).
      resources: { diskBytes: 4 * 2 ** 30, changeCaptureMs: 300000 },
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
  hypothesis: "the command leaves odd files; reading them must not hang the host",
  steps: [
    { id: "look", action: "observe", read: ["src/a.txt"] },
    { id: "shapes", action: "command", profile: "leave-shapes" },
    { id: "read-back", action: "observe", read: ["src/pipe", "src/sparse"] },
  ],
  expected_checks: ["ok"],
};

function script(dir: string, role: string, turns: readonly unknown[]): string[] {
  const file = path.join(dir, `${role}.jsonl`);
  writeFileSync(file, `${turns.map((t) => JSON.stringify(t)).join("\n")}\n`);
  return ["--model", `${role}=scripted:${file}`];
}

const detected = await detectSandbox();
const why = detected.ok ? "" : ` (skipped: no containment backend: ${detected.errors[0]?.message})`;

describe.skipIf(!detected.ok)(`warrant run over a hostile environment${why}`, () => {
  it("ends with a JSON result, records what it met, leaves nothing behind, and checks valid", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-hostile-run-"));
    dirs.push(cwd);
    // The host's temp directory for environments and pins: empty again afterwards.
    const temp = path.join(cwd, "tmp");
    mkdirSync(temp);
    chmodSync(cwd, 0o711);
    chmodSync(temp, 0o711);
    const models = [
      ...script(cwd, "implementer", [turn("Plan", plan)]),
      ...script(cwd, "reviewer", [accept]),
      ...script(cwd, "summarizer", [result]),
    ];
    const r = await runCli(["run", pack(cwd), "--json", ...models], {
      cwd,
      env: { TMPDIR: temp },
      timeoutMs: 240_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      query: string;
      store: string;
      status: string;
      stop: { reason: string };
    };
    expect([out.status, out.stop.reason]).toEqual(["stopped", "succeeded"]);
    expect(readdirSync(temp)).toEqual([]);

    const uri = `sqlite:${path.join(cwd, ".warrant/ledger.db")}`;
    const store = await openStore(uri);
    let report: RunReportBody;
    try {
      const reports = (await store.listRecords(out.query)).filter((x) => x.kind === "runReport");
      expect(reports).toHaveLength(1);
      report = reports[0]?.body as RunReportBody;
    } finally {
      await store.close();
    }
    expect(report["environment/destroyed"]).toBe(true);
    const readBack = report.steps.find((s) => s["step/id"] === "read-back");
    expect(readBack?.findings?.map((f) => f.code)).toEqual(["environment/special-file"]);
    expect(readBack?.truncated).toBe(true);
    const only = report.checks.find((c) => c.name === "only-allowed-changed");
    expect(only?.passed).toBe(true);
    expect(new Set(only?.findings?.map((f) => f.code))).toEqual(
      new Set(["environment/special-file", "environment/name-not-utf8"]),
    );

    const check = await runCli(["loop", "check", "--store", uri, out.query, "--json"], {
      cwd,
    });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect((JSON.parse(check.stdout) as { valid: boolean }).valid).toBe(true);
  }, 300_000);
});
