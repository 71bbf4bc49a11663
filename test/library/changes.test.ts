// loopChange and applyChange over a loop driven with function models and the fake sandbox: the
// verified change read back from its changeset record, shown as a diff and applied to a folder
// (all-or-nothing, checked against the baseline first, never through a symbolic link, only after
// the loop's audit, the path rule and the content digests), and every refusal.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { signRecord } from "../../src/core/records/signature.js";
import {
  applyChange,
  createWarrant,
  keySigner,
  loopChange,
  type ModelFunction,
  WarrantError,
} from "../../src/index.js";
import { auditStoredLoop } from "../../src/library/audit.js";
import { findChange } from "../../src/library/change-record.js";
import { applyAuditedChange } from "../../src/library/changes.js";
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
  for (const name of ["make-link", "make-artifact"])
    (doc.commands as Record<string, unknown>)[name] = {
      effect: "mutation",
      argv: [name],
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

async function verifiedLoop(
  plan: unknown = twoFiles,
  testsPass = true,
  opts: {
    readonly summary?: string;
    readonly signed?: boolean;
    /** The host key's secret (default: a random one). */
    readonly secret?: Uint8Array;
  } = {},
) {
  const store = memoryStore();
  const warrant = await createWarrant({
    store,
    models: {
      implementer: answers(plan, plan, plan),
      reviewer: answers(accept, accept, accept),
      summarizer: answers(
        turn("Result", {
          summary: opts.summary ?? "Slugify rewritten.",
          outcome: "verified",
          evidence: [],
        }),
      ),
    },
    sandbox: fakeSandbox({
      exec: async (argv, { cwd }) => {
        // The fake's stand-in for a command that leaves a symbolic link behind.
        if (argv[0] === "make-link") await symlink("slugify.js", path.join(cwd, "src/link.js"));
        // A build writing its output under a folder the baseline did not have.
        if (argv[0] === "make-artifact") {
          await mkdir(path.join(cwd, "build/out"), { recursive: true });
          await writeFile(path.join(cwd, "build/out/artifact.txt"), "built\n");
        }
        return argv.includes("--test") && !testsPass ? { exitCode: 1 } : { exitCode: 0 };
      },
    }),
    approver: "auto",
    // Signed by a host key: apply audits the loop first, and an unsigned loop fails that audit.
    signer:
      opts.signed === false ? "none" : keySigner(opts.secret ?? new Uint8Array(randomBytes(32))),
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
    const fds = (await readdir("/proc/self/fd")).length;
    const r = await applyChange(store, query);
    expect(r).toMatchObject({ query, to: workspace, result: "applied" });
    expect(r.files.map((f) => [f.path, f.status])).toEqual([
      ["src/slugify.js", "modified"],
      ["src/zz/new.js", "added"],
    ]);
    // The target's folders are closed again.
    expect((await readdir("/proc/self/fd")).length).toBe(fds);
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

  it("a tracked file changed and not committed: apply/dirty-worktree, no branch made", async () => {
    await repo();
    const { store, query } = await verifiedLoop();
    await writeFile(path.join(workspace, "package.json"), "{}\n");
    const err = await applyChange(store, query, { git: true }).catch((e: WarrantError) => e);
    expect(err).toMatchObject({ code: "apply/dirty-worktree" });
    expect((err as Error).message).toContain("package.json");
    expect(git(workspace, "branch", "--list", "warrant/*")).toBe("");
  });

  it("untracked files are fine, unless one lies where the change goes: apply/dirty-worktree naming it", async () => {
    await repo();
    const { store, query } = await verifiedLoop();
    await mkdir(path.join(workspace, "src/zz"));
    await writeFile(path.join(workspace, "src/zz/new.js"), "mine\n");
    const err = await applyChange(store, query, { git: true }).catch((e: WarrantError) => e);
    expect(err).toMatchObject({ code: "apply/dirty-worktree" });
    expect((err as Error).message).toContain("src/zz/new.js");
    expect(git(workspace, "branch", "--list", "warrant/*")).toBe("");
    // Elsewhere, untracked files do not stand in the way: committed, and left as they were.
    await rm(path.join(workspace, "src/zz"), { recursive: true });
    await writeFile(path.join(workspace, "notes.txt"), "wip\n");
    await mkdir(path.join(workspace, "src/zzz"));
    await writeFile(path.join(workspace, "src/zzz/draft.js"), "draft\n");
    const r = await applyChange(store, query, { git: true });
    expect(r.result).toBe("applied");
    expect(git(workspace, "show", "--name-only", "--format=", r.branch as string).trim()).toBe(
      "src/slugify.js\nsrc/zz/new.js",
    );
    expect(await readFile(path.join(workspace, "notes.txt"), "utf8")).toBe("wip\n");
    expect(git(workspace, "status", "--porcelain")).toBe("?? notes.txt\n?? src/zzz/\n");
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

/** Every file under `root` (links listed as links, not followed). */
async function filesUnder(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(root, { withFileTypes: true, recursive: true }))
    out.push(path.relative(root, path.join(e.parentPath, e.name)));
  return out.sort();
}

/** A build step that writes build/out/artifact.txt, beside the rewrite of slugify. */
const withArtifact = turn("Plan", {
  hypothesis: "Rewrite slugify and build.",
  steps: [
    { id: "read", action: "observe", read: ["src/slugify.js"] },
    { id: "rewrite", action: "patch", path: "src/slugify.js", content: FIXED },
    { id: "build", action: "command", profile: "make-artifact", args: {} },
  ],
  expected_checks: ["tests-pass"],
});

describe("apply never writes through a symbolic link (apply/outside)", () => {
  it("an ignored link build -> ../elsewhere where the change makes build/out/: refused for the default target and --to, nothing written on either side", async () => {
    const { store, query } = await verifiedLoop(withArtifact);
    expect((await loopChange(store, query)).files.map((f) => f.path)).toEqual([
      "build/out/artifact.txt",
      "src/slugify.js",
    ]);
    const elsewhere = path.join(dir, "elsewhere");
    await mkdir(elsewhere);
    // Made after the run, as an ignored build link is: the baseline never held it.
    await symlink("../elsewhere", path.join(workspace, "build"));
    const copy = path.join(dir, "copy");
    await cp(workspace, copy, { recursive: true, verbatimSymlinks: true });
    const before = await readFile(path.join(workspace, "src/slugify.js"));
    for (const to of [undefined, copy]) {
      const err = await applyChange(store, query, to === undefined ? {} : { to }).catch(
        (e: WarrantError) => e,
      );
      expect(err).toMatchObject({ code: "apply/outside" });
      expect((err as Error).message).toContain("build");
    }
    expect(await filesUnder(elsewhere)).toEqual([]);
    expect(await readFile(path.join(workspace, "src/slugify.js"))).toEqual(before);
    expect(await readFile(path.join(copy, "src/slugify.js"))).toEqual(before);
  });

  it("a folder of the target that is itself a link out of it: refused, nothing written there", async () => {
    const { store, query } = await verifiedLoop();
    const elsewhere = path.join(dir, "elsewhere");
    await mkdir(elsewhere);
    await symlink("../../elsewhere", path.join(workspace, "src/zz"));
    await expect(applyChange(store, query)).rejects.toMatchObject({ code: "apply/outside" });
    expect(await filesUnder(elsewhere)).toEqual([]);
  });

  it("a link that stays inside the target is refused too: only real folders are written into", async () => {
    const { store, query } = await verifiedLoop();
    await symlink("../test", path.join(workspace, "src/zz"));
    await expect(applyChange(store, query)).rejects.toMatchObject({ code: "apply/outside" });
    await expect(stat(path.join(workspace, "test/new.js"))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("the target named is itself a link: refused, nothing written where it points", async () => {
    const { store, query } = await verifiedLoop();
    const link = path.join(dir, "link");
    await symlink(workspace, link);
    const before = await readFile(path.join(workspace, "src/slugify.js"));
    await expect(applyChange(store, query, { to: link })).rejects.toMatchObject({
      code: "apply/outside",
    });
    expect(await readFile(path.join(workspace, "src/slugify.js"))).toEqual(before);
  });

  it("a touched file that is a link: refused, the file it points at untouched", async () => {
    const { store, query } = await verifiedLoop();
    const target = path.join(dir, "target.js");
    await writeFile(target, await readFile(path.join(workspace, "src/slugify.js")));
    await rm(path.join(workspace, "src/slugify.js"));
    await symlink(target, path.join(workspace, "src/slugify.js"));
    await expect(applyChange(store, query)).rejects.toMatchObject({ code: "apply/outside" });
    expect(await readFile(target, "utf8")).not.toBe(FIXED);
  });
});

describe("apply against what a target may hold", () => {
  it("a FIFO where a touched file was: apply/diverged at once, never a hang", async () => {
    const { store, query } = await verifiedLoop();
    await rm(path.join(workspace, "src/slugify.js"));
    execFileSync("mkfifo", [path.join(workspace, "src/slugify.js")]);
    await expect(applyChange(store, query)).rejects.toMatchObject({ code: "apply/diverged" });
  });

  it("a write failing after folders were made: the files written and the folders made are undone", async () => {
    const plan = turn("Plan", {
      hypothesis: "Rewrite slugify, add a helper and build.",
      steps: [
        { id: "read", action: "observe", read: ["src/slugify.js"] },
        { id: "rewrite", action: "patch", path: "src/slugify.js", content: FIXED },
        { id: "add", action: "patch", path: "src/zz/new.js", content: "export const x = 1;\n" },
        { id: "build", action: "command", profile: "make-artifact", args: {} },
      ],
      expected_checks: ["tests-pass"],
    });
    const { store, query } = await verifiedLoop(plan);
    const before = await filesUnder(workspace);
    const slugify = await readFile(path.join(workspace, "src/slugify.js"));
    // build/out/ is made and written, src/slugify.js written, then src/zz/new.js fails.
    await writeFile(path.join(workspace, "src/zz"), "in the way\n");
    const err = await applyChange(store, query).catch((e: WarrantError) => e);
    expect(err).toMatchObject({ code: "apply/write-failed" });
    expect(await filesUnder(workspace)).toEqual([...before, "src/zz"].sort());
    expect(await readFile(path.join(workspace, "src/slugify.js"))).toEqual(slugify);
  });
});

type Body = { files: Record<string, unknown>[] } & Record<string, unknown>;

/**
 * The store as `findChange` reads it, with its changeset record edited; its rows as stored (what
 * the audit reads) are edited too only with `rows`.
 */
function editedChangeset(
  store: ReturnType<typeof memoryStore>,
  edit: (body: Body) => void,
  rows = false,
) {
  const edited = (body: unknown) => {
    const copy = structuredClone(body) as Body;
    edit(copy);
    return copy;
  };
  return new Proxy(store, {
    get(target, key) {
      if (key === "listRecords")
        return async (q: string) =>
          (await target.listRecords(q)).map((r) =>
            r.kind === "changeset" ? { ...r, body: edited(r.body) } : r,
          );
      if (key === "readRawLoop" && rows)
        return async (q: string) => {
          const raw = await target.readRawLoop(q);
          return {
            ...raw,
            records: raw.records.map((r) =>
              r.kind === "changeset"
                ? { ...r, text: JSON.stringify(edited(JSON.parse(r.text))) }
                : r,
            ),
          };
        };
      const v = Reflect.get(target, key) as unknown;
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

describe("a changeset that is not what the run wrote", () => {
  it("a path the run's path rule refuses, in a change that passed its audit: apply/path-invalid, nothing written", async () => {
    const { store, query } = await verifiedLoop();
    const target = path.join(dir, "a", "b");
    await cp(workspace, target, { recursive: true });
    const before = await readFile(path.join(target, "src/slugify.js"));
    for (const bad of [
      "../../x.txt",
      "src/../../x.txt",
      "/tmp/warrant-absolute.txt",
      ".git/hooks/pre-commit",
      "src/.GIT/config",
      "src//zz/new.js",
      "src\\zz.js",
      "src/slugify.js",
    ]) {
      const tampered = editedChangeset(store, (body) => {
        (body.files[1] as { path: string }).path = bad;
      });
      // The audit passed (the rows as stored are sound): the path rule decides alone.
      const found = await findChange(tampered, query, {}, "apply");
      const err = await applyAuditedChange(found, { to: target }).catch((e: WarrantError) => e);
      expect(err, bad).toMatchObject({ code: "apply/path-invalid", path: "/files/1/path" });
      // Through applyChange the same read is not the record the audit vouched for.
      const whole = await applyChange(tampered, query, { to: target }).catch(
        (e: WarrantError) => e,
      );
      expect(whole, bad).toMatchObject({ code: "apply/audit-failed" });
      expect((whole as Error).message).toContain("not the record the audit vouched for");
    }
    await expect(stat(path.join(dir, "x.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(stat("/tmp/warrant-absolute.txt")).rejects.toMatchObject({ code: "ENOENT" });
    expect(await filesUnder(target)).toEqual(await filesUnder(workspace));
    expect(await readFile(path.join(target, "src/slugify.js"))).toEqual(before);
  });

  it("a content that is not the bytes its digest names, in a change that passed its audit: apply/content-mismatch, nothing written", async () => {
    const { store, query } = await verifiedLoop();
    const before = await readFile(path.join(workspace, "src/slugify.js"));
    const swapped = editedChangeset(store, (body) => {
      body.files[0] = {
        ...body.files[0],
        "after/content": Buffer.from("export const pwned = 1;\n").toString("base64"),
      };
    });
    const audited = async (tampered: typeof store) =>
      applyAuditedChange(await findChange(tampered, query, {}, "apply"));
    await expect(audited(swapped)).rejects.toMatchObject({
      code: "apply/content-mismatch",
      path: "/files/0/after",
    });
    // A deleted file that still carries an after side.
    const sided = editedChangeset(store, (body) => {
      body.files[1] = { ...body.files[1], status: "deleted" };
    });
    await expect(audited(sided)).rejects.toMatchObject({ code: "apply/content-mismatch" });
    await expect(applyChange(swapped, query)).rejects.toMatchObject({ code: "apply/audit-failed" });
    expect(await readFile(path.join(workspace, "src/slugify.js"))).toEqual(before);
    await expect(stat(path.join(workspace, "src/zz"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a changeset read with its content intact but not as the audit vouched for it: apply/audit-failed, each rule alone", async () => {
    const secret = new Uint8Array(32).fill(3);
    const { store, query } = await verifiedLoop(twoFiles, true, { secret });
    const before = await readFile(path.join(workspace, "src/slugify.js"));
    const other = new Uint8Array(32).fill(8);
    const reSigned = async (body: Body, key: Uint8Array) => {
      const { signature: _s, ...rest } = body;
      body.signature = (await signRecord(rest, key)).signature;
    };
    type Signature = { "key/public": string; value: string };
    const edits: [string, (body: Body) => Promise<void> | void][] = [
      // Each keeps the content (its ref reproduces) and changes only what the rule looks at.
      [
        "a ref field inside the body, signed by the loop's key with it",
        async (body) => {
          body.ref = "corpus-changeset:x";
          await reSigned(body, secret);
        },
      ],
      [
        "its content edited and signed by the loop's key again",
        async (body) => {
          body.baseline = "sha256:other";
          await reSigned(body, secret);
        },
      ],
      [
        "the signature removed",
        (body) => {
          delete body.signature;
        },
      ],
      [
        "re-signed by a key that is not the loop's",
        async (body) => {
          const { signature: _s, ...rest } = body;
          body.signature = (await signRecord(rest, other)).signature;
        },
      ],
      [
        "a signature in the loop key's name made by another key",
        async (body) => {
          const { signature: own, ...rest } = body;
          const forged = (await signRecord(rest, other)).signature;
          body.signature = { ...forged, "key/public": (own as Signature)["key/public"] };
        },
      ],
    ];
    for (const [name, edit] of edits) {
      const copyOf = async () => {
        const [record] = (await store.listRecords(query)).filter((r) => r.kind === "changeset");
        const body = structuredClone(record?.body) as Body;
        await edit(body);
        return body;
      };
      const edited = await copyOf();
      const tampered = editedChangeset(store, (body) => {
        for (const k of Object.keys(body)) delete body[k];
        Object.assign(body, structuredClone(edited));
      });
      const err = await applyChange(tampered, query).catch((e: WarrantError) => e);
      expect(err, name).toMatchObject({ code: "apply/audit-failed" });
      expect((err as Error).message, name).toContain("not the record the audit vouched for");
    }
    // Untouched, the same read is vouched for and applied.
    const same = editedChangeset(store, () => undefined);
    expect((await applyChange(same, query)).result).toBe("applied");
    expect(await readFile(path.join(workspace, "src/slugify.js"))).not.toEqual(before);
  });

  it("the stored record edited to ../../x.txt: the audit finds it first (apply/audit-failed naming the problem)", async () => {
    const { store, query } = await verifiedLoop();
    const tampered = editedChangeset(
      store,
      (body) => {
        (body.files[1] as { path: string }).path = "../../x.txt";
      },
      true,
    );
    const err = await applyChange(tampered, query).catch((e: WarrantError) => e);
    expect(err).toMatchObject({ code: "apply/audit-failed" });
    expect((err as Error).message).toContain("store/record-mismatch");
    const audited = await auditStoredLoop(tampered, query);
    const n = audited.ok ? 0 : audited.errors.length;
    expect((err as Error).message.includes(" more)")).toBe(n > 1);
    await expect(stat(path.join(dir, "x.txt"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a loop that fails its audit (recorded without a host key): apply/audit-failed, nothing written", async () => {
    const { store, query } = await verifiedLoop(twoFiles, true, { signed: false });
    const before = await readFile(path.join(workspace, "src/slugify.js"));
    const err = await applyChange(store, query).catch((e: WarrantError) => e);
    expect(err).toMatchObject({ code: "apply/audit-failed", path: "/facts/0" });
    expect((err as Error).message).toContain("records/key-missing at /facts/0");
    // The first problem is named, with how many more the audit found.
    const audited = await auditStoredLoop(store, query);
    const more = audited.ok ? 0 : audited.errors.length - 1;
    expect(more).toBeGreaterThan(0);
    expect((err as Error).message).toContain(`(and ${more} more)`);
    expect(await readFile(path.join(workspace, "src/slugify.js"))).toEqual(before);
    // The diff is still shown: only taking the change needs the audit.
    expect((await loopChange(store, query)).files).toHaveLength(2);
  });

  it("an audit with exactly one problem (the stored loop lost its last fact): that problem, and no count of more", async () => {
    const { store, query } = await verifiedLoop();
    const truncated = new Proxy(store, {
      get(target, key) {
        if (key === "readRawLoop")
          return async (q: string) => {
            const raw = await target.readRawLoop(q);
            return { ...raw, facts: raw.facts.slice(0, -1) };
          };
        const v = Reflect.get(target, key) as unknown;
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const audited = await auditStoredLoop(truncated, query);
    expect(audited.ok ? [] : audited.errors.map((e) => e.code)).toEqual(["store/truncated"]);
    const last = audited.ok ? "" : audited.errors[0]?.path;
    const before = await readFile(path.join(workspace, "src/slugify.js"));
    const err = await applyChange(truncated, query).catch((e: WarrantError) => e);
    expect(err).toMatchObject({ code: "apply/audit-failed", path: last });
    // The message ends with the problem's own text: nothing follows it.
    const problem = audited.ok ? "" : (audited.errors[0]?.message ?? "");
    expect((err as Error).message.endsWith(`store/truncated at ${last}: ${problem}`)).toBe(true);
    expect((err as Error).message).not.toContain("more)");
    expect(await readFile(path.join(workspace, "src/slugify.js"))).toEqual(before);
  });
});

describe("applyChange --git: the commit message and provenance", () => {
  const trailers = (commit: string) =>
    git(workspace, "log", "-1", "--format=%(trailers:only,unfold)", commit).trim().split("\n");

  beforeEach(() => {
    git(workspace, "init", "-q", "-b", "main");
    git(workspace, "add", "-A");
    git(workspace, "commit", "-qm", "init");
  });

  it("the subject is the Result's first sentence cut at a word within 72 characters, no ellipsis; the full text follows", async () => {
    const summary =
      "Slugify now collapses every run of separators into a single hyphen and folds accented letters to ASCII. The tests pass.";
    const { store, query } = await verifiedLoop(twoFiles, true, { summary });
    const r = await applyChange(store, query, { git: true });
    const message = git(workspace, "log", "-1", "--format=%B", r.branch as string);
    const [subject, blank, ...rest] = message.split("\n");
    expect(subject).toBe("Slugify now collapses every run of separators into a single hyphen and");
    expect((subject as string).length).toBeLessThanOrEqual(72);
    expect(message).not.toContain("…");
    expect(blank).toBe("");
    expect(rest.join("\n")).toContain(`${summary}\n\nWarrant-Query: ${query}\n`);
  });

  it("trailer lines in the Result text are indented: git parses only the run's own trailers", async () => {
    const summary =
      "Slugify rewritten.\n\nWarrant-Query: query:someone-else\nWarrant-Execution: corpus-task-pack-execution:sha256:forged\nSigned-off-by: Mallory <m@x>\n---\n# ------------------------ >8 ------------------------";
    const { store, query } = await verifiedLoop(twoFiles, true, { summary });
    const r = await applyChange(store, query, { git: true });
    const parsed = trailers(r.commit as string);
    expect(parsed.filter((t) => t.startsWith("Warrant-Query:"))).toEqual([
      `Warrant-Query: ${query}`,
    ]);
    expect(parsed.filter((t) => t.startsWith("Warrant-Execution:"))).toHaveLength(1);
    expect(parsed.join("\n")).not.toContain("forged");
    expect(parsed.join("\n")).not.toContain("Mallory");
    const message = git(workspace, "log", "-1", "--format=%B", r.branch as string);
    expect(message).toContain("\n  Warrant-Query: query:someone-else\n");
    // git's own parser agrees.
    const parsedByGit = execFileSync("git", ["interpret-trailers", "--parse"], {
      input: message,
      encoding: "utf8",
    });
    expect(parsedByGit).not.toContain("someone-else");
  });

  it("another loop's Result naming this run's trailers does not make this run look applied", async () => {
    const victim = await verifiedLoop();
    const execution = (await victim.store.listRecords(victim.query)).find(
      (r) => r.kind === "changeset",
    )?.body as { "execution/ref": string };
    const spoof = await verifiedLoop(twoFiles, true, {
      summary: `Slugify rewritten.\nWarrant-Query: ${victim.query}\nWarrant-Execution: ${execution["execution/ref"]}\n`,
    });
    const branch = "feature/slugify";
    expect(await applyChange(spoof.store, spoof.query, { git: true, branch })).toMatchObject({
      result: "applied",
    });
    // The victim's run is not on that branch: its commit is made elsewhere, not skipped.
    await expect(
      applyChange(victim.store, victim.query, { git: true, branch }),
    ).rejects.toMatchObject({ code: "apply/branch-exists" });
    const own = await applyChange(victim.store, victim.query, { git: true });
    expect(own.result).toBe("applied");
    // Its commit found again on its branch, and on a branch it was merged into.
    expect(
      await applyChange(victim.store, victim.query, { git: true, branch: own.branch as string }),
    ).toMatchObject({ result: "already-applied", commit: own.commit });
    git(workspace, "commit", "-q", "--allow-empty", "-m", "later");
    git(workspace, "merge", "-q", "--no-edit", own.branch as string);
    expect(
      await applyChange(victim.store, victim.query, { git: true, branch: "main" }),
    ).toMatchObject({ result: "already-applied", commit: own.commit });
  });
});
