// The preflight as a user meets it, through the built CLI: `run` and `run --dispatch` refuse a
// missing key, script or model before any loop opens (`loops --json` stays empty), and
// `run --check [--probe]` reports the same without opening anything.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot, runCli } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { startWireServer } from "../models/wire-server.js";
import { demoPack, scripted } from "./cli-run.js";

const KEY = "sk-e2e-preflight-5521";
const NO_KEYS = {
  OPENAI_API_KEY: "",
  ANTHROPIC_API_KEY: "",
  OPENAI_BASE_URL: "",
  ANTHROPIC_BASE_URL: "",
};
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-preflight-e2e-"));
  dirs.push(d);
  return d;
}

const models = (over: Record<string, string> = {}) =>
  ["implementer", "reviewer", "summarizer"].flatMap((role) => [
    "--model",
    over[role] === undefined ? scripted(role) : `${role}=${over[role]}`,
  ]);

/** The loops of `store`; none when a refused run did not even create it (store/not-found). */
async function loops(cwd: string, store: string): Promise<unknown> {
  const r = await runCli(["loops", "--json", "--store", store], { cwd });
  if (r.code === 1 && r.stderr.includes("store/not-found")) return [];
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe("run refuses before opening a loop", () => {
  it("a missing key: exit 2, model/missing-key, no loop", async () => {
    const cwd = tempDir();
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    const r = await runCli(
      [
        "run",
        demoPack,
        ...models({ reviewer: "openai:gpt-4.1" }),
        "--yes",
        "--store",
        store,
        "--json",
      ],
      { cwd, env: NO_KEYS },
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      "warrant: model/missing-key: reviewer's openai: needs OPENAI_API_KEY",
    );
    expect(await loops(cwd, store)).toEqual([]);
  });

  it("a missing scripted file: exit 2, model/script; a bad line: exit 1, named by its number; no loop", async () => {
    const cwd = tempDir();
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    const missing = await runCli(
      ["run", demoPack, ...models({ implementer: "scripted:nope.jsonl" }), "--store", store],
      { cwd },
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `model/script: implementer: scripted model ${path.join(cwd, "nope.jsonl")}: no such file`,
    );
    writeFileSync(path.join(cwd, "bad.jsonl"), '{"kind":"message"}\n{oops\n');
    const bad = await runCli(
      ["run", demoPack, ...models({ summarizer: "scripted:bad.jsonl" }), "--store", store],
      { cwd },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("script line 2 is not JSON");
    expect(await loops(cwd, store)).toEqual([]);
  });

  it("a role without --model runs on its definition's model; one that cannot be made is refused (1), said by the preflight", async () => {
    const cwd = tempDir();
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    const unknown = path.join(repoRoot, "test/fixtures/runtime/unknown-provider.task-pack.json");
    const r = await runCli(["run", unknown, "--model", scripted("implementer"), "--store", store], {
      cwd,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('definition/provider-unknown: reviewer: model 0: provider "gemini"');
    expect(r.stderr).not.toContain("model/missing");
    expect(await loops(cwd, store)).toEqual([]);
  });
});

const pg = await postgresForTests();

describe.skipIf(!pg.enabled)("run --dispatch refuses before opening a loop (PostgreSQL)", () => {
  const schemas = new TestSchemas(pg.url, "preflight");
  afterAll(() => schemas.dropAll());

  it("a missing key: exit 2, no loop, no job queued", async () => {
    const cwd = tempDir();
    const store = schemas.uri();
    const r = await runCli(
      [
        "run",
        demoPack,
        ...models({ implementer: "anthropic:claude-x" }),
        "--store",
        store,
        "--dispatch",
        "--json",
      ],
      { cwd, env: NO_KEYS },
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      "model/missing-key: implementer's anthropic: needs ANTHROPIC_API_KEY",
    );
    expect(await loops(cwd, store)).toEqual([]);
    const jobs = await schemas.sql("SELECT 1 FROM pg_namespace WHERE nspname = $1", [
      `${TestSchemas.schemaOf(store)}_jobs`,
    ]);
    expect(jobs).toEqual([]);
  });
});

describe("run --check", () => {
  it("runs the preflight alone: no store is opened, exit 0 with --json {taskpack, ok, usage, checks, problems}", async () => {
    const cwd = tempDir();
    const r = await runCli(["run", demoPack, ...models(), "--check", "--json"], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["checks", "ok", "problems", "taskpack", "usage"]);
    expect(body).toMatchObject({
      taskpack: demoPack,
      ok: true,
      usage: false,
      problems: [],
      checks: [
        { name: "models", ok: true },
        { name: "mcp-servers", ok: true },
        { name: "definitions", ok: true },
        { name: "scripts", ok: true },
        { name: "toolchains", ok: true },
        // Each profile's program, looked up in a sandbox on the baseline.
        {
          name: "commands",
          ok: true,
          notes: ["run-tests: node found", "show-file: cat found", "probe-network: node found"],
        },
      ],
    });
    expect(existsSync(path.join(cwd, ".warrant"))).toBe(false);
    const human = await runCli(["run", demoPack, ...models(), "--check"], { cwd });
    expect(human.stdout).toMatch(/^ok {3}models\n/);
    expect(human.stdout.trim().split("\n").at(-1)).toBe("preflight passed");
  });

  it("reports every problem and exits 2 for usage, 1 for invalid content or a pack that does not load", async () => {
    const cwd = tempDir();
    const r = await runCli(
      ["run", demoPack, "--model", "implementer=openai:gpt-4.1", "--check", "--json"],
      { cwd, env: { ...NO_KEYS, OPENAI_API_KEY: "" } },
    );
    expect(r.code).toBe(2);
    const body = JSON.parse(r.stdout) as {
      ok: boolean;
      problems: { code: string; check: string }[];
    };
    expect(body.ok).toBe(false);
    // The reviewer and the summarizer run on their definitions' scripted models.
    expect(body.problems.map((p) => p.code)).toEqual(["model/missing-key"]);
    writeFileSync(path.join(cwd, "pack.json"), JSON.stringify({ schema: "nope" }));
    const invalid = await runCli(["run", "pack.json", "--check", "--json"], { cwd });
    expect(invalid.code).toBe(1);
    const bad = JSON.parse(invalid.stdout) as {
      checks: { name: string }[];
      problems: { code: string }[];
    };
    expect(bad.checks).toEqual([{ name: "pack", ok: false, notes: [] }]);
    expect(bad.problems[0]?.code).toBe("taskpack/schema");
    const human = await runCli(["run", "pack.json", "--check"], { cwd });
    expect(human.code).toBe(1);
    expect(human.stdout).toContain("FAIL pack");
    expect(human.stdout).toContain("preflight failed");
    expect((await runCli(["run", "no-such-pack.json", "--check"], { cwd })).code).toBe(2);
    expect(existsSync(path.join(cwd, ".warrant"))).toBe(false);
  });

  it("--probe reaches an openai-compatible endpoint with the key, which is never printed", async () => {
    const wire = await startWireServer([{ status: 200, body: { data: [{ id: "local-model" }] } }]);
    const cwd = tempDir();
    try {
      const uri = `openai-compatible:${wire.url}/v1#local-model`;
      const r = await runCli(
        ["run", demoPack, ...models({ implementer: uri }), "--check", "--probe"],
        {
          cwd,
          env: { ...NO_KEYS, OPENAI_API_KEY: KEY },
        },
      );
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain("ok   probe");
      expect(r.stdout).toContain(
        `implementer: ${wire.url}/v1 answered GET /models; it lists local-model`,
      );
      expect(wire.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(r.stdout + r.stderr).not.toContain(KEY);
    } finally {
      await wire.close();
    }
    // The server is gone now: the same check fails, exit 1.
    const down = await runCli(
      [
        "run",
        demoPack,
        ...models({ implementer: `openai-compatible:${wire.url}/v1#local-model` }),
        "--check",
        "--probe",
        "--json",
      ],
      { cwd, env: NO_KEYS },
    );
    expect(down.code).toBe(1);
    const body = JSON.parse(down.stdout) as { problems: { check: string; code: string }[] };
    expect(body.problems).toMatchObject([{ check: "probe", code: "model/unreachable" }]);
  });
});
