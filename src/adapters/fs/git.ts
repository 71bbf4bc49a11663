// The few git plumbing calls the host makes: whether a folder is a work tree, which files it holds
// (tracked plus untracked, not ignored), whether it is clean, and a commit made on a new branch
// through a private index, so the user's checkout, index and current branch are never touched.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

export interface GitRun {
  readonly stdout: Buffer;
  readonly stderr: string;
  readonly code: number;
}

/** Runs git in `cwd` with extra variables; never throws for a non-zero exit. */
export function git(
  cwd: string,
  args: readonly string[],
  opts: { readonly env?: Readonly<Record<string, string>>; readonly input?: Uint8Array } = {},
): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      [...args],
      {
        cwd,
        encoding: "buffer",
        maxBuffer: 256 << 20,
        env: { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", ...opts.env },
      },
      (error, stdout, stderr) => {
        const code = (error as { code?: unknown } | null)?.code;
        if (error !== null && typeof code !== "number") {
          reject(error);
          return;
        }
        resolve({
          stdout: stdout as Buffer,
          stderr: (stderr as Buffer).toString("utf8"),
          code: typeof code === "number" ? code : 0,
        });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(Buffer.from(opts.input));
  });
}

/** The work tree's top folder and `dir`'s path inside it (`""` or `sub/`), or undefined: no repository. */
export async function gitWorkTree(
  dir: string,
): Promise<{ readonly top: string; readonly prefix: string } | undefined> {
  const r = await git(dir, [
    "rev-parse",
    "--is-inside-work-tree",
    "--show-toplevel",
    "--show-prefix",
  ]).catch(() => undefined);
  if (r === undefined || r.code !== 0) return undefined;
  const [inside, top, prefix] = r.stdout.toString("utf8").split("\n");
  if (inside !== "true" || top === undefined) return undefined;
  return { top, prefix: prefix ?? "" };
}

/** The files of `dir` (a work tree or a folder inside one): tracked plus untracked not ignored. */
export async function gitFiles(dir: string): Promise<string[]> {
  const r = await git(dir, [
    "ls-files",
    "-z",
    "-c",
    "-o",
    "--exclude-standard",
    "--full-name",
    "--",
    ".",
  ]);
  if (r.code !== 0) throw new Error(`git ls-files failed: ${r.stderr.trim()}`);
  const tree = await gitWorkTree(dir);
  const prefix = tree?.prefix ?? "";
  const seen = new Set<string>();
  for (const name of r.stdout.toString("utf8").split("\0")) {
    if (name === "" || !name.startsWith(prefix)) continue;
    seen.add(name.slice(prefix.length));
  }
  return [...seen].sort();
}

/** Paths git reports as changed or untracked (ignored files are not), empty when clean. */
export async function gitDirtyPaths(dir: string): Promise<string[]> {
  const r = await git(dir, [
    "--no-optional-locks",
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
  ]);
  if (r.code !== 0) throw new Error(`git status failed: ${r.stderr.trim()}`);
  return r.stdout
    .toString("utf8")
    .split("\0")
    .filter((l) => l.length > 3)
    .map((l) => l.slice(3));
}

export interface CommitChange {
  /** Path from the work tree's top. */
  readonly path: string;
  /** The new bytes, or null to remove the file. */
  readonly bytes: Uint8Array | null;
}

/** The commit a branch points at, or undefined when there is no such branch. */
export async function branchTip(top: string, branch: string): Promise<string | undefined> {
  const r = await git(top, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`]);
  return r.code === 0 ? r.stdout.toString("utf8").trim() : undefined;
}

/** A commit message's body (`%B`) of a commit. */
export async function commitMessage(top: string, commit: string): Promise<string> {
  const r = await git(top, ["log", "-1", "--format=%B", commit]);
  return r.stdout.toString("utf8");
}

/**
 * One commit on top of HEAD holding `changes`, made in a private index, and branch `branch`
 * created at it (never moved if it exists: the update refuses). The work tree, the user's index
 * and HEAD are left as they were. Returns the commit id.
 */
export async function commitOnNewBranch(
  top: string,
  branch: string,
  changes: readonly CommitChange[],
  message: string,
): Promise<string> {
  const scratch = await mkdtemp(path.join(tmpdir(), "warrant-git-"));
  const env = { GIT_INDEX_FILE: path.join(scratch, "index") };
  const must = async (args: string[], input?: Uint8Array) => {
    const r = await git(top, args, { env, ...(input === undefined ? {} : { input }) });
    if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.trim()}`);
    return r.stdout.toString("utf8").trim();
  };
  try {
    await must(["read-tree", "HEAD"]);
    for (const c of changes) {
      if (c.bytes === null) {
        await must(["update-index", "--force-remove", "--", c.path]);
        continue;
      }
      const blob = await must(["hash-object", "-w", "--stdin"], c.bytes);
      const staged = await must(["ls-files", "-s", "--", c.path]);
      const mode = /^(\d{6}) /.exec(staged)?.[1] ?? "100644";
      await must(["update-index", "--add", "--cacheinfo", `${mode},${blob},${c.path}`]);
    }
    const tree = await must(["write-tree"]);
    const head = await must(["rev-parse", "HEAD"]);
    const identity = await git(top, ["var", "GIT_COMMITTER_IDENT"]);
    const fallback =
      identity.code === 0
        ? {}
        : {
            GIT_AUTHOR_NAME: "Warrant",
            GIT_AUTHOR_EMAIL: "warrant@localhost",
            GIT_COMMITTER_NAME: "Warrant",
            GIT_COMMITTER_EMAIL: "warrant@localhost",
          };
    const made = await git(top, ["commit-tree", tree, "-p", head, "-F", "-"], {
      env: { ...env, ...fallback },
      input: new TextEncoder().encode(message),
    });
    if (made.code !== 0) throw new Error(`git commit-tree failed: ${made.stderr.trim()}`);
    const commit = made.stdout.toString("utf8").trim();
    // The empty old value: create the branch, never move an existing one.
    await must(["update-ref", `refs/heads/${branch}`, commit, ""]);
    return commit;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
