// Comparison of workspace snapshots for the verifier's file checks (`unchanged`,
// `onlyAllowedChanged`): from two full snapshots, or from an environment's own change list.
import type { EnvironmentChanges } from "../ports/sandbox.js";
import { type Glob, matchesAny } from "./glob.js";

export interface SnapshotDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

/** Paths added, removed and changed between two snapshots, each list sorted. */
export function diffSnapshots(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): SnapshotDiff {
  const added: string[] = [];
  const removed: string[] = [];
  const changed: string[] = [];
  for (const [p, d] of after) {
    const b = before.get(p);
    if (b === undefined) added.push(p);
    else if (b !== d) changed.push(p);
  }
  for (const p of before.keys()) if (!after.has(p)) removed.push(p);
  return { added: added.sort(), removed: removed.sort(), changed: changed.sort() };
}

/** An environment's changes as a diff (deletions are `removed`, modifications `changed`). */
export function changesAsDiff(changes: EnvironmentChanges): SnapshotDiff {
  const paths = (xs: readonly { readonly path: string }[]) => xs.map((x) => x.path).sort();
  return {
    added: paths(changes.added),
    removed: paths(changes.deleted),
    changed: paths(changes.modified),
  };
}

function touched(diff: SnapshotDiff): string[] {
  return [...diff.added, ...diff.removed, ...diff.changed].sort();
}

/** Paths matching `globs` that were added, removed or changed (empty: the check passes). */
export function changedUnder(diff: SnapshotDiff, globs: readonly Glob[]): string[] {
  return touched(diff).filter((p) => matchesAny(globs, p));
}

/** Paths touched outside the allow-list (empty: the check passes). */
export function changedOutside(diff: SnapshotDiff, allow: readonly Glob[]): string[] {
  return touched(diff).filter((p) => !matchesAny(allow, p));
}
