// `warrant apply --git`: the verified change as one commit on a new branch of a git work tree, made
// through a private index (the checkout, the index and the current branch stay as they are), its
// message the run's Result with Warrant's trailers; `already-applied` when a commit of the branch
// carries this run's trailers, as git's own trailer parser reads them.

import type { ContainedTree } from "../adapters/fs/contained-tree.js";
import {
  branchTip,
  branchTrailers,
  commitOnNewBranch,
  gitStatus,
  gitWorkTree,
} from "../adapters/fs/git.js";
import { ADMISSION_STEP } from "../core/loop/next-action.js";
import { operatorActRef } from "../core/records/operator-act.js";
import { WarrantError } from "../core/result.js";
import { terminalLine } from "../core/text/terminal-text.js";
import { divergedFiles } from "./apply-files.js";
import type { Found } from "./change-record.js";
import type { CheckedFile } from "./changeset-check.js";
import { commitMessage } from "./commit-message.js";
import { operatorNameOf } from "./operators.js";
import { actsOnRun } from "./record-view.js";

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

/** The summarizer's Result of the run, else the plan's hypothesis. */
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

/**
 * Who approved the run's mutations, in the order of the approvals, each name once: the operators of
 * the acts its execution names (else of the approvals posted for its steps, admission aside).
 */
export function approversOf(found: Found): string[] {
  const execution = found.records.find(
    (r) => r.kind === "execution" && r.ref === found.executionRef,
  );
  const named = (execution?.body as { approvals?: { "act/ref"?: unknown }[] } | undefined)
    ?.approvals;
  const byRef = new Map(found.acts.map((a) => [operatorActRef(a), a]));
  const acts =
    named !== undefined && named.length > 0
      ? named.flatMap((a) => {
          const act = typeof a["act/ref"] === "string" ? byRef.get(a["act/ref"]) : undefined;
          return act === undefined ? [] : [act];
        })
      : actsOnRun(found.acts, found.run).filter(
          (a) => a.kind === "approve" && !a.target.endsWith(` ${ADMISSION_STEP}`),
        );
  const names: string[] = [];
  for (const a of acts) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
    const name = operatorNameOf(a.operator).replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

function messageOf(found: Found): string {
  return commitMessage(commitText(found), [
    ["Warrant-Query", found.query],
    ["Warrant-Execution", found.executionRef],
    ...found.roles.map(
      (r) => ["Warrant-Agent", `${r.role} ${r.agent.replace(/^agent:/, "")}`] as [string, string],
    ),
    // A name holds no white space or control character: one line, never another trailer.
    ...approversOf(found).map((name) => ["Warrant-Approved-By", name] as [string, string]),
  ]);
}

/** The newest commit of `branch` whose parsed trailers name this query and this execution. */
async function commitOfRun(top: string, branch: string, found: Found): Promise<string | undefined> {
  const has = (trailers: readonly (readonly [string, string])[], key: string, value: string) =>
    trailers.some(([k, v]) => k.toLowerCase() === key.toLowerCase() && v === value);
  for (const c of await branchTrailers(top, branch))
    if (
      has(c.trailers, "Warrant-Query", found.query) &&
      has(c.trailers, "Warrant-Execution", found.executionRef)
    )
      return c.commit;
  return undefined;
}

/** A touched path (from the top) and an untracked one are the same, or one holds the other. */
function collides(touched: string, untracked: string): boolean {
  return (
    touched === untracked ||
    untracked.startsWith(`${touched}/`) ||
    touched.startsWith(`${untracked.replace(/\/$/, "")}/`)
  );
}

const listed = (paths: readonly string[]) =>
  `${paths.slice(0, 5).map(terminalLine).join(", ")}${paths.length > 5 ? ", …" : ""}`;

export interface CommitApplied {
  readonly result: "applied" | "already-applied";
  readonly branch: string;
  readonly commit: string;
}

/**
 * Commits the checked change on a new branch of the work tree holding `tree`. Refusals:
 * `apply/not-a-repository`, `apply/branch-invalid`, `apply/branch-exists` (a branch without this
 * run's commit), `apply/dirty-worktree` (tracked changes, or an untracked file where the change
 * goes), `apply/diverged`, `apply/outside` (a link on a touched path), `apply/git-failed`.
 */
export async function applyAsCommit(
  found: Found,
  tree: ContainedTree,
  files: readonly CheckedFile[],
  branchName: string | undefined,
): Promise<CommitApplied> {
  const to = tree.root;
  const work = await gitWorkTree(to);
  if (work === undefined)
    throw new WarrantError("apply/not-a-repository", `${to} is not a git work tree (--git)`);
  const branch = branchName ?? defaultBranch(found.query);
  if (!BRANCH.test(branch))
    throw new WarrantError(
      "apply/branch-invalid",
      `${terminalLine(branch)} is not a branch name git takes`,
    );
  if ((await branchTip(work.top, branch)) !== undefined) {
    const commit = await commitOfRun(work.top, branch, found);
    if (commit !== undefined) return { result: "already-applied", branch, commit };
    throw new WarrantError(
      "apply/branch-exists",
      `branch ${branch} already exists in ${work.top} and no commit of it carries this run's trailers: name another with --branch`,
    );
  }
  const status = await gitStatus(work.top);
  if (status.changed.length > 0)
    throw new WarrantError(
      "apply/dirty-worktree",
      `${work.top} has uncommitted changes (${listed(status.changed)}): commit or stash them first`,
    );
  const touched = files.map((f) => `${work.prefix}${f.path}`);
  const inTheWay = status.untracked.filter((u) => touched.some((t) => collides(t, u)));
  if (inTheWay.length > 0)
    throw new WarrantError(
      "apply/dirty-worktree",
      `${work.top} has untracked files where the change goes (${listed(inTheWay)}): move or commit them first`,
    );
  const diverged = await divergedFiles(tree, files);
  if (diverged.length > 0)
    throw new WarrantError(
      "apply/diverged",
      `${listed(diverged)} in ${to} no longer hold${diverged.length === 1 ? "s" : ""} the content the run started from: nothing was committed`,
    );
  const commit = await commitOnNewBranch(
    work.top,
    branch,
    files.map((f) => ({ path: `${work.prefix}${f.path}`, bytes: f.after })),
    messageOf(found),
  ).catch((e: unknown) => {
    // Nothing of the user's checkout was touched: only objects git keeps unreferenced were written.
    throw new WarrantError(
      "apply/git-failed",
      `${(e as Error).message} (in ${work.top}; no branch was made)`,
    );
  });
  return { result: "applied", branch, commit };
}
