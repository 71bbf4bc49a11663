// What a stored change must be before anything of it is written: every path one the run itself
// could have written (the plans' path rule: relative, normalised, no `..`, no `.git`), each listed
// once and never both a file and a folder, and every content the bytes its digest names.
import { digestOfBytes } from "../core/records/canonical.js";
import { pointer, WarrantError } from "../core/result.js";
import { normaliseRelativePath } from "../core/taskpack/relative-path.js";
import { terminalLine } from "../core/text/terminal-text.js";
import type { ChangeStatus, ChangesetFile } from "../runtime/changeset.js";

export type { ChangeStatus, ChangesetFile } from "../runtime/changeset.js";

const bytesOf = (b64: string | undefined): Uint8Array | null =>
  b64 === undefined ? null : new Uint8Array(Buffer.from(b64, "base64"));

/** The bytes of each side: null for the side where the file is absent. */
export interface CheckedFile {
  readonly path: string;
  readonly status: ChangeStatus;
  readonly before: Uint8Array | null;
  readonly after: Uint8Array | null;
}

/**
 * The files of a change, checked: `apply/path-invalid` for a path the path rule refuses (naming
 * the rule), listed twice, or both a file and a folder of another; `apply/content-mismatch` for a
 * side whose content is not the bytes its digest names, or a status its sides contradict.
 * `ref` names the record in messages; pointers are into its body.
 */
export function checkedFiles(ref: string, files: readonly ChangesetFile[]): CheckedFile[] {
  const seen = new Set<string>();
  for (const [i, f] of files.entries()) {
    const at = pointer("files", i, "path");
    const rule = normaliseRelativePath(f.path);
    const why = !rule.ok
      ? (rule.errors[0]?.message ?? "refused")
      : rule.value !== f.path
        ? `not in its normal form (${rule.value})`
        : seen.has(f.path)
          ? "listed twice"
          : undefined;
    if (why !== undefined)
      throw new WarrantError(
        "apply/path-invalid",
        `the change ${ref} lists ${terminalLine(JSON.stringify(f.path))} (${at}): ${terminalLine(why)}: no run may write there, nothing was written`,
        { path: at },
      );
    seen.add(f.path);
  }
  for (const [i, f] of files.entries()) {
    const parts = f.path.split("/");
    for (let n = 1; n < parts.length; n++) {
      const folder = parts.slice(0, n).join("/");
      if (seen.has(folder))
        throw new WarrantError(
          "apply/path-invalid",
          `the change ${ref} lists ${terminalLine(folder)} as a file and ${terminalLine(f.path)} inside it (${pointer("files", i, "path")}): nothing was written`,
          { path: pointer("files", i, "path") },
        );
    }
  }
  return files.map((f, i) => {
    const before = side(ref, i, "before", f.before, f["before/content"], f.status !== "added");
    const after = side(ref, i, "after", f.after, f["after/content"], f.status !== "deleted");
    return { path: f.path, status: f.status, before, after };
  });
}

function side(
  ref: string,
  i: number,
  name: "before" | "after",
  digest: string | null,
  content: string | undefined,
  present: boolean,
): Uint8Array | null {
  const bytes = bytesOf(content);
  const at = pointer("files", i, name);
  const refuse = (what: string) =>
    new WarrantError(
      "apply/content-mismatch",
      `the change ${ref} (${at}): ${what}: the record was altered, nothing was written`,
      { path: at },
    );
  if (!present) {
    if (digest !== null || bytes !== null)
      throw refuse(`the file has no ${name} side for its status, yet one is recorded`);
    return null;
  }
  if (digest === null || bytes === null) throw refuse(`the ${name} side is missing`);
  if (digestOfBytes(bytes) !== digest)
    throw refuse(
      `the ${name} content's digest is ${digestOfBytes(bytes)}, not the ${digest} recorded`,
    );
  // The host writes contents in canonical base64: any other spelling was not written by it.
  if (Buffer.from(bytes).toString("base64") !== content)
    throw refuse(`the ${name} content is not canonical base64`);
  return bytes;
}
