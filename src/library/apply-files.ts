// `warrant apply` into a folder: every touched file compared with the run's baseline first, then
// each written atomically through the contained tree, all or nothing (a failure undoes the writes
// made and the folders made).
import type { ContainedTree, Current } from "../adapters/fs/contained-tree.js";
import { digestOfBytes } from "../core/records/canonical.js";
import { WarrantError } from "../core/result.js";
import { terminalLine } from "../core/text/terminal-text.js";
import type { CheckedFile } from "./changeset-check.js";

const digestOf = (c: Current, rel: string): string | null =>
  c.kind === "absent" ? null : c.kind === "file" ? digestOfBytes(c.bytes) : `not-a-file:${rel}`;

const same = (a: string | null, b: Uint8Array | null) =>
  b === null ? a === null : a === digestOfBytes(b);

/** The digests of the touched files as they are now (a link on the way: `apply/outside`). */
async function currentDigests(
  tree: ContainedTree,
  files: readonly CheckedFile[],
): Promise<(string | null)[]> {
  const now: (string | null)[] = [];
  // One at a time: a tree's folders are opened once, and in order.
  for (const f of files) now.push(digestOf(await tree.read(f.path), f.path));
  return now;
}

/** The touched files that no longer hold the content the run started from. */
export async function divergedFiles(
  tree: ContainedTree,
  files: readonly CheckedFile[],
): Promise<string[]> {
  const now = await currentDigests(tree, files);
  return files.filter((f, i) => !same(now[i] ?? null, f.before)).map((f) => f.path);
}

/**
 * Writes the checked change into the tree: `already-applied` when every touched file holds the
 * run's content; `apply/diverged` (nothing written) when one holds neither; else every write, or
 * none (`apply/write-failed` after undoing).
 */
export async function applyToFolder(
  tree: ContainedTree,
  files: readonly CheckedFile[],
): Promise<"applied" | "already-applied"> {
  const now = await currentDigests(tree, files);
  if (files.every((f, i) => same(now[i] ?? null, f.after))) return "already-applied";
  const diverged = files.filter((f, i) => !same(now[i] ?? null, f.before)).map((f) => f.path);
  if (diverged.length > 0)
    throw new WarrantError(
      "apply/diverged",
      `${diverged.map(terminalLine).join(", ")} in ${tree.root} no longer hold${diverged.length === 1 ? "s" : ""} the content the run started from: nothing was written`,
    );
  await writeAll(tree, files);
  return "applied";
}

/** Every write, or none: a failure undoes the writes made, then throws `apply/write-failed`. */
async function writeAll(tree: ContainedTree, files: readonly CheckedFile[]): Promise<void> {
  const done: CheckedFile[] = [];
  try {
    for (const f of files) {
      if (f.after === null) await tree.remove(f.path);
      else await tree.write(f.path, f.after);
      done.push(f);
    }
  } catch (e) {
    const failures: string[] = [];
    for (const f of done.reverse()) {
      try {
        if (f.before === null) await tree.remove(f.path);
        else await tree.write(f.path, f.before);
      } catch (undo) {
        failures.push(`${terminalLine(f.path)}: ${(undo as Error).message}`);
      }
    }
    await tree.removeMade();
    const after =
      failures.length === 0
        ? "every file written was restored: the folder is as it was"
        : `these could not be restored: ${failures.join("; ")}`;
    // A refusal met while writing (a link put on the way since the check) keeps its code.
    if (e instanceof WarrantError) throw new WarrantError(e.code, `${e.message}; ${after}`);
    const code = (e as { code?: unknown }).code;
    throw new WarrantError(
      "apply/write-failed",
      `${typeof code === "string" ? `${code}: ` : ""}${(e as Error).message}; ${after}`,
    );
  }
}
