// The verified change of a loop, as the user takes it: `loopChange` reads the `changeset` record of
// a verified run and shows it as a git-style diff; `applyChange` writes it into a folder or commits
// it on a new branch of a git work tree, and only after the loop has passed its audit, every path
// has passed the path rule and every content its digest, and every touched file still holds its
// baseline content. Writes go through a contained tree: never through a symbolic link.
import path from "node:path";
import { ContainedTree } from "../adapters/fs/contained-tree.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import { auditBeforeApply } from "./apply-audit.js";
import { applyToFolder } from "./apply-files.js";
import { applyAsCommit } from "./apply-git.js";
import { type ChangeOptions, type Found, findChange, incomplete } from "./change-record.js";
import { type ChangeStatus, checkedFiles } from "./changeset-check.js";
import { changesetDiff } from "./changeset-diff.js";

export type { ChangeOptions } from "./change-record.js";
export type { ChangeStatus } from "./changeset-check.js";

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
  /** Git-style unified diff of every file (no ignored files), paths quoted as git quotes them. */
  readonly diff: string;
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
  const found = await findChange(store, query, opts, "diff");
  const { body } = found;
  if (!body.complete) throw incomplete("diff", found);
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
    diff: changesetDiff(body) ?? "",
  };
}

export interface ApplyOptions extends ChangeOptions {
  /** The folder to apply to (default: the pack's workspace the run's baseline was taken from). */
  readonly to?: string;
  /** Commit on a new branch of `to`, a git work tree, instead of writing its files. */
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

/**
 * Applies the verified change to `to` (default: the workspace the run started from). In order:
 * the refusals of `loopChange` under `apply/…`; `apply/audit-failed` (the loop fails its audit);
 * `apply/path-invalid` (a path the run's path rule refuses) and `apply/content-mismatch` (a content
 * that is not what its digest names); `apply/target-missing`, `apply/outside` (a symbolic link on
 * the way to a touched file, or as the target itself); `apply/diverged` (a touched file no longer
 * holds its baseline content; nothing written); then, writing into the folder, `apply/write-failed`
 * (after every write made was undone), or with `git`: `apply/not-a-repository`,
 * `apply/dirty-worktree`, `apply/branch-exists`, `apply/branch-invalid`, `apply/git-failed`. A
 * change already there is `already-applied`.
 */
export async function applyChange(
  store: LedgerStore,
  query: string,
  opts: ApplyOptions = {},
): Promise<ApplyJson> {
  const found = await findChange(store, query, opts, "apply");
  await auditBeforeApply(store, found);
  return applyAuditedChange(found, opts);
}

/**
 * The rest of `applyChange`, for a change found and audited: the path rule, the digests, then the
 * target (contained), the baseline check and the writes or the commit.
 */
export async function applyAuditedChange(
  found: Found,
  opts: ApplyOptions = {},
): Promise<ApplyJson> {
  if (!found.body.complete) throw incomplete("apply", found);
  const files = checkedFiles(found.changeset.ref, found.body.files);
  const to = path.resolve(opts.to ?? found.body["baseline/dir"] ?? ".");
  const listed = files.map((f) => ({ path: f.path, status: f.status }));
  const base = { query: found.query, run: found.run, to, files: listed };
  const tree = await ContainedTree.open(to);
  try {
    if (opts.git === true) {
      const r = await applyAsCommit(found, tree, files, opts.branch);
      return { ...base, ...r };
    }
    return { ...base, result: await applyToFolder(tree, files) };
  } finally {
    await tree.close();
  }
}
