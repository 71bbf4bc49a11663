// A user's own git repository as the workspace: `warrant run` fixes its failing test, `warrant
// diff` shows exactly the changed source file, `warrant apply --git` leaves a new branch whose one
// commit makes the tests pass (with its trailers), and a second clone edited meanwhile is refused
// `apply/diverged` and left byte-identical. Then a Python project whose tests write __pycache__
// verifies with the default `ignore`, and not without it.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, runCli } from "../helpers/cli.js";
import { scripted } from "./cli-run.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-apply-"));
  dirs.push(d);
  return d;
}

const IDENTITY = {
  GIT_AUTHOR_NAME: "Dev",
  GIT_AUTHOR_EMAIL: "dev@example.org",
  GIT_COMMITTER_NAME: "Dev",
  GIT_COMMITTER_EMAIL: "dev@example.org",
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, ...IDENTITY } });

/** Every file under `dir` (without .git/) with a digest of its bytes: to prove nothing moved. */
function treeDigest(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (name === ".git") continue;
      if (statSync(p).isDirectory()) walk(p);
      else out[path.relative(dir, p)] = createHash("sha256").update(readFileSync(p)).digest("hex");
    }
  };
  walk(dir);
  return out;
}

const EXAMPLE = path.join(repoRoot, "examples/fix-failing-test");
const models = ["implementer", "reviewer", "summarizer"].flatMap((r) => ["--model", scripted(r)]);

