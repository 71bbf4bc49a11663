// The verified change of a loop, as the user takes it: `loopChange` reads the `changeset` record of
// a verified run and shows it as a git-style diff; `applyChange` writes it into a folder (every
// touched file checked against its baseline content first, each write atomic, the whole apply
// undone on a failure) or commits it on a new branch of a clean git work tree.
import { randomBytes } from "node:crypto";
import { lstat, mkdir, open, realpath, rename, rmdir, unlink } from "node:fs/promises";
import path from "node:path";
import {
  branchTip,
  commitMessage,
  commitOnNewBranch,
  gitDirtyPaths,
  gitWorkTree,
} from "../adapters/fs/git.js";
import type { LedgerRecord, LedgerStore } from "../core/loop/ledger-store.js";
import { digestOfBytes } from "../core/records/canonical.js";
import { readRecordBody } from "../core/records/record-body.js";
import { WarrantError } from "../core/result.js";
import { unifiedDiff } from "../core/taskpack/unified-diff.js";

export type ChangeStatus = "modified" | "added" | "deleted";

/** `warrant diff --json`: the change a verified run made to its baseline. */
export interface ChangeJson {
  readonly query: string;
  /** The run: its proposal ref. */
  readonly run: string;
  /** Digest of the baseline state the change applies to (each touched path's baseline digest). */
  readonly baseline: string;
  readonly files: readonly {
    readonly path: string;
    readonly status: ChangeStatus;
    /** Content digests (`sha256:…`); null for the side where the file is absent. */
    readonly before: string | null;
    readonly after: string | null;
  }[];
  /** Git-style unified diff of every file (no ignored files). */
  readonly diff: string;
}

export interface ChangeOptions {
  /** A run of the loop (its proposal ref, or a unique prefix of at least 8 characters). */
  readonly run?: string;
}

interface Found {
  readonly query: string;
  readonly run: string;
  readonly executionRef: string;
  readonly changeset: LedgerRecord;
  readonly body: {
    readonly baseline: string;
    readonly "baseline/dir"?: string;
    readonly complete: boolean;
    readonly files: readonly {
      readonly path: string;
      readonly status: ChangeStatus;
      readonly before: string | null;
      readonly after: string | null;
      readonly "before/content"?: string;
      readonly "after/content"?: string;
    }[];
  };
  readonly records: readonly LedgerRecord[];
  readonly roles: readonly { readonly role: string; readonly agent: string }[];
}

/** The prefix of a code (`diff/…` for `warrant diff`, `apply/…` for `warrant apply`). */
type Area = "diff" | "apply";

