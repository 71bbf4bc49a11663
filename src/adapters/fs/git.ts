// The few git plumbing calls the host makes: whether a folder is a work tree, which files it holds
// (tracked plus untracked, not ignored), what is changed or untracked, the trailers git parses in a
// branch's commits, and a commit made on a new branch through a private index, so the user's
// checkout, index and current branch are never touched.
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

export interface GitStatus {
  /** Tracked paths modified, staged, deleted, renamed or in conflict (both names of a rename). */
  readonly changed: readonly string[];
  /** Untracked files (not ignored), each listed. */
  readonly untracked: readonly string[];
}

/** What `git status` reports of the work tree at `top`, paths from the top; ignored files are not. */
export async function gitStatus(top: string): Promise<GitStatus> {
  const r = await git(top, [
    "--no-optional-locks",
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
  ]);
  if (r.code !== 0) throw new Error(`git status failed: ${r.stderr.trim()}`);
  const fields = r.stdout.toString("utf8").split("\0");
  const changed: string[] = [];
  const untracked: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i] as string;
    if (entry.length < 4) continue;
    const xy = entry.slice(0, 2);
    const name = entry.slice(3);
    if (xy === "??") untracked.push(name);
    else changed.push(name);
    // A rename or copy is followed by a field holding its old name.
    if (/[RC]/.test(xy)) {
      i++;
      const from = fields[i];
      if (from !== undefined && from !== "") changed.push(from);
    }
  }
  return { changed, untracked };
}

/** One commit of a branch and the trailers git's own parser finds in its message. */
export interface CommitTrailers {
  readonly commit: string;
  /** `[key, value]` in order, continuation lines unfolded. */
  readonly trailers: readonly (readonly [string, string])[];
}

/**
 * The last `limit` commits reachable from `refs/heads/<branch>`, newest first, with the trailers
 * git parses in each message (`%(trailers)`: only the message's last paragraph, and only lines of
 * the trailer form): what a message's text says elsewhere is not a trailer.
 */
export async function branchTrailers(
  top: string,
  branch: string,
  limit = 1000,
): Promise<CommitTrailers[]> {
  const r = await git(top, [
    "log",
    `-n${limit}`,
    "--format=%H%x00%(trailers:only,unfold,separator=%x00)%x00%x01",
    `refs/heads/${branch}`,
    "--",
  ]);
  if (r.code !== 0) throw new Error(`git log failed: ${r.stderr.trim()}`);
  const out: CommitTrailers[] = [];
  for (const record of r.stdout.toString("utf8").split("\x01")) {
    const [commit, ...lines] = record.replace(/^\n/, "").split("\0");
    if (commit === undefined || !/^[0-9a-f]{40,64}$/.test(commit)) continue;
    const trailers: [string, string][] = [];
    for (const line of lines) {
      const m = /^([A-Za-z0-9-]+)[ \t]*[^A-Za-z0-9 \t-][ \t]*(.*)$/.exec(line);
      if (m !== null) trailers.push([m[1] as string, (m[2] as string).trim()]);
    }
    out.push({ commit, trailers });
  }
  return out;
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
