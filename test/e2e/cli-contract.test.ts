// The command line's contract (docs/spec/cli.md) in one place, against the built CLI: every command exists,
// takes --json, has useful --help, prints the documented machine shapes, and exits 0 on success,
// 1 on invalid or refused input and 2 on usage errors.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import canonicalize from "canonicalize";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import type { LoopDocument } from "../../src/core/loop/types.js";
import { type CliResult, cliPath, repoRoot, runCli, seedExamplesDir } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { ensureStore } from "../helpers/store.js";
import { scripted } from "./cli-run.js";

/** Every leaf command docs/spec/cli.md names, as typed after `warrant`. */
const COMMANDS = [
  "definition validate",
  "definition id",
  "definition normalize",
  "definition show",
  "cid blob",
  "cid collection",
  "turn check",
  "loop simulate",
  "loop check",
  "demo",
  "run",
  "resume",
  "loops",
  "show",
  "export",
  "record",
  "renew",
  "cancel",
  "approve",
  "deny",
  "answer",
  "pending",
  "serve",
  "worker",
  "diff",
  "apply",
  "workers",
  "requeue",
  "eval run",
  "eval report",
  "eval compare",
  "eval certify",
] as const;

/** Commands that take arguments: run bare, each is a usage error. */
const NEEDS_ARGUMENTS = COMMANDS.filter(
  (c) => !["demo", "loops", "pending", "serve", "worker", "workers"].includes(c),
);

const PUBLISHED = path.join(seedExamplesDir, "open.corpus-task-pack-loop.json");
const SCRIPT = path.join(repoRoot, "examples/loop-scripts/demo.json");
const AGENT = path.join(repoRoot, "examples/agents/implementer.json");
const PACK = path.join(repoRoot, "examples/fix-failing-test/task-pack.json");
const CID = /^b[a-z2-7]{20,}$/;

let dir = "";
let store = "";
let query = "";
let demo: CliResult;

const cli = (args: readonly string[]) => runCli(args, { cwd: dir });
const split = (command: string) => command.split(" ");
const write = (name: string, value: unknown): string => {
  const file = path.join(dir, name);
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
  return file;
};
const keys = (x: unknown) => Object.keys(x as object).sort();
const json = (r: CliResult): unknown => JSON.parse(r.stdout);
const loopValid = (doc: unknown) => {
  const validate = contractValidators().loop;
  expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
};