async function findChange(
  store: LedgerStore,
  query: string,
  opts: ChangeOptions,
  area: Area,
): Promise<Found> {
  const facts = (await store.readFacts(query)).map((s) => s.fact.step);
  if (facts.length === 0)
    throw new WarrantError("loop/not-opened", `no loop ${query} in the store`);
  const runs = [
    ...new Set(facts.flatMap((s) => (s.kind === "run-admitted" ? [s["proposal/ref"]] : []))),
  ];
  const concluded = facts.flatMap((s) => (s.kind === "concluded" ? [s] : []));
  let run: string;
  if (opts.run !== undefined) {
    const wanted = opts.run;
    const matches = runs.filter(
      (r) => r === wanted || (wanted.length >= 8 && r.startsWith(wanted)),
    );
    if (matches.length !== 1)
      throw new WarrantError(
        `${area}/run-unknown`,
        matches.length === 0
          ? `${wanted} names no run of ${query}`
          : `${wanted} names ${matches.length} runs of ${query}: give more of the ref`,
      );
    run = matches[0] as string;
    const end = concluded.find((c) => c["proposal/ref"] === run);
    if (end?.outcome !== "verified")
      throw new WarrantError(
        `${area}/not-verified`,
        `run ${run} of ${query} ${end === undefined ? "has not concluded" : `concluded ${end.outcome}`}, not verified: there is no verified change to take`,
      );
  } else {
    const last = concluded.filter((c) => c.outcome === "verified").at(-1);
    if (last === undefined)
      throw new WarrantError(
        `${area}/not-verified`,
        `${query} has no verified run: there is no verified change to take`,
      );
    run = last["proposal/ref"];
  }
  const end = concluded.find((c) => c["proposal/ref"] === run);
  const executionRef = end?.["execution/ref"] as string;
  const records = await store.listRecords(query);
  const changeset = records.find(
    (r) =>
      r.kind === "changeset" &&
      (r.body as { "execution/ref"?: unknown })["execution/ref"] === executionRef,
  );
  if (changeset === undefined)
    throw new WarrantError(
      `${area}/no-changeset`,
      `run ${run} was verified before changes were kept in the ledger (no changeset record names ${executionRef}): run the loop again to get a change to take`,
    );
  const body = readRecordBody("changeset", changeset.body);
  if (!body.ok)
    throw new WarrantError(
      "records/body-invalid",
      `the changeset ${changeset.ref}: ${body.errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
    );
  const roles: { role: string; agent: string }[] = [];
  for (const s of facts) {
    if (s.kind !== "passage-charged") continue;
    if (!roles.some((r) => r.role === s.role && r.agent === s["agent/id"]))
      roles.push({ role: s.role, agent: s["agent/id"] });
  }
  return {
    query,
    run,
    executionRef,
    changeset,
    body: body.value as unknown as Found["body"],
    records,
    roles,
  };
}

const bytesOf = (b64: string | undefined): Uint8Array | null =>
  b64 === undefined ? null : new Uint8Array(Buffer.from(b64, "base64"));

function incomplete(area: Area, found: Found): WarrantError {
  return new WarrantError(
    `${area}/changeset-incomplete`,
    `the change of run ${found.run} was kept without its contents (too large, or not only regular files): ${found.changeset.ref} lists it, it cannot be ${area === "diff" ? "shown" : "applied"}`,
  );
}

/**
 * The change a loop's verified run made (by default its last verified run): refused with
 * `loop/not-opened`, `diff/run-unknown`, `diff/not-verified`, `diff/no-changeset` (a loop verified
 * before changes were kept) or `diff/changeset-incomplete`.
 */
export async function loopChange(
  store: LedgerStore,
  query: string,
  opts: ChangeOptions = {},
): Promise<ChangeJson> {
  return changeJson(await findChange(store, query, opts, "diff"), "diff");
}

function changeJson(found: Found, area: Area): ChangeJson {
  const { body } = found;
  if (!body.complete) throw incomplete(area, found);
  return {
    query: found.query,
    run: found.run,
    baseline: body.baseline,
    files: body.files.map((f) => ({
      path: f.path,
      status: f.status,
      before: f.before,
      after: f.after,
    })),
    diff: unifiedDiff(
      body.files.map((f) => ({
        path: f.path,
        before: bytesOf(f["before/content"]),
        after: bytesOf(f["after/content"]),
      })),
    ),
  };
}

export interface ApplyOptions extends ChangeOptions {
  /** The folder to apply to (default: the pack's workspace the run's baseline was taken from). */
  readonly to?: string;
  /** Commit on a new branch of `to`, a clean git work tree, instead of writing its files. */
  readonly git?: boolean;
  /** The branch `git` creates (default `warrant/<short query>`). */
  readonly branch?: string;
}

/** `warrant apply --json`. */
export interface ApplyJson {
  readonly query: string;
  readonly run: string;
  readonly to: string;
  readonly result: "applied" | "already-applied";
  readonly files: readonly { readonly path: string; readonly status: ChangeStatus }[];
  /** With `git`: the branch and its commit. */
  readonly branch?: string;
  readonly commit?: string;
}

/** `warrant/<query without its prefix>`, cut to a safe branch name. */
export function defaultBranch(query: string): string {
  const short = query
    .replace(/^query:/, "")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/\.{2,}/g, ".")
    .replace(/^[.-]+|[.-]+$/g, "")
    .slice(0, 48)
    .replace(/[.-]+$/, "");
  return `warrant/${short === "" ? "change" : short}`;
}

const BRANCH = /^(?!.*\.\.)(?!.*\/\/)(?!.*@\{)(?![/.-])[A-Za-z0-9._/-]{1,200}(?<![/.])(?<!\.lock)$/;

/** A file of `root` as it is now: its digest (null when absent), refused when not a plain file. */
async function currentDigest(root: string, rel: string): Promise<string | null> {
  const target = path.join(root, rel);
  const parent = await realpath(path.dirname(target)).catch(() => undefined);
  const base = await realpath(root);
  if (parent !== undefined && parent !== base && !parent.startsWith(`${base}${path.sep}`))
    throw new WarrantError("apply/outside", `${rel} leads outside ${root} (a symlinked folder)`);
  const st = await lstat(target).catch(() => undefined);
  if (st === undefined) return null;
  if (!st.isFile()) return `not-a-file:${rel}`;
  const fh = await open(target, "r");
  try {
    return digestOfBytes(new Uint8Array(await fh.readFile()));
  } finally {
    await fh.close();
  }
}

/**
 * Applies the verified change to `to`. Before any write every touched file must still hold its
 * baseline content (else `apply/diverged`, naming the files; nothing is written); a change already
 * there is `already-applied`. Refusals: those of `loopChange` under `apply/…`, `apply/diverged`,
 * `apply/not-a-repository`, `apply/dirty-worktree`, `apply/branch-exists`, `apply/branch-invalid`,
 * `apply/git-failed` (a git call failed; no branch made), `apply/write-failed` (after every write
 * made was undone).
 */
export async function applyChange(
  store: LedgerStore,
  query: string,
  opts: ApplyOptions = {},
): Promise<ApplyJson> {
  const found = await findChange(store, query, opts, "apply");
  if (!found.body.complete) throw incomplete("apply", found);
  const to = path.resolve(opts.to ?? found.body["baseline/dir"] ?? ".");
  const st = await lstat(to).catch(() => undefined);
  if (st === undefined || !st.isDirectory())
    throw new WarrantError("apply/target-missing", `${to} is not a folder`);
  const files = found.body.files;
  const listed = files.map((f) => ({ path: f.path, status: f.status }));
  const base = { query: found.query, run: found.run, to, files: listed };
  if (opts.git === true) return applyAsCommit(found, to, opts, base);
  const now = await Promise.all(files.map((f) => currentDigest(to, f.path)));
  if (files.every((f, i) => now[i] === f.after)) return { ...base, result: "already-applied" };
  const diverged = files.filter((f, i) => now[i] !== f.before).map((f) => f.path);
  if (diverged.length > 0)
    throw new WarrantError(
      "apply/diverged",
      `${diverged.join(", ")} in ${to} no longer hold${diverged.length === 1 ? "s" : ""} the content the run started from: nothing was written`,
    );
  await writeAll(
    to,
    files.map((f) => ({
      path: f.path,
      before: bytesOf(f["before/content"]),
      after: bytesOf(f["after/content"]),
    })),
  );
  return { ...base, result: "applied" };
}

interface Write {
  readonly path: string;
  readonly before: Uint8Array | null;
  readonly after: Uint8Array | null;
}

/** Writes `bytes` at `target` through a temporary file beside it and a rename (mode kept). */
async function atomicWrite(target: string, bytes: Uint8Array): Promise<void> {
  const tmp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.warrant-${randomBytes(6).toString("hex")}`,
  );
  const mode = (await lstat(target).catch(() => undefined))?.mode;
  const fh = await open(tmp, "wx", mode === undefined ? 0o644 : mode & 0o7777);
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, target);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

