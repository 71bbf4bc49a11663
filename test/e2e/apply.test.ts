// A user's own git repository as the workspace: `warrant run` fixes its failing test, `warrant
// diff` shows exactly the changed source file, `warrant apply --git` leaves a new branch whose one
// commit makes the tests pass (with its trailers), and a second clone edited meanwhile is refused
// `apply/diverged` and left byte-identical. A hostile change (a build output under an ignored link
// out of the repository, a file name holding a newline and escapes) is shown quoted, applies with
// git, and is never written through the link; a changeset row edited in the store fails the audit.
// Then a Python project whose tests write __pycache__ verifies with the default `ignore`, and not
// without it.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliPath, repoRoot, runCli } from "../helpers/cli.js";
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
      if (lstatSync(p).isSymbolicLink()) out[path.relative(dir, p)] = `-> ${readlinkSync(p)}`;
      else if (statSync(p).isDirectory()) walk(p);
      else out[path.relative(dir, p)] = createHash("sha256").update(readFileSync(p)).digest("hex");
    }
  };
  walk(dir);
  return out;
}

const EXAMPLE = path.join(repoRoot, "examples/fix-failing-test");
const models = ["implementer", "reviewer", "summarizer"].flatMap((r) => ["--model", scripted(r)]);

/**
 * The example's workspace as a git repository `base/project` (its `.gitignore`, then what `ignored`
 * adds, then one commit), and the example's pack document pointing at it.
 */
function exampleRepo(base: string, gitignore: string, ignored: (repo: string) => void) {
  const repo = path.join(base, "project");
  cpSync(path.join(EXAMPLE, "workspace"), repo, { recursive: true });
  writeFileSync(path.join(repo, ".gitignore"), gitignore);
  ignored(repo);
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "A slugify with a failing test");
  const doc = JSON.parse(readFileSync(path.join(EXAMPLE, "task-pack.json"), "utf8"));
  doc.workspace = repo;
  for (const role of Object.keys(doc.agents))
    doc.agents[role] = path.resolve(EXAMPLE, doc.agents[role]);
  return { repo, doc };
}

