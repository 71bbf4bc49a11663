// loopChange and applyChange over a loop driven with function models and the fake sandbox: the
// verified change read back from its changeset record, shown as a diff and applied to a folder
// (all-or-nothing, checked against the baseline first), and every refusal.
import { execFileSync } from "node:child_process";
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  applyChange,
  createWarrant,
  loopChange,
  type ModelFunction,
  WarrantError,
} from "../../src/index.js";
import { fakeSandbox, memoryStore } from "../../src/testing.js";
import { repoRoot } from "../helpers/cli.js";
import { accept, turn } from "../runtime/harness.js";

const EXAMPLE = path.join(repoRoot, "examples/fix-failing-test");
const FIXED = `export function slugify(title) {\n  return title.toLowerCase();\n}\n`;

function answers(...turns: readonly unknown[]): ModelFunction {
  let next = 0;
  return async () => {
    const answer = turns[next++];
    if (answer === undefined) throw new WarrantError("model/script-exhausted", "no answer left");
    return answer as never;
  };
}

/** A plan that rewrites src/slugify.js, adds src/zz/new.js and removes nothing else. */
const twoFiles = turn("Plan", {
  hypothesis: "Rewrite slugify and add a helper.",
  steps: [
    { id: "read", action: "observe", read: ["src/slugify.js"] },
    { id: "rewrite", action: "patch", path: "src/slugify.js", content: FIXED },
    { id: "add", action: "patch", path: "src/zz/new.js", content: "export const x = 1;\n" },
  ],
  expected_checks: ["tests-pass"],
});

let dir: string;
let pack: string;
let workspace: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "warrant-changes-"));
  workspace = path.join(dir, "workspace");
  await cp(path.join(EXAMPLE, "workspace"), workspace, { recursive: true });
  const doc = JSON.parse(await readFile(path.join(EXAMPLE, "task-pack.json"), "utf8")) as Record<
    string,
    unknown
  >;
  const agents = doc.agents as Record<string, string>;
  for (const role of Object.keys(agents))
    agents[role] = path.resolve(EXAMPLE, agents[role] as string);
  doc.hil = "none";
  doc.verifier = { timeoutMs: 60000, checks: [{ name: "tests-pass", command: "run-tests" }] };
  (doc.commands as Record<string, unknown>)["make-link"] = {
    effect: "mutation",
    argv: ["make-link"],
    args: { type: "object", additionalProperties: false, properties: {} },
    timeoutMs: 5000,
    maxOutputBytes: 4096,
  };
  pack = path.join(dir, "task-pack.json");
  await writeFile(pack, JSON.stringify(doc));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function verifiedLoop(plan: unknown = twoFiles, testsPass = true) {
  const store = memoryStore();
  const warrant = await createWarrant({
    store,
    models: {
      implementer: answers(plan, plan, plan),
      reviewer: answers(accept, accept, accept),
      summarizer: answers(
        turn("Result", { summary: "Slugify rewritten.", outcome: "verified", evidence: [] }),
      ),
    },
    sandbox: fakeSandbox({
      exec: async (argv, { cwd }) => {
        // The fake's stand-in for a command that leaves a symbolic link behind.
        if (argv[0] === "make-link") await symlink("slugify.js", path.join(cwd, "src/link.js"));
        return argv.includes("--test") && !testsPass ? { exitCode: 1 } : { exitCode: 0 };
      },
    }),
    approver: "auto",
    signer: "none",
  });
  const handle = warrant.run(pack);
  const outcome = await handle.result;
  return { store, query: await handle.query, outcome, warrant };
}