/** Every write, or none: a failure undoes the writes made, then throws `apply/write-failed`. */
async function writeAll(root: string, writes: readonly Write[]): Promise<void> {
  const done: Write[] = [];
  const madeDirs: string[] = [];
  try {
    for (const w of writes) {
      const target = path.join(root, w.path);
      if (w.after === null) {
        await unlink(target);
      } else {
        const dir = path.dirname(target);
        const missing: string[] = [];
        for (
          let d = dir;
          d !== root && !(await lstat(d).catch(() => undefined));
          d = path.dirname(d)
        )
          missing.push(d);
        await mkdir(dir, { recursive: true });
        madeDirs.push(...missing);
        await atomicWrite(target, w.after);
      }
      done.push(w);
    }
  } catch (e) {
    const failures: string[] = [];
    for (const w of done.reverse()) {
      const target = path.join(root, w.path);
      try {
        if (w.before === null) await unlink(target);
        else await atomicWrite(target, w.before);
      } catch (undo) {
        failures.push(`${w.path}: ${(undo as Error).message}`);
      }
    }
    for (const d of madeDirs) await rmdir(d).catch(() => undefined);
    const code = (e as { code?: unknown }).code;
    throw new WarrantError(
      "apply/write-failed",
      `${typeof code === "string" ? `${code}: ` : ""}${(e as Error).message}; ${
        failures.length === 0
          ? "every file written was restored: the folder is as it was"
          : `these could not be restored: ${failures.join("; ")}`
      }`,
    );
  }
}

