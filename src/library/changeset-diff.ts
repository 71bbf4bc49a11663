// A changeset record's body as a git-style unified diff (pure): each file's before and after
// contents (base64 in the record) compared whole. A changeset kept without its contents (too large,
// or not only regular files) has no diff.
import { unifiedDiff } from "../core/taskpack/unified-diff.js";

interface ChangesetLike {
  readonly complete?: unknown;
  readonly files?: readonly {
    readonly path: string;
    readonly before?: string | null;
    readonly after?: string | null;
    readonly "before/content"?: string;
    readonly "after/content"?: string;
  }[];
}

const bytesOf = (b64: string | undefined): Uint8Array | null =>
  b64 === undefined ? null : new Uint8Array(Buffer.from(b64, "base64"));

/** The diff of a changeset's files; undefined when it was kept without its contents. */
export function changesetDiff(body: ChangesetLike): string | undefined {
  if (body.complete !== true || !Array.isArray(body.files)) return undefined;
  const missing = body.files.some(
    (f) =>
      (typeof f.before === "string" && f["before/content"] === undefined) ||
      (typeof f.after === "string" && f["after/content"] === undefined),
  );
  if (missing) return undefined;
  return unifiedDiff(
    body.files.map((f) => ({
      path: f.path,
      before: bytesOf(f["before/content"]),
      after: bytesOf(f["after/content"]),
    })),
  );
}