describe("a git repository as the workspace, and the change applied to it", () => {
  let base: string;
  let repo: string;
  let pack: string;
  let store: string;
  let query: string;

  beforeAll(async () => {
    base = tempDir();
    repo = path.join(base, "project");
    cpSync(path.join(EXAMPLE, "workspace"), repo, { recursive: true });
    // Build output the baseline must never carry: ignored by the repository.
    writeFileSync(path.join(repo, ".gitignore"), "node_modules/\n");
    mkdirSync(path.join(repo, "node_modules/left-pad"), { recursive: true });
    writeFileSync(path.join(repo, "node_modules/left-pad/index.js"), "module.exports = 1;\n");
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "A slugify with a failing test");
    const doc = JSON.parse(readFileSync(path.join(EXAMPLE, "task-pack.json"), "utf8"));
    doc.workspace = repo;
    for (const role of Object.keys(doc.agents))
      doc.agents[role] = path.resolve(EXAMPLE, doc.agents[role]);
    doc.commands["no-repository-files"] = {
      effect: "observation",
      argv: ["sh", "-c", "test ! -e .git && test ! -e node_modules && test -e .gitignore"],
      args: { type: "object", additionalProperties: false, properties: {} },
      timeoutMs: 5000,
      maxOutputBytes: 4096,
    };
    doc.verifier.checks.push({
      name: "baseline-without-git-and-ignored",
      command: "no-repository-files",
    });
    pack = path.join(base, "task-pack.json");
    writeFileSync(pack, JSON.stringify(doc));
    store = `sqlite:${path.join(base, "ledger.db")}`;
    const run = await runCli(["run", pack, "--yes", "--json", "--store", store, ...models], {
      cwd: base,
      timeoutMs: 120_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { query: string; stop: { reason: string } };
    expect(out.stop.reason).toBe("succeeded");
    query = out.query;
  }, 180_000);

  it("diff shows exactly the changed source file; --json has the shape, digests and the same diff", async () => {
    const plain = await runCli(["diff", query, "--store", store], { cwd: base });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout.match(/^diff --git .*$/gm)).toEqual([
      "diff --git a/src/slugify.js b/src/slugify.js",
    ]);
    expect(plain.stdout).toContain("--- a/src/slugify.js\n+++ b/src/slugify.js\n@@ ");
    expect(plain.stdout).not.toContain("node_modules");
    const json = await runCli(["diff", query, "--json", "--store", store], { cwd: base });
    const change = JSON.parse(json.stdout);
    expect(Object.keys(change).sort()).toEqual(["baseline", "diff", "files", "query", "run"]);
    expect(change.query).toBe(query);
    expect(change.files).toEqual([
      {
        path: "src/slugify.js",
        status: "modified",
        before: expect.stringMatching(/^sha256:/),
        after: expect.stringMatching(/^sha256:/),
      },
    ]);
    expect(change.diff).toBe(plain.stdout);
    // The ledger with its new changeset record still checks.
    const check = await runCli(["loop", "check", query, "--store", store], { cwd: base });
    expect(check.code, check.stdout + check.stderr).toBe(0);
  });

  it("apply --to REPO --git: a new branch with one commit that makes the tests pass, with trailers; main stays checked out", async () => {
    const second = path.join(base, "clone");
    git(base, "clone", "-q", repo, second);
    const r = await runCli(["apply", query, "--to", repo, "--git", "--json", "--store", store], {
      cwd: base,
    });
    expect(r.code, r.stderr).toBe(0);
    const applied = JSON.parse(r.stdout);
    const branch = `warrant/${query.slice("query:".length)}`;
    expect(applied).toMatchObject({
      query,
      to: repo,
      result: "applied",
      branch,
      files: [{ path: "src/slugify.js", status: "modified" }],
    });
    expect(git(repo, "branch", "--show-current").trim()).toBe("main");
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(git(repo, "rev-list", "--count", `main..${branch}`).trim()).toBe("1");
    expect(git(repo, "diff", "--name-only", "main", branch).trim()).toBe("src/slugify.js");
    const message = git(repo, "log", "-1", "--format=%B", branch);
    expect(message).toContain(`Warrant-Query: ${query}\n`);
    expect(message).toMatch(
      /^Warrant-Execution: corpus-task-pack-execution:sha256:[A-Za-z0-9_-]{43}$/m,
    );
    for (const role of ["implementer", "reviewer", "summarizer"])
      expect(message).toMatch(new RegExp(`^Warrant-Agent: ${role} \\S+$`, "m"));
    // The branch's tests pass, in a checkout of its own; main's still fail.
    const check = path.join(base, "branch-checkout");
    git(repo, "worktree", "add", "-q", check, branch);
    execFileSync("node", ["--test", "test/"], { cwd: check, stdio: "pipe" });
    expect(() => execFileSync("node", ["--test", "test/"], { cwd: repo, stdio: "pipe" })).toThrow();
    // The same run again: already applied, exit 0.
    const again = await runCli(
      ["apply", query, "--to", repo, "--git", "--json", "--store", store],
      { cwd: base },
    );
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      result: "already-applied",
      commit: applied.commit,
    });

    // The second clone's file was edited meanwhile: refused, nothing written.
    writeFileSync(path.join(second, "src/slugify.js"), "export const slugify = (t) => t;\n");
    const before = treeDigest(second);
    const diverged = await runCli(["apply", query, "--to", second, "--store", store], {
      cwd: base,
    });
    expect(diverged.code).toBe(1);
    expect(diverged.stderr).toContain("apply/diverged");
    expect(diverged.stderr).toContain("src/slugify.js");
    expect(treeDigest(second)).toEqual(before);
    // Committed there, and applied with --git: refused the same way, no branch made.
    git(second, "commit", "-qam", "Their own slugify");
    const heads = git(second, "for-each-ref", "refs/heads");
    const committed = treeDigest(second);
    const json = await runCli(
      ["apply", query, "--to", second, "--git", "--json", "--store", store],
      { cwd: base },
    );
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: "apply/diverged" });
    expect(git(second, "for-each-ref", "refs/heads")).toBe(heads);
    expect(treeDigest(second)).toEqual(committed);
    expect(git(second, "status", "--porcelain")).toBe("");
  }, 60_000);

  it("refusals: a dirty work tree (1), an unknown run (1), --branch without --git (2)", async () => {
    const dirty = path.join(base, "dirty");
    git(base, "clone", "-q", repo, dirty);
    writeFileSync(path.join(dirty, "scratch.txt"), "wip\n");
    const r = await runCli(["apply", query, "--to", dirty, "--git", "--store", store], {
      cwd: base,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("apply/dirty-worktree");
    const unknown = await runCli(
      ["diff", query, "--run", "corpus-experiment:sha256:none", "--store", store],
      { cwd: base },
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("diff/run-unknown");
    const usage = await runCli(["apply", query, "--branch", "x", "--store", store], { cwd: base });
    expect(usage.code).toBe(2);
  });
});

describe("a loop that was not verified", () => {
  it("diff and apply exit 1 with not-verified; a loop the store lacks: loop/not-opened", async () => {
    const cwd = tempDir();
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    // The implementer's script ends after its first (observation) plan: no verified run.
    const implementer = path.join(cwd, "implementer.jsonl");
    writeFileSync(
      implementer,
      `${readFileSync(path.join(EXAMPLE, "scripted/implementer.jsonl"), "utf8").split("\n").slice(0, 2).join("\n")}\n`,
    );
    const run = await runCli(
      [
        "run",
        path.join(EXAMPLE, "task-pack.json"),
        "--yes",
        "--json",
        "--store",
        store,
        "--model",
        `implementer=scripted:${implementer}`,
        "--model",
        scripted("reviewer"),
        "--model",
        scripted("summarizer"),
      ],
      { cwd, timeoutMs: 120_000 },
    );
    const query = (JSON.parse(run.stdout) as { query: string }).query;
    const diff = await runCli(["diff", query, "--store", store], { cwd });
    expect(diff.code).toBe(1);
    expect(diff.stderr).toContain("diff/not-verified");
    const apply = await runCli(["apply", query, "--to", cwd, "--json", "--store", store], { cwd });
    expect(apply.code).toBe(1);
    expect(JSON.parse(apply.stdout)).toMatchObject({ ok: false, code: "apply/not-verified" });
    const none = await runCli(["diff", "query:nowhere", "--store", store], { cwd });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("loop/not-opened");
  }, 120_000);
});

const PY_TEST = `import unittest

from calc import add


class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
`;

function line(type: string, payload: unknown): string {
  return `${JSON.stringify({ kind: "message", summary: type, tool_calls: [], message: { type, payload_json: JSON.stringify(payload), paper_ref: null } })}\n`;
}

describe("a Python project whose tests write __pycache__", () => {
  function pythonPack(
    dir: string,
    ignore?: readonly string[],
    env?: Readonly<Record<string, string>>,
  ): string {
    const ws = path.join(dir, "workspace");
    mkdirSync(path.join(ws, "tests"), { recursive: true });
    writeFileSync(path.join(ws, "calc.py"), "def add(a, b):\n    return a - b\n");
    writeFileSync(path.join(ws, "tests/__init__.py"), "");
    writeFileSync(path.join(ws, "tests/test_calc.py"), PY_TEST);
    const tests = {
      effect: "observation",
      argv: ["python3", "-m", "unittest", "discover", "-s", "tests", "-t", "."],
      args: { type: "object", additionalProperties: false, properties: {} },
      timeoutMs: 30000,
      maxOutputBytes: 65536,
      ...(env === undefined ? {} : { env }),
    };
    const doc = {
      schema: "warrant/task-pack.v1",
      name: "fix-add",
      task: "add() subtracts; make the tests pass without changing them.",
      workspace: "workspace",
      agents: Object.fromEntries(
        ["implementer", "reviewer", "summarizer"].map((r) => [
          r,
          path.join(repoRoot, `examples/agents/${r}.json`),
        ]),
      ),
      commands: { "run-tests": tests },
      patchPolicy: { allow: ["calc.py"], maxBytes: 4096 },
      verifier: {
        timeoutMs: 60000,
        checks: [
          { name: "tests-pass", command: "run-tests" },
          { name: "tests-unchanged", unchanged: ["tests/**"] },
          { name: "only-allowed-changed", onlyAllowedChanged: true },
        ],
      },
      hil: "none",
      admission: "auto",
      limits: {
        "max/passages": 4,
        "max/cycles": 1,
        "max/experiments": 1,
        "max/wall-time-ms": 120000,
      },
      ...(ignore === undefined ? {} : { ignore }),
    };
    writeFileSync(path.join(dir, "task-pack.json"), JSON.stringify(doc));
    const plan = {
      hypothesis: "add() subtracts its arguments instead of adding them.",
      steps: [
        { id: "run-tests", action: "observe", profile: "run-tests" },
        {
          id: "fix-add",
          action: "patch",
          path: "calc.py",
          content: "def add(a, b):\n    return a + b\n",
        },
      ],
      expected_checks: ["tests-pass", "tests-unchanged", "only-allowed-changed"],
    };
    writeFileSync(path.join(dir, "implementer.jsonl"), line("Plan", plan));
    writeFileSync(
      path.join(dir, "reviewer.jsonl"),
      line("Verdict", { decision: "accept", findings: [] }),
    );
    writeFileSync(
      path.join(dir, "summarizer.jsonl"),
      line("Result", { summary: "add() adds.", outcome: "verified", evidence: [] }),
    );
    return path.join(dir, "task-pack.json");
  }

  const run = (dir: string, pack: string) =>
    runCli(
      [
        "run",
        pack,
        "--json",
        "--store",
        `sqlite:${path.join(dir, "ledger.db")}`,
        ...["implementer", "reviewer", "summarizer"].flatMap((r) => [
          "--model",
          `${r}=scripted:${path.join(dir, `${r}.jsonl`)}`,
        ]),
      ],
      { cwd: dir, timeoutMs: 120_000 },
    );

  it("verifies with the default ignore; its diff holds calc.py alone", async () => {
    const dir = tempDir();
    const r = await run(dir, pythonPack(dir));
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { query: string; stop: { reason: string } };
    expect(out.stop.reason).toBe("succeeded");
    const diff = await runCli(
      ["diff", out.query, "--json", "--store", `sqlite:${path.join(dir, "ledger.db")}`],
      { cwd: dir },
    );
    expect(JSON.parse(diff.stdout).files.map((f: { path: string }) => f.path)).toEqual(["calc.py"]);
  }, 120_000);

  it("with ignore: [] the byte-code the tests write counts as a change, and verification fails", async () => {
    const dir = tempDir();
    const r = await run(dir, pythonPack(dir, []));
    const out = JSON.parse(r.stdout) as { stop?: { reason: string } };
    expect(out.stop?.reason).not.toBe("succeeded");
    expect(r.stderr).toContain("check tests-unchanged: failed");
    // The run report in the ledger says why: the byte-code the tests wrote under tests/.
    const query = (JSON.parse(r.stdout) as { query: string }).query;
    const bundle = await runCli(
      ["export", query, "--bundle", "--store", `sqlite:${path.join(dir, "ledger.db")}`],
      { cwd: dir },
    );
    expect(bundle.stdout).toContain("changed: tests/__pycache__/");
  }, 120_000);

  it("with ignore: [] and the profile's env PYTHONDONTWRITEBYTECODE=1, no byte-code is written and it verifies", async () => {
    const dir = tempDir();
    const r = await run(dir, pythonPack(dir, [], { PYTHONDONTWRITEBYTECODE: "1" }));
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { stop: { reason: string } }).stop.reason).toBe("succeeded");
  }, 120_000);
});