/** The summarizer's Result of the run, else the plan's hypothesis, as a commit message. */
function commitText(found: Found): string {
  const result = found.records
    .filter((r) => r.kind === "passageEnd")
    .map((r) => r.body as { role?: unknown; message?: { type?: unknown; payload?: unknown } })
    .filter((b) => b.role === "summarizer" && b.message?.type === "Result")
    .map((b) => (b.message?.payload as { summary?: unknown } | undefined)?.summary)
    .filter((s): s is string => typeof s === "string" && s.trim() !== "")
    .at(-1);
  if (result !== undefined) return result.trim();
  const proposal = found.records.find((r) => r.kind === "proposal" && r.ref === found.run);
  const hypothesis = (proposal?.body as { candidate?: { hypothesis?: unknown } } | undefined)
    ?.candidate?.hypothesis;
  return typeof hypothesis === "string" && hypothesis.trim() !== ""
    ? hypothesis.trim()
    : `The verified change of ${found.query}`;
}

function commitMessageOf(found: Found): string {
  const text = commitText(found);
  const subject = subjectOf(text);
  const body = subject === text ? [subject] : [subject, "", text];
  const trailers = [
    `Warrant-Query: ${found.query}`,
    `Warrant-Execution: ${found.executionRef}`,
    ...found.roles.map((r) => `Warrant-Agent: ${r.role} ${r.agent.replace(/^agent:/, "")}`),
  ];
  return `${body.join("\n")}\n\n${trailers.join("\n")}\n`;
}

/** The first sentence of the first line, cut at a word before 72 characters. */
function subjectOf(text: string): string {
  const line = (text.split("\n")[0] as string).trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  if (sentence.length <= 72) return sentence.replace(/\.$/, "");
  const cut = sentence.slice(0, 71);
  const space = cut.lastIndexOf(" ");
  return `${(space > 40 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

async function applyAsCommit(
  found: Found,
  to: string,
  opts: ApplyOptions,
  base: Omit<ApplyJson, "result">,
): Promise<ApplyJson> {
  const tree = await gitWorkTree(to);
  if (tree === undefined)
    throw new WarrantError("apply/not-a-repository", `${to} is not a git work tree (--git)`);
  const branch = opts.branch ?? defaultBranch(found.query);
  if (!BRANCH.test(branch))
    throw new WarrantError("apply/branch-invalid", `${branch} is not a branch name git takes`);
  const tip = await branchTip(tree.top, branch);
  if (tip !== undefined) {
    const message = await commitMessage(tree.top, tip);
    if (message.includes(`Warrant-Execution: ${found.executionRef}\n`))
      return { ...base, result: "already-applied", branch, commit: tip };
    throw new WarrantError(
      "apply/branch-exists",
      `branch ${branch} already exists in ${tree.top} (not this run's commit): name another with --branch`,
    );
  }
  const dirty = await gitDirtyPaths(tree.top);
  if (dirty.length > 0)
    throw new WarrantError(
      "apply/dirty-worktree",
      `${tree.top} has uncommitted changes (${dirty.slice(0, 5).join(", ")}${dirty.length > 5 ? ", …" : ""}): commit or stash them first`,
    );
  const files = found.body.files;
  const now = await Promise.all(files.map((f) => currentDigest(to, f.path)));
  const diverged = files.filter((f, i) => now[i] !== f.before).map((f) => f.path);
  if (diverged.length > 0)
    throw new WarrantError(
      "apply/diverged",
      `${diverged.join(", ")} in ${to} no longer hold${diverged.length === 1 ? "s" : ""} the content the run started from: nothing was committed`,
    );
  const commit = await commitOnNewBranch(
    tree.top,
    branch,
    files.map((f) => ({ path: `${tree.prefix}${f.path}`, bytes: bytesOf(f["after/content"]) })),
    commitMessageOf(found),
  ).catch((e: unknown) => {
    // Nothing of the user's checkout was touched: only objects git keeps unreferenced were written.
    throw new WarrantError(
      "apply/git-failed",
      `${(e as Error).message} (in ${tree.top}; no branch was made)`,
    );
  });
  return { ...base, result: "applied", branch, commit };
}