describe("a git repository as the workspace, and the change applied to it", () => {
  let base: string;
  let repo: string;
  let pack: string;
  let store: string;
  let query: string;

  beforeAll(async () => {
    base = tempDir();
    // Build output the baseline must never carry: ignored by the repository.
    const made = exampleRepo(base, "node_modules/\n", (dir) => {
      mkdirSync(path.join(dir, "node_modules/left-pad"), { recursive: true });
      writeFileSync(path.join(dir, "node_modules/left-pad/index.js"), "module.exports = 1;\n");
    });
    repo = made.repo;
    const doc = made.doc;
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
    // An untracked file is no obstacle; a tracked file changed and not committed is.
    writeFileSync(path.join(dirty, "scratch.txt"), "wip\n");
    writeFileSync(path.join(dirty, "package.json"), "{}\n");
    const r = await runCli(["apply", query, "--to", dirty, "--git", "--store", store], {
      cwd: base,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("apply/dirty-worktree");
    expect(r.stderr).toContain("package.json");
    expect(r.stderr).not.toContain("scratch.txt");
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

/** The example's slugify, fixed: the tests pass with it. */
const FIXED_SLUGIFY = `// Turns a title into a URL slug: lower-case ASCII letters and digits joined by single hyphens.
export function slugify(title) {
  return title
    .normalize("NFKD")
    .replace(/[\\u0300-\\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
`;
/** A name that would forge a header line and clear the screen, were it printed raw. */
const HOSTILE_NAME = "evil\ndiff --git a-owned b-owned\u001b[2J.txt";
/** Content that retitles the terminal and turns its text red, were it printed raw. */
const HOSTILE_CONTENT = "red \u001b[31mtext\u001b]0;owned\u0007\n";

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** `warrant ARGS` on a fresh pseudo-terminal (util-linux `script`): everything it showed. */
function onTerminal(args: readonly string[], cwd: string): Promise<string> {
  const command = `exec ${[process.execPath, cliPath, ...args].map(q).join(" ")}`;
  return new Promise((resolve, reject) => {
    const proc = spawn("script", ["-qefc", command, "/dev/null"], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", TERM: "xterm" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    proc.stdout.setEncoding("utf8").on("data", (d: string) => {
      screen += d;
    });
    const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
    proc.on("error", reject);
    proc.on("close", () => {
      clearTimeout(timer);
      resolve(screen);
    });
    proc.stdin.end();
  });
}

describe("a hostile change: a build under an ignored link out of the repository, a name full of escapes", () => {
  let base: string;
  let repo: string;
  let store: string;
  let query: string;

  beforeAll(async () => {
    base = tempDir();
    mkdirSync(path.join(base, "elsewhere"));
    // The build link the baseline leaves out (ignored): the run's build/ is a folder of its own.
    const made = exampleRepo(base, "build\n", (dir) =>
      symlinkSync("../elsewhere", path.join(dir, "build")),
    );
    repo = made.repo;
    const doc = made.doc;
    doc.hil = "none";
    doc.commands.build = {
      effect: "mutation",
      argv: [
        "sh",
        "-c",
        `mkdir -p build/out && printf 'built\\n' > build/out/artifact.txt && printf '%s' "$CONTENT" > "$NAME"`,
      ],
      env: { NAME: HOSTILE_NAME, CONTENT: HOSTILE_CONTENT },
      args: { type: "object", additionalProperties: false, properties: {} },
      timeoutMs: 10000,
      maxOutputBytes: 4096,
    };
    doc.verifier.checks = [{ name: "tests-pass", command: "run-tests" }];
    writeFileSync(path.join(base, "task-pack.json"), JSON.stringify(doc));
    const plan = {
      hypothesis: "Collapse separator runs and fold accents; build the project.",
      steps: [
        { id: "read-slugify", action: "observe", read: ["src/slugify.js"] },
        { id: "fix-slugify", action: "patch", path: "src/slugify.js", content: FIXED_SLUGIFY },
        { id: "build", action: "command", profile: "build", args: {} },
      ],
      expected_checks: ["tests-pass"],
    };
    writeFileSync(path.join(base, "implementer.jsonl"), line("Plan", plan));
    writeFileSync(
      path.join(base, "reviewer.jsonl"),
      line("Verdict", { decision: "accept", findings: [] }),
    );
    writeFileSync(
      path.join(base, "summarizer.jsonl"),
      line("Result", { summary: "Slugify fixed and built.", outcome: "verified", evidence: [] }),
    );
    store = `sqlite:${path.join(base, "ledger.db")}`;
    const run = await runCli(
      [
        "run",
        path.join(base, "task-pack.json"),
        "--yes",
        "--json",
        "--store",
        store,
        ...["implementer", "reviewer", "summarizer"].flatMap((r) => [
          "--model",
          `${r}=scripted:${path.join(base, `${r}.jsonl`)}`,
        ]),
      ],
      { cwd: base, timeoutMs: 120_000 },
    );
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const out = JSON.parse(run.stdout) as { query: string; stop: { reason: string } };
    expect(out.stop.reason).toBe("succeeded");
    query = out.query;
  }, 180_000);

  it("diff quotes the name as git does (no forged header); piped it is byte for byte and git apply takes it", async () => {
    const json = JSON.parse(
      (await runCli(["diff", query, "--json", "--store", store], { cwd: base })).stdout,
    );
    expect(json.files.map((f: { path: string }) => f.path)).toEqual([
      "build/out/artifact.txt",
      HOSTILE_NAME,
      "src/slugify.js",
    ]);
    const piped = await runCli(["diff", query, "--store", store], { cwd: base });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout.match(/^diff --git .*$/gm)).toEqual([
      "diff --git a/build/out/artifact.txt b/build/out/artifact.txt",
      'diff --git "a/evil\\ndiff --git a-owned b-owned\\033[2J.txt" "b/evil\\ndiff --git a-owned b-owned\\033[2J.txt"',
      "diff --git a/src/slugify.js b/src/slugify.js",
    ]);
    expect(piped.stdout).toContain(`\n+${HOSTILE_CONTENT}`);
    // A checkout without the link: git applies the diff and gets the run's bytes.
    const copy = path.join(base, "copy-for-git-apply");
    git(base, "clone", "-q", repo, copy);
    execFileSync("git", ["apply", "-"], { cwd: copy, input: piped.stdout });
    expect(readFileSync(path.join(copy, HOSTILE_NAME), "utf8")).toBe(HOSTILE_CONTENT);
    expect(readFileSync(path.join(copy, "src/slugify.js"), "utf8")).toBe(FIXED_SLUGIFY);
  });

  it.skipIf(spawnSync("script", ["--version"], { stdio: "ignore" }).status !== 0)(
    "diff on a terminal: control characters in contents escaped, no raw ESC byte",
    async () => {
      const screen = await onTerminal(["diff", query, "--store", store], base);
      expect(screen).toContain("diff --git a/src/slugify.js b/src/slugify.js");
      expect(screen).toContain("+red \\x1b[31mtext\\x1b]0;owned\\x07");
      expect(screen).not.toContain("\u001b");
      expect(screen).not.toContain("\u0007");
    },
  );

  it("apply through the ignored link: apply/outside for the default target and for --to; nothing written on either side", async () => {
    const clone = path.join(base, "clone");
    git(base, "clone", "-q", repo, clone);
    mkdirSync(path.join(base, "elsewhere-2"));
    symlinkSync("../elsewhere-2", path.join(clone, "build"));
    const before = { repo: treeDigest(repo), clone: treeDigest(clone) };
    for (const target of [[], ["--to", clone]]) {
      const r = await runCli(["apply", query, ...target, "--json", "--store", store], {
        cwd: base,
      });
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "apply/outside" });
      expect(r.stderr).toContain("build");
    }
    expect(readdirSync(path.join(base, "elsewhere"))).toEqual([]);
    expect(readdirSync(path.join(base, "elsewhere-2"))).toEqual([]);
    expect(treeDigest(repo)).toEqual(before.repo);
    expect(treeDigest(clone)).toEqual(before.clone);
    // Without the link, the same change applies, the hostile name written as it is.
    rmSync(path.join(clone, "build"));
    const applied = await runCli(["apply", query, "--to", clone, "--store", store], { cwd: base });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain("evil\\ndiff --git a-owned b-owned\\x1b[2J.txt");
    expect(applied.stdout).not.toContain("\u001b");
    expect(readFileSync(path.join(clone, HOSTILE_NAME), "utf8")).toBe(HOSTILE_CONTENT);
    expect(readFileSync(path.join(clone, "build/out/artifact.txt"), "utf8")).toBe("built\n");
  });

  it("a changeset row edited in the store to ../../x.txt: apply/audit-failed, nothing written", async () => {
    const copy = path.join(base, "tampered.db");
    cpSync(path.join(base, "ledger.db"), copy);
    const db = new Database(copy);
    const row = db
      .prepare("SELECT ref, body FROM warrant_records WHERE kind = 'changeset'")
      .get() as {
      ref: string;
      body: string;
    };
    const body = JSON.parse(row.body) as { files: { path: string }[] };
    (body.files[0] as { path: string }).path = "../../x.txt";
    db.prepare("UPDATE warrant_records SET body = ? WHERE ref = ?").run(
      JSON.stringify(body),
      row.ref,
    );
    db.close();
    const target = path.join(base, "a", "b", "target");
    mkdirSync(path.dirname(target), { recursive: true });
    git(base, "clone", "-q", repo, target);
    const before = treeDigest(target);
    const r = await runCli(
      ["apply", query, "--to", target, "--json", "--store", `sqlite:${copy}`],
      {
        cwd: base,
      },
    );
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { code: string; message: string };
    expect(out.code).toBe("apply/audit-failed");
    expect(out.message).toContain("store/record-mismatch");
    expect(existsSync(path.join(base, "a", "x.txt"))).toBe(false);
    expect(treeDigest(target)).toEqual(before);
  });
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
