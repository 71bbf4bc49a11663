// Real projects run in the sandbox (docs/projects.md), as a user runs them: a git repository whose
// dependencies live in ignored folders, made here without network — a Node package with a dev
// dependency in node_modules/, a Python package with a virtual environment in .venv/ (made with
// the Python on PATH, its install a toolchain when it lives outside the system folders) — each run
// with `warrant run` and applied with `apply --git`; a made-up toolchain outside the workspace used
// by a profile. Left out of the pack, the dependency or toolchain fails with a clear error.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot, runCli } from "../helpers/cli.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-projects-"));
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

type Doc = Record<string, unknown> & {
  agents: Record<string, string>;
  commands: Record<string, unknown>;
  verifier: { checks: unknown[] };
};

/** The example's workspace as a fresh git repository, and its pack pointing at it. */
function projectFrom(example: string, base: string): { repo: string; doc: Doc } {
  const dir = path.join(repoRoot, "examples", example);
  const repo = path.join(base, "project");
  cpSync(path.join(dir, "workspace"), repo, { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "A package with a failing test");
  const doc = JSON.parse(readFileSync(path.join(dir, "task-pack.json"), "utf8")) as Doc;
  doc.workspace = repo;
  for (const role of Object.keys(doc.agents))
    doc.agents[role] = path.resolve(dir, doc.agents[role] as string);
  return { repo, doc };
}

function writePack(base: string, name: string, doc: Doc): string {
  const file = path.join(base, name);
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

const modelsOf = (example: string) =>
  ["implementer", "reviewer", "summarizer"].flatMap((r) => [
    "--model",
    `${r}=scripted:${path.join(repoRoot, "examples", example, "scripted", `${r}.jsonl`)}`,
  ]);

async function runAndApply(example: string, base: string, pack: string, repo: string) {
  const store = `sqlite:${path.join(base, "ledger.db")}`;
  const run = await runCli(
    ["run", pack, "--yes", "--json", "--store", store, ...modelsOf(example)],
    {
      cwd: base,
      timeoutMs: 150_000,
    },
  );
  expect(run.code, run.stdout + run.stderr).toBe(0);
  const out = JSON.parse(run.stdout) as { query: string; stop: { reason: string } };
  expect(out.stop.reason).toBe("succeeded");
  const applied = await runCli(
    ["apply", out.query, "--to", repo, "--git", "--json", "--store", store],
    { cwd: base },
  );
  expect(applied.code, applied.stderr).toBe(0);
  const result = JSON.parse(applied.stdout) as { result: string; branch: string };
  expect(result.result).toBe("applied");
  // Nothing of the dependency folders reached the change or the commit.
  expect(git(repo, "status", "--porcelain")).toBe("");
  return { query: out.query, store, branch: result.branch, live: run.stderr };
}

/** What `npm install --install-links` leaves in node_modules/: ignored by the repository. */
function installDevDependency(repo: string): void {
  cpSync(
    path.join(repoRoot, "examples/node-project/text-expect"),
    path.join(repo, "node_modules/text-expect"),
    { recursive: true },
  );
}

/** A profile running the made-up toolchain's program. */
const TIDY = {
  effect: "observation",
  argv: ["mytool", "src/title-case.js"],
  args: { type: "object", additionalProperties: false, properties: {} },
  timeoutMs: 10000,
  maxOutputBytes: 4096,
};

/** A made-up toolchain outside the workspace: bin/mytool checks a file has no tab. */
function madeUpToolchain(base: string): string {
  const tc = path.join(base, "toolchains", "mytool-1.0");
  mkdirSync(path.join(tc, "bin"), { recursive: true });
  writeFileSync(
    path.join(tc, "bin/mytool"),
    '#!/bin/sh\nif grep -q "$(printf \'\\t\')" "$1"; then echo "mytool: $1 has a tab" >&2; exit 1; fi\necho "mytool: $1 is tidy"\n',
    { mode: 0o755 },
  );
  return tc;
}

describe("a Node project with a dev dependency in an ignored node_modules/", () => {
  it("runs its tests in the sandbox with node_modules as a dependency and a toolchain's program; apply --git commits only the fix", async () => {
    const base = tempDir();
    const { repo, doc } = projectFrom("node-project", base);
    installDevDependency(repo);
    expect(git(repo, "status", "--porcelain")).toBe("");
    const tc = madeUpToolchain(base);
    doc.toolchains = [tc];
    doc.commands.tidy = TIDY;
    doc.verifier.checks.push({ name: "tidy", command: "tidy" });
    const pack = writePack(base, "task-pack.json", doc);

    const check = await runCli(["run", pack, "--check", "--json", ...modelsOf("node-project")], {
      cwd: base,
      timeoutMs: 60_000,
    });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    const report = JSON.parse(check.stdout) as { checks: { name: string; notes: string[] }[] };
    expect(report.checks.find((c) => c.name === "commands")?.notes).toEqual([
      "run-tests: node found",
      "tidy: mytool found",
    ]);

    const { branch, live } = await runAndApply("node-project", base, pack, repo);
    expect(live).toContain("check tidy: passed");
    expect(git(repo, "diff", "--name-only", "main", branch).trim()).toBe("src/title-case.js");
    const checkout = path.join(base, "branch-checkout");
    git(repo, "worktree", "add", "-q", checkout, branch);
    cpSync(path.join(repo, "node_modules"), path.join(checkout, "node_modules"), {
      recursive: true,
    });
    execFileSync("node", ["--test", "test/"], { cwd: checkout, stdio: "pipe" });
    // The host's node_modules is as it was.
    expect(readFileSync(path.join(repo, "node_modules/text-expect/index.js"), "utf8")).toBe(
      readFileSync(path.join(repoRoot, "examples/node-project/text-expect/index.js"), "utf8"),
    );
  }, 240_000);

  it("without dependencies the suite cannot find its dev dependency, and says so; without the toolchain run --check names the missing program", async () => {
    const base = tempDir();
    const { repo, doc } = projectFrom("node-project", base);
    installDevDependency(repo);
    delete doc.dependencies;
    const pack = writePack(base, "no-deps.json", doc);
    const store = `sqlite:${path.join(base, "ledger.db")}`;
    const run = await runCli(
      ["run", pack, "--yes", "--json", "--store", store, ...modelsOf("node-project")],
      { cwd: base, timeoutMs: 150_000 },
    );
    expect(run.code).not.toBe(0);
    // The check's detail carries the test runner's own words.
    expect(run.stderr).toMatch(/check tests-pass: failed\n\s+run-tests exited 1: /);
    expect(run.stderr).toContain("Cannot find package 'text-expect'");

    doc.dependencies = ["node_modules"];
    doc.commands.tidy = TIDY;
    const noTool = writePack(base, "no-toolchain.json", doc);
    const check = await runCli(["run", noTool, "--check", ...modelsOf("node-project")], {
      cwd: base,
      timeoutMs: 60_000,
    });
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/FAIL commands\n/);
    expect(check.stdout).toContain("preflight/command-not-found");
    expect(check.stdout).toContain("the command profile tidy runs mytool");
  }, 240_000);
});

describe("a Python project with a virtual environment in an ignored .venv/", () => {
  /** A venv made with the Python on PATH, its dependency copied in as pip would install it. */
  function venv(repo: string): string[] {
    execFileSync("python3", ["-m", "venv", "--without-pip", ".venv"], { cwd: repo });
    const python = path.join(repo, ".venv/bin/python");
    const [purelib, prefix] = execFileSync(
      python,
      [
        "-c",
        "import sys, sysconfig; print(sysconfig.get_paths()['purelib']); print(sys.base_prefix)",
      ],
      { encoding: "utf8" },
    )
      .trim()
      .split("\n") as [string, string];
    cpSync(
      path.join(repoRoot, "examples/python-venv/textcase/textcase"),
      path.join(purelib, "textcase"),
      { recursive: true },
    );
    const real = execFileSync("realpath", [prefix], { encoding: "utf8" }).trim();
    // A Python of the system is in the sandbox already; one from pyenv and the like is a toolchain.
    return real === "/usr" || real.startsWith("/usr/") ? [] : [real];
  }

  it("runs its unit tests with .venv as a dependency; apply --git commits only the fix", async () => {
    const base = tempDir();
    const { repo, doc } = projectFrom("python-venv", base);
    const toolchains = venv(repo);
    expect(git(repo, "status", "--porcelain")).toBe("");
    if (toolchains.length > 0) doc.toolchains = toolchains;
    const pack = writePack(base, "task-pack.json", doc);
    const { branch } = await runAndApply("python-venv", base, pack, repo);
    expect(git(repo, "diff", "--name-only", "main", branch).trim()).toBe("wordcount/counts.py");
    expect(git(repo, "show", `${branch}:wordcount/counts.py`)).toContain("text.split()");
    // The host's venv gained nothing (no byte-code written through the sandbox).
    expect(git(repo, "status", "--porcelain", "--ignored")).toBe("!! .venv/\n");
  }, 240_000);

  it("without dependencies run --check refuses: the profile's program is not in the sandbox", async () => {
    const base = tempDir();
    const { repo, doc } = projectFrom("python-venv", base);
    const toolchains = venv(repo);
    if (toolchains.length > 0) doc.toolchains = toolchains;
    delete doc.dependencies;
    const pack = writePack(base, "no-deps.json", doc);
    const check = await runCli(["run", pack, "--check", "--json", ...modelsOf("python-venv")], {
      cwd: base,
      timeoutMs: 60_000,
    });
    expect(check.code).toBe(1);
    const report = JSON.parse(check.stdout) as {
      problems: { check: string; code: string; path: string; message: string }[];
    };
    expect(report.problems).toEqual([
      {
        check: "commands",
        code: "preflight/command-not-found",
        path: "/commands/run-tests/argv/0",
        message: expect.stringContaining(
          "the command profile run-tests runs .venv/bin/python, which the sandbox does not have in the workspace",
        ),
        usage: false,
      },
    ]);
    // A listed dependency that is not there is the pack's error.
    doc.dependencies = ["venv"];
    const missing = await runCli(
      ["run", writePack(base, "missing.json", doc), "--check", ...modelsOf("python-venv")],
      { cwd: base },
    );
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain("taskpack/dependency-missing");
  }, 240_000);
});