describe("loopChange", () => {
  it("reads the verified run's change: files with digests, and a git-style diff git itself applies", async () => {
    const { store, query } = await verifiedLoop();
    const change = await loopChange(store, query);
    expect(change.query).toBe(query);
    expect(change.run).toMatch(/^corpus-experiment:sha256:/);
    expect(change.baseline).toMatch(/^sha256:/);
    expect(change.files).toEqual([
      {
        path: "src/slugify.js",
        status: "modified",
        before: expect.stringMatching(/^sha256:/),
        after: expect.stringMatching(/^sha256:/),
      },
      {
        path: "src/zz/new.js",
        status: "added",
        before: null,
        after: expect.stringMatching(/^sha256:/),
      },
    ]);
    expect(change.diff).toContain(
      "diff --git a/src/slugify.js b/src/slugify.js\n--- a/src/slugify.js\n+++ b/src/slugify.js\n@@",
    );
    expect(change.diff).toContain(
      "diff --git a/src/zz/new.js b/src/zz/new.js\nnew file mode 100644\n--- /dev/null\n+++ b/src/zz/new.js\n@@ -0,0 +1 @@\n+export const x = 1;\n",
    );
    // git applies the diff to the baseline and gets the run's files.
    const copy = path.join(dir, "copy");
    await cp(workspace, copy, { recursive: true });
    execFileSync("git", ["apply", "-"], { cwd: copy, input: change.diff });
    expect(await readFile(path.join(copy, "src/slugify.js"), "utf8")).toBe(FIXED);
    // The same run named by a prefix of its ref.
    expect(await loopChange(store, query, { run: change.run.slice(0, 30) })).toEqual(change);
  });

  it("refuses: an unknown loop, an unknown run, a loop with no verified run", async () => {
    const { store, query } = await verifiedLoop();
    await expect(loopChange(store, "query:nowhere")).rejects.toMatchObject({
      code: "loop/not-opened",
    });
    await expect(
      loopChange(store, query, { run: "corpus-experiment:sha256:nothing-like-it" }),
    ).rejects.toMatchObject({ code: "diff/run-unknown" });
    const failed = await verifiedLoop(twoFiles, false);
    await expect(loopChange(failed.store, failed.query)).rejects.toMatchObject({
      code: "diff/not-verified",
    });
    await expect(applyChange(failed.store, failed.query, { to: workspace })).rejects.toMatchObject({
      code: "apply/not-verified",
    });
  });

  it("a loop verified before changes were kept (no changeset record): diff/no-changeset", async () => {
    const { store, query } = await verifiedLoop();
    // The same loop as a store written before changesets existed shows it: no changeset record.
    const stripped = new Proxy(store, {
      get(target, key) {
        if (key === "listRecords")
          return async (q: string) =>
            (await target.listRecords(q)).filter((r) => r.kind !== "changeset");
        const v = Reflect.get(target, key) as unknown;
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    await expect(loopChange(stripped, query)).rejects.toMatchObject({ code: "diff/no-changeset" });
    await expect(applyChange(stripped, query)).rejects.toMatchObject({
      code: "apply/no-changeset",
    });
  });
});

describe("a change that is not only regular files", () => {
  it("is kept listed but incomplete: diff/changeset-incomplete and apply/changeset-incomplete, nothing written", async () => {
    const plan = turn("Plan", {
      hypothesis: "Rewrite slugify and link it.",
      steps: [
        { id: "read", action: "observe", read: ["src/slugify.js"] },
        { id: "rewrite", action: "patch", path: "src/slugify.js", content: FIXED },
        { id: "link", action: "command", profile: "make-link", args: {} },
      ],
      expected_checks: ["tests-pass"],
    });
    const { store, query } = await verifiedLoop(plan);
    const record = (await store.listRecords(query)).find((r) => r.kind === "changeset");
    expect(record?.body).toMatchObject({
      complete: false,
      files: [{ path: "src/slugify.js", status: "modified" }],
      skipped: [{ code: "changeset/not-a-file", message: expect.stringContaining("src/link.js") }],
    });
    await expect(loopChange(store, query)).rejects.toMatchObject({
      code: "diff/changeset-incomplete",
    });
    const before = await readFile(path.join(workspace, "src/slugify.js"));
    await expect(applyChange(store, query)).rejects.toMatchObject({
      code: "apply/changeset-incomplete",
    });
    expect(await readFile(path.join(workspace, "src/slugify.js"))).toEqual(before);
  });
});

describe("applyChange", () => {
  it("writes the change into the workspace, then reports the same run already applied", async () => {
    const { store, query } = await verifiedLoop();
    const r = await applyChange(store, query);
    expect(r).toMatchObject({ query, to: workspace, result: "applied" });
    expect(await readFile(path.join(workspace, "src/slugify.js"), "utf8")).toBe(FIXED);
    expect(await readFile(path.join(workspace, "src/zz/new.js"), "utf8")).toBe(
      "export const x = 1;\n",
    );
    expect((await applyChange(store, query)).result).toBe("already-applied");
  });

  it("a touched file edited since the run: apply/diverged naming it, and nothing written", async () => {
    const { store, query } = await verifiedLoop();
    await writeFile(path.join(workspace, "src/slugify.js"), "// mine\n");
    const err = await applyChange(store, query).catch((e: WarrantError) => e);
    expect(err).toMatchObject({ code: "apply/diverged" });
    expect((err as Error).message).toContain("src/slugify.js");
    expect(await readFile(path.join(workspace, "src/slugify.js"), "utf8")).toBe("// mine\n");
    await expect(readFile(path.join(workspace, "src/zz/new.js"))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("a write that fails midway: apply/write-failed, and the file written before it restored", async () => {
    const { store, query } = await verifiedLoop();
    const before = await readFile(path.join(workspace, "src/slugify.js"));
    // src/zz cannot be made (a file stands where the folder must go, which stops root too):
    // src/slugify.js is written first, then src/zz/new.js fails.
    await writeFile(path.join(workspace, "src/zz"), "in the way\n");
    const err = await applyChange(store, query).catch((e: WarrantError) => e);
    expect(err).toMatchObject({ code: "apply/write-failed" });
    expect((err as Error).message).toContain("restored");
    expect(await readFile(path.join(workspace, "src/slugify.js"))).toEqual(before);
    expect(await readFile(path.join(workspace, "src/zz"), "utf8")).toBe("in the way\n");
  });

  it("the target is not a folder: apply/target-missing; --git outside a repository: apply/not-a-repository", async () => {
    const { store, query } = await verifiedLoop();
    await expect(
      applyChange(store, query, { to: path.join(dir, "nowhere") }),
    ).rejects.toMatchObject({ code: "apply/target-missing" });
    await expect(applyChange(store, query, { to: workspace, git: true })).rejects.toMatchObject({
      code: "apply/not-a-repository",
    });
  });
});

describe("applyChange --git", () => {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", args, {
      cwd,
      encoding: "utf8",
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "U",
        GIT_AUTHOR_EMAIL: "u@x",
        GIT_COMMITTER_NAME: "U",
        GIT_COMMITTER_EMAIL: "u@x",
      },
    });

  async function repo(): Promise<string> {
    git(workspace, "init", "-q", "-b", "main");
    git(workspace, "add", "-A");
    git(workspace, "commit", "-qm", "init");
    return workspace;
  }

  it("commits on a new branch with the trailers; the checkout stays on its branch, untouched", async () => {
    await repo();
    const { store, query } = await verifiedLoop();
    const r = await applyChange(store, query, { git: true });
    expect(r).toMatchObject({
      result: "applied",
      branch: `warrant/${query.slice("query:".length)}`,
    });
    expect(git(workspace, "branch", "--show-current").trim()).toBe("main");
    expect(git(workspace, "status", "--porcelain")).toBe("");
    expect(await readFile(path.join(workspace, "src/slugify.js"), "utf8")).not.toBe(FIXED);
    const message = git(workspace, "log", "-1", "--format=%B", r.branch as string);
    expect(message.split("\n")[0]).toBe("Slugify rewritten");
    expect(message).toContain(`Warrant-Query: ${query}\n`);
    expect(message).toMatch(/Warrant-Execution: corpus-task-pack-execution:sha256:\S+\n/);
    for (const role of ["implementer", "reviewer", "summarizer"])
      expect(message).toMatch(new RegExp(`Warrant-Agent: ${role} \\S+\\n`));
    expect(git(workspace, "show", `${r.branch}:src/slugify.js`)).toBe(FIXED);
    expect(git(workspace, "rev-list", "--count", `main..${r.branch}`).trim()).toBe("1");
    // Again: the branch already holds this run's commit.
    expect(await applyChange(store, query, { git: true })).toMatchObject({
      result: "already-applied",
      commit: r.commit,
    });
    // Another branch name for the same run, while the default one exists under another commit.
    await expect(applyChange(store, query, { git: true, branch: "main" })).rejects.toMatchObject({
      code: "apply/branch-exists",
    });
    await expect(
      applyChange(store, query, { git: true, branch: "bad..name" }),
    ).rejects.toMatchObject({ code: "apply/branch-invalid" });
  });

  it("a dirty work tree: apply/dirty-worktree, no branch made", async () => {
    await repo();
    const { store, query } = await verifiedLoop();
    await writeFile(path.join(workspace, "notes.txt"), "wip\n");
    await expect(applyChange(store, query, { git: true })).rejects.toMatchObject({
      code: "apply/dirty-worktree",
    });
    expect(git(workspace, "branch", "--list", "warrant/*")).toBe("");
  });

  it("a committed edit of a touched file: apply/diverged, no branch made", async () => {
    await repo();
    const { store, query } = await verifiedLoop();
    await writeFile(path.join(workspace, "src/slugify.js"), "// theirs\n");
    git(workspace, "commit", "-qam", "edit");
    await expect(applyChange(store, query, { git: true })).rejects.toMatchObject({
      code: "apply/diverged",
    });
    expect(git(workspace, "branch", "--list", "warrant/*")).toBe("");
  });
});