/** Runs the commands two at a time (two cores), results in order. */
async function each(argvs: readonly (readonly string[])[]): Promise<CliResult[]> {
  const results: CliResult[] = [];
  for (let i = 0; i < argvs.length; i += 2) {
    results.push(...(await Promise.all(argvs.slice(i, i + 2).map((a) => cli(a)))));
  }
  return results;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "warrant-cli-contract-"));
  store = `sqlite:${path.join(dir, "ledger.db")}`;
  demo = await cli(["demo", "--json", "--store", store]);
  query = (JSON.parse(demo.stdout) as { query: string }).query;
}, 90_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("every command of docs/spec/cli.md", { timeout: 120_000 }, () => {
  it("is there, and no other: the help lists exactly these commands", async () => {
    const listed = async (group: string[]) => {
      const help = (await cli([...group, "--help"])).stdout;
      const section = help.slice(help.indexOf("Commands:"));
      return [...section.matchAll(/^ {2}(\S+)/gm)]
        .map((m) => m[1] as string)
        .filter((c) => c !== "help");
    };
    const groups = ["definition", "cid", "turn", "loop", "eval"];
    const top = await listed([]);
    const leaves = top.filter((c) => !groups.includes(c));
    for (const g of groups) leaves.push(...(await listed([g])).map((c) => `${g} ${c}`));
    expect(leaves.sort()).toEqual([...COMMANDS].sort());
  });

  it("--help on every command exits 0 with its usage, a description and a --json option", async () => {
    const results = await each(COMMANDS.map((c) => [...split(c), "--help"]));
    results.forEach((r, i) => {
      const c = COMMANDS[i] as string;
      expect(r.code, c).toBe(0);
      expect(r.stdout, c).toContain(`Usage: warrant ${c} [options]`);
      // The line after the usage line is the command's description.
      expect(r.stdout.split("\n")[2]?.trim().length ?? 0, c).toBeGreaterThan(10);
      expect(r.stdout, c).toMatch(/^ {2}--json +\S/m);
    });
  });

  it("the top-level help states the exit codes and where the store is", async () => {
    const r = await cli(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Exit codes: 0 success, 1 invalid input or refused, 2 usage error");
    expect(r.stdout).toContain("WARRANT_STORE");
  });

  it("an unknown flag on every command exits 2 and prints nothing on stdout", async () => {
    const results = await each(COMMANDS.map((c) => [...split(c), "--no-such-flag"]));
    results.forEach((r, i) => {
      expect(r.code, COMMANDS[i]).toBe(2);
      // (`turn check` reports its missing required --tools first: a usage error as well.)
      expect(r.stderr, COMMANDS[i]).toMatch(/unknown option '--no-such-flag'|required option/);
      expect(r.stdout, COMMANDS[i]).toBe("");
    });
  });

  it("a missing argument exits 2 on every command that takes one", async () => {
    const results = await each(NEEDS_ARGUMENTS.map((c) => split(c)));
    results.forEach((r, i) => {
      expect(r.code, NEEDS_ARGUMENTS[i]).toBe(2);
      expect(r.stderr, NEEDS_ARGUMENTS[i]).toMatch(/missing required argument|required option/);
    });
  });

  it("an unknown command exits 2; --version exits 0", async () => {
    expect((await cli(["no-such-command"])).code).toBe(2);
    const v = await cli(["--version"]);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("a file that is not there is a usage error (2) for every command that reads one", async () => {
    const gone = path.join(dir, "no-such-file.json");
    const argvs = [
      ["definition", "validate", gone, "--json"],
      ["definition", "id", gone],
      ["definition", "normalize", gone],
      ["cid", "blob", gone],
      ["cid", "collection", gone],
      ["turn", "check", gone, "--tools", gone],
      ["loop", "simulate", gone, "--json"],
      ["loop", "check", gone],
      ["run", gone, "--store", store],
    ];
    const results = await each(argvs);
    results.forEach((r, i) => {
      expect(r.code, argvs[i]?.join(" ")).toBe(2);
      expect(r.stdout, argvs[i]?.join(" ")).toBe("");
      expect(r.stderr, argvs[i]?.join(" ")).toContain("no-such-file.json");
    });
  });

  it("a store URI that names no store is a usage error (2)", async () => {
    const results = await each([
      ["loops", "--store", "nosuch:x"],
      ["show", query, "--store", "nosuch:x"],
      ["loop", "check", query, "--store", "nosuch:x"],
    ]);
    for (const r of results) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("store/uri-invalid");
    }
  });
});

describe("definition and cid", () => {
  it("definition validate --json: one {file, valid, id?, errors:[{code, path, message}]} per file, in order; 1 if any is invalid", async () => {
    const bad = write("bad-definition.json", { name: "x" });
    const r = await cli(["definition", "validate", AGENT, bad, "--json"]);
    expect(r.code).toBe(1);
    const [good, broken] = json(r) as Record<string, unknown>[];
    expect(keys(good)).toEqual(["errors", "file", "id", "valid"]);
    expect(good).toMatchObject({ file: AGENT, valid: true, errors: [] });
    expect(good?.id).toMatch(CID);
    expect(keys(broken)).toEqual(["errors", "file", "valid"]);
    expect(broken).toMatchObject({ file: bad, valid: false });
    const errors = broken?.errors as Record<string, unknown>[];
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) {
      expect(keys(e)).toEqual(["code", "message", "path"]);
      expect(e.code).toMatch(/^definition\//);
      expect(typeof e.path).toBe("string");
    }
    const allValid = await cli(["definition", "validate", AGENT, "--json"]);
    expect(allValid.code).toBe(0);
    expect(json(allValid)).toEqual([expect.objectContaining({ valid: true })]);
  });

  it("definition id prints the CID on one line (0), refuses an invalid definition (1)", async () => {
    const r = await cli(["definition", "id", AGENT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^b[a-z2-7]+\n$/);
    const j = await cli(["definition", "id", AGENT, "--json"]);
    expect(json(j)).toEqual({ file: AGENT, valid: true, id: r.stdout.trim(), errors: [] });
    const bad = await cli(["definition", "id", write("bad-id.json", "{")]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe("");
  });

  it("definition normalize prints canonical JSON (RFC 8785), with or without --json", async () => {
    for (const extra of [[], ["--json"]]) {
      const r = await cli(["definition", "normalize", AGENT, ...extra]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(canonicalize(JSON.parse(r.stdout)));
    }
    expect((await cli(["definition", "normalize", write("bad-n.json", "[")])).code).toBe(1);
  });

  it("cid blob and cid collection print the CID on one line, or {cid} with --json", async () => {
    const tree = path.join(dir, "tree");
    mkdirSync(tree, { recursive: true });
    writeFileSync(path.join(tree, "a.txt"), "a");
    for (const argv of [
      ["cid", "blob", AGENT],
      ["cid", "collection", tree],
    ]) {
      const r = await cli(argv);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^b[a-z2-7]+\n$/);
      const j = await cli([...argv, "--json"]);
      expect(json(j)).toEqual({ cid: r.stdout.trim() });
    }
  });
});

describe("turn check", () => {
  const tools = () =>
    write("tools.json", [
      {
        name: "workspace.read_file",
        description: "Read a file",
        inputSchema: {
          type: "object",
          properties: { path: { type: "string" } },
          required: ["path"],
          additionalProperties: false,
        },
      },
    ]);
  const turn = (args: unknown) =>
    write("turn.json", {
      kind: "tool_calls",
      summary: "read",
      tool_calls: [{ name: "workspace.read_file", arguments_json: JSON.stringify(args) }],
      message: null,
    });

  it("prints exactly {valid, errors}: 0 when valid, 1 with [{code, path, message}] when not", async () => {
    const t = tools();
    const ok = await cli(["turn", "check", turn({ path: "a" }), "--tools", t, "--json"]);
    expect(ok.code).toBe(0);
    expect(json(ok)).toEqual({ valid: true, errors: [] });
    const bad = await cli(["turn", "check", turn({ path: 3 }), "--tools", t, "--json"]);
    expect(bad.code).toBe(1);
    const body = json(bad) as { valid: boolean; errors: Record<string, unknown>[] };
    expect(keys(body)).toEqual(["errors", "valid"]);
    expect(body.valid).toBe(false);
    for (const e of body.errors) expect(keys(e)).toEqual(["code", "message", "path"]);
  });

  it("an unknown role or a malformed tools list is a usage error (2)", async () => {
    const t = tools();
    const tr = turn({ path: "a" });
    expect((await cli(["turn", "check", tr, "--tools", t, "--role", "boss"])).code).toBe(2);
    const notList = write("tools-bad.json", { name: "x" });
    expect((await cli(["turn", "check", tr, "--tools", notList])).code).toBe(2);
  });
});

describe("loop simulate and loop check", () => {
  it("loop simulate --json prints exactly {outcomes, loop}: docs/spec/loop.md outcomes and a seed-valid loop", async () => {
    const r = await cli(["loop", "simulate", SCRIPT, "--json"]);
    expect(r.code).toBe(0);
    const body = json(r) as { outcomes: Record<string, unknown>[]; loop: unknown };
    expect(keys(body)).toEqual(["loop", "outcomes"]);
    for (const o of body.outcomes) {
      expect(["appended", "replayed", "refused"]).toContain(o.result);
      expect(typeof o.op).toBe("string");
      for (const k of Object.keys(o))
        expect(["op", "result", "sequence", "code", "counter"]).toContain(k);
      if (o.result === "refused") expect(typeof o.code).toBe("string");
      else expect(Number.isInteger(o.sequence)).toBe(true);
    }
    loopValid(body.loop);
  });

  it("loop simulate: a loop never opened is null; an invalid script exits 1", async () => {
    const never = write("never.json", {
      query: "query:never",
      binding: "operator-task-local-binding:b",
      operator: "node-operator-binding:a",
      layers: [{ "max/passages": 2, "max/experiments": 1, "max/wall-time-ms": 1000 }],
      commands: [{ at: "2026-12-01T10:00:00Z", op: "cancel" }],
      now: "2026-12-01T10:00:00Z",
    });
    const r = await cli(["loop", "simulate", never, "--json"]);
    expect(r.code).toBe(0);
    expect(json(r)).toEqual({
      outcomes: [{ op: "cancel", result: "refused", code: "loop/not-opened" }],
      loop: null,
    });
    const invalid = await cli(["loop", "simulate", write("invalid.json", { query: 1 }), "--json"]);
    expect(invalid.code).toBe(1);
  });

  it("loop check: the published loop is valid (0), a broken one is not (1), a bad --now is usage (2)", async () => {
    const ok = await cli(["loop", "check", PUBLISHED, "--json"]);
    expect(ok.code).toBe(0);
    expect(json(ok)).toMatchObject({ file: PUBLISHED, valid: true, errors: [] });
    const broken = await cli(["loop", "check", write("broken-loop.json", { facts: [] }), "--json"]);
    expect(broken.code).toBe(1);
    expect(json(broken)).toMatchObject({ valid: false });
    expect((await cli(["loop", "check", PUBLISHED, "--now", "later"])).code).toBe(2);
  });

  it("loop check --store URI QUERY checks the stored loop (0), and an unknown loop is refused (1)", async () => {
    const r = await cli(["loop", "check", "--store", store, query, "--json"]);
    expect(r.code).toBe(0);
    expect(json(r)).toMatchObject({ query, valid: true, state: "stopped", errors: [] });
    const none = await cli(["loop", "check", "--store", store, "query:none", "--json"]);
    expect(none.code).toBe(1);
    expect(json(none)).toMatchObject({ valid: false, errors: [{ code: "loop/not-opened" }] });
  });
});

describe("demo, run, resume, worker", () => {
  it("demo --json prints only {query, store, status, stop, spent} on stdout and exits 0", () => {
    expect(demo.code, demo.stderr).toBe(0);
    const body = json(demo) as Record<string, unknown>;
    expect(keys(body)).toEqual(["query", "spent", "status", "stop", "store"]);
    expect(body).toMatchObject({ store, status: "stopped", stop: { reason: "succeeded" } });
    expect(query).toMatch(/^query:fix-failing-test-/);
    // The story and the live view went to stderr.
    expect(demo.stderr).toContain("warrant demo:");
  });

  it("run: a malformed --model is usage (2); a definition whose model cannot be made, or an invalid task pack, is refused (1)", async () => {
    expect((await cli(["run", PACK, "--model", "boss=openai:x", "--store", store])).code).toBe(2);
    const unknown = path.join(repoRoot, "test/fixtures/runtime/unknown-provider.task-pack.json");
    const refused = await cli(["run", unknown, "--store", store]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("definition/provider-unknown");
    expect(refused.stderr).toContain('"gemini"');
    const asJson = await cli(["run", unknown, "--json", "--store", store]);
    expect(asJson.code).toBe(1);
    expect(asJson.stdout).toBe("");
    const invalid = await cli(["run", write("pack.json", { schema: "nope" }), "--store", store]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/taskpack\//);
  });

  it("resume --json on a stopped loop prints {query, store, status, stop, spent} (0); an unknown loop is refused (1)", async () => {
    const r = await cli(["resume", query, "--json", "--store", store]);
    expect(r.code).toBe(0);
    const body = json(r) as Record<string, unknown>;
    expect(keys(body)).toEqual(["query", "spent", "status", "stop", "store"]);
    expect(body).toMatchObject({ query, status: "stopped", stop: { reason: "succeeded" } });
    const human = await cli(["resume", query, "--store", store]);
    expect(human.stdout.trim().split("\n").at(-1)).toBe(`query: ${query}`);
    expect((await cli(["resume", "query:none", "--store", store])).code).toBe(1);
  });

  it("worker needs a postgres:// store and a positive --concurrency (usage errors, 2)", async () => {
    expect((await cli(["worker", "--store", store, "--json"])).code).toBe(2);
    const zero = await cli([
      "worker",
      "--store",
      "postgres://x@127.0.0.1:1/x",
      "--concurrency",
      "0",
    ]);
    expect(zero.code).toBe(2);
  });
});

describe("loops, show, export", () => {
  it("loops --json prints [{query, state, stop?: {reason}, status, heldBy?, leaseUntil?}]", async () => {
    const r = await cli(["loops", "--json", "--store", store]);
    expect(r.code).toBe(0);
    const rows = json(r) as Record<string, unknown>[];
    expect(rows).toEqual([
      { query, state: "stopped", stop: { reason: "succeeded" }, status: "stopped" },
    ]);
    const emptyStore = `sqlite:${path.join(dir, "empty.db")}`;
    await ensureStore(emptyStore, dir);
    const empty = await cli(["loops", "--json", "--store", emptyStore]);
    expect(json(empty)).toEqual([]);
    expect((await cli(["loops", "--store", emptyStore])).stdout).toBe(
      `no loops in ${emptyStore}\n`,
    );
    const text = (await cli(["loops", "--store", store])).stdout.split("\n");
    expect(text[0]).toMatch(/^QUERY +STATE +STATUS +WAITING +HELD BY$/);
    expect(text[1]).toMatch(new RegExp(`^${query} +stopped \\(succeeded\\) +stopped +— +—$`));
  });

  it("show --json prints {loop, records: [{ref, kind}], usage} with the seed-valid loop; an unknown loop is refused (1)", async () => {
    const r = await cli(["show", query, "--json", "--store", store]);
    expect(r.code).toBe(0);
    const body = json(r) as {
      loop: LoopDocument;
      records: Record<string, unknown>[];
      usage: Record<string, unknown>;
    };
    expect(keys(body)).toEqual(["loop", "records", "usage"]);
    expect(keys(body.usage)).toEqual([
      "byRole",
      "cachedInputTokens",
      "inputTokens",
      "modelCalls",
      "outputTokens",
      "reasoningTokens",
    ]);
    // The scripted models report no tokens: one model call per passage, 0 tokens, but two in the
    // first implementer passage (it reads a file before it plans).
    const passages = body.records.filter((x) => x.kind === "transcript").length;
    expect(body.usage).toMatchObject({
      modelCalls: passages + 1,
      inputTokens: 0,
      outputTokens: 0,
    });
    loopValid(body.loop);
    expect(body.loop["query/id"]).toBe(query);
    expect(body.records.length).toBeGreaterThan(0);
    for (const rec of body.records) expect(keys(rec)).toEqual(["kind", "ref"]);
    const none = await cli(["show", "query:none", "--json", "--store", store]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("loop/not-opened");
  });

  it("export prints the seed-valid loop document, the same with --json; an unknown loop is refused (1)", async () => {
    const r = await cli(["export", query, "--store", store]);
    expect(r.code).toBe(0);
    loopValid(json(r));
    const shown = json(await cli(["show", query, "--json", "--store", store])) as {
      loop: unknown;
    };
    expect(json(r)).toEqual(shown.loop);
    expect((await cli(["export", query, "--json", "--store", store])).stdout).toBe(r.stdout);
    expect((await cli(["export", "query:none", "--store", store])).code).toBe(1);
  });
});

describe("operator acts: --json prints {ok, result?, code?, message}", () => {
  const refused = (r: CliResult, code: string) => {
    expect(r.code).toBe(1);
    const body = json(r) as Record<string, unknown>;
    expect(keys(body)).toEqual(["code", "message", "ok"]);
    expect(body).toMatchObject({ ok: false, code });
  };

  it("cancel of a stopped loop is a replay (0); of an unknown loop, refused (1)", async () => {
    const r = await cli(["cancel", query, "--json", "--store", store]);
    expect(r.code).toBe(0);
    const body = json(r) as Record<string, unknown>;
    expect(keys(body)).toEqual(["message", "ok", "result"]);
    expect(body).toMatchObject({ ok: true, result: "replayed" });
    refused(await cli(["cancel", "query:none", "--json", "--store", store]), "loop/not-opened");
  });

  it("renew of a stopped loop is refused (1); without exactly one of --deadline and --extend, or with a bad value, usage (2)", async () => {
    refused(
      await cli(["renew", query, "--extend", "60000", "--json", "--store", store]),
      "loop/not-open",
    );
    const usage = await each([
      ["renew", query, "--store", store],
      ["renew", query, "--deadline", "2030-01-01T00:00:00Z", "--extend", "5", "--store", store],
      ["renew", query, "--extend", "soon", "--store", store],
      ["renew", query, "--deadline", "tomorrow", "--store", store],
    ]);
    for (const u of usage) expect(u.code).toBe(2);
  });

  it("approve and deny name a run and a step: an unknown run or step is refused (1)", async () => {
    const proposal = (
      json(await cli(["show", query, "--json", "--store", store])) as {
        records: { ref: string; kind: string }[];
      }
    ).records.find((x) => x.kind === "proposal")?.ref as string;
    const unknown = `corpus-experiment:sha256:${"A".repeat(43)}`;
    for (const kind of ["approve", "deny"]) {
      refused(await cli([kind, unknown, "s1", "--json", "--store", store]), "loop/run-missing");
      refused(
        await cli([kind, proposal, "no-such-step", "--json", "--store", store]),
        "loop/run-missing",
      );
    }
  });

  it("approve of a run's real step on a stopped loop is refused (1): nothing waits for it", async () => {
    const proposals = (
      json(await cli(["show", query, "--json", "--store", store])) as {
        records: { ref: string; kind: string }[];
      }
    ).records.filter((x) => x.kind === "proposal");
    const last = proposals.at(-1)?.ref as string;
    refused(
      await cli(["approve", last, "fix-slugify", "--json", "--store", store]),
      "loop/already-stopped",
    );
  });

  it("answer on a stopped loop is refused (1)", async () => {
    refused(
      await cli(["answer", query, "yes", "--json", "--store", store]),
      "loop/already-stopped",
    );
  });
});

const pg = await postgresForTests();

describe.skipIf(!pg.enabled)("run --dispatch --json and worker --json (PostgreSQL)", () => {
  const schemas = new TestSchemas(pg.url, "cli_contract");
  const made: string[] = [];
  afterAll(async () => {
    for (const uri of made) {
      await schemas.sql(`DROP SCHEMA IF EXISTS "${TestSchemas.schemaOf(uri)}_jobs" CASCADE`);
    }
    await schemas.dropAll();
  });

  it("dispatch prints {query, store, status: dispatched}; the worker prints one JSON event a line", {
    timeout: 90_000,
  }, async () => {
    const pgStore = schemas.uri();
    made.push(pgStore);
    const models = ["implementer", "reviewer", "summarizer"].flatMap((r) => [
      "--model",
      scripted(r),
    ]);
    const d = await cli(["run", PACK, ...models, "--store", pgStore, "--dispatch", "--json"]);
    expect(d.code, d.stderr).toBe(0);
    const dispatched = json(d) as Record<string, unknown>;
    expect(keys(dispatched)).toEqual(["query", "status", "store"]);
    expect(dispatched.status).toBe("dispatched");
    const q = dispatched.query as string;

    const worker = spawn(
      process.execPath,
      [cliPath, "worker", "--store", pgStore, "--yes", "--json"],
      {
        cwd: dir,
        env: { ...process.env, NO_COLOR: "1" },
      },
    );
    let stdout = "";
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no end event: ${stdout}`)), 80_000);
        worker.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk;
          if (stdout.includes('"event":"end"')) {
            clearTimeout(timer);
            resolve();
          }
        });
        worker.on("close", () => reject(new Error(`worker ended: ${stdout}`)));
      });
    } finally {
      worker.kill("SIGTERM");
      await new Promise((r) => (worker.exitCode === null ? worker.on("close", r) : r(0)));
    }
    const events = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events[0]).toMatchObject({ event: "started", query: null, store: dispatched.store });
    expect(events).toContainEqual(expect.objectContaining({ event: "start", query: q }));
    expect(events.find((e) => e.event === "end")).toMatchObject({
      query: q,
      status: "stopped",
      stop: { reason: "succeeded" },
    });
    // The SIGTERM: drained and stopped.
    expect(events.at(-1)).toMatchObject({ event: "shutdown", phase: "stopped", query: null });
    for (const e of events) {
      expect(e.at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
      expect(e).toHaveProperty("query");
    }
  });
});
