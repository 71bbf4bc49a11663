// The change a verified run made, kept after its environment is gone: each regular file it added,
// modified or deleted (ignored paths left out), with the baseline's and the final contents, so
// `diff` can show it and `apply` can check a target and write it (the `changeset` record).
import { digestOf, digestOfBytes } from "../core/records/canonical.js";
import type { Problem } from "../core/result.js";
import type { EnvironmentChanges } from "../core/sandbox/sandbox-port.js";
import type { Glob } from "../core/taskpack/glob.js";
import { isIgnored } from "../core/taskpack/ignore.js";
import type { RunEnvironment } from "./ports.js";

/** Contents past this many bytes in all are left out: the change is listed, not applicable. */
export const CHANGESET_MAX_BYTES = 8 << 20;

export type ChangeStatus = "modified" | "added" | "deleted";

export interface ChangesetFile {
  readonly path: string;
  readonly status: ChangeStatus;
  /** `sha256:…` of the baseline's bytes; null for an added file. */
  readonly before: string | null;
  /** `sha256:…` of the final bytes; null for a deleted file. */
  readonly after: string | null;
  /** Base64 of the bytes (absent for the side that does not exist, and in an incomplete set). */
  readonly "before/content"?: string;
  readonly "after/content"?: string;
}

export interface ChangesetBody {
  readonly "query/id": string;
  readonly "proposal/ref": string;
  readonly "execution/ref": string;
  readonly "environment/ref": string;
  /** Digest of the state the change applies to: each touched path's baseline digest (or null). */
  readonly baseline: string;
  readonly "baseline/dir": string;
  readonly files: readonly ChangesetFile[];
  /** False when contents were left out or a change could not be kept: it cannot be applied. */
  readonly complete: boolean;
  readonly skipped?: readonly Problem[];
}

export type CapturedChangeset = Omit<ChangesetBody, "execution/ref">;

const toBase64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

/** The digest `baseline` is: over each touched path's baseline digest. */
export function baselineDigest(files: readonly Pick<ChangesetFile, "path" | "before">[]): string {
  return digestOf(Object.fromEntries(files.map((f) => [f.path, f.before])));
}

/** What the environment changed against its baseline, read before the environment is destroyed. */
export async function captureChangeset(
  env: RunEnvironment,
  changes: EnvironmentChanges,
  input: {
    readonly query: string;
    readonly proposalRef: string;
    readonly environmentRef: string;
    readonly baselineDir: string;
    readonly ignore: readonly Glob[];
  },
): Promise<CapturedChangeset> {
  const skipped: Problem[] = [...changes.findings];
  if (!changes.complete)
    skipped.push({
      code: "changeset/walk-incomplete",
      path: "",
      message: "the change walk stopped at a bound",
    });
  const touched: { path: string; status: ChangeStatus }[] = [
    ...changes.added.map((c) => ({ path: c.path, status: "added" as const })),
    ...changes.modified.map((c) => ({ path: c.path, status: "modified" as const })),
    ...changes.deleted.map((c) => ({ path: c.path, status: "deleted" as const })),
  ]
    .filter((c) => !isIgnored(input.ignore, c.path))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const digestOfChange = new Map(
    [...changes.added, ...changes.modified, ...changes.deleted].map((c) => [c.path, c.digest]),
  );
  let total = 0;
  const files: {
    path: string;
    status: ChangeStatus;
    before: string | null;
    after: string | null;
    beforeBytes?: Uint8Array;
    afterBytes?: Uint8Array;
  }[] = [];
  const notAFile = (p: string, why: string) =>
    skipped.push({ code: "changeset/not-a-file", path: "", message: `${p}: ${why}` });
  for (const { path, status } of touched) {
    let beforeBytes: Uint8Array | undefined;
    let afterBytes: Uint8Array | undefined;
    if (status !== "added") {
      if (status === "deleted" && !(digestOfChange.get(path) ?? "").startsWith("sha256:")) {
        notAFile(path, "the baseline entry was not a regular file");
        continue;
      }
      beforeBytes = await env.readBaseline?.(path, CHANGESET_MAX_BYTES + 1);
      if (beforeBytes === undefined) {
        notAFile(path, "its baseline content cannot be read as a regular file");
        continue;
      }
    }
    if (status !== "deleted") {
      if (!(digestOfChange.get(path) ?? "").startsWith("sha256:")) {
        notAFile(path, "the run left something other than a regular file");
        continue;
      }
      const r = await env.read(path, CHANGESET_MAX_BYTES + 1);
      if (!r.ok || r.value.truncated) {
        notAFile(path, r.ok ? "over the size bound" : (r.errors[0]?.message ?? "unreadable"));
        continue;
      }
      afterBytes = r.value.bytes;
    }
    total += (beforeBytes?.length ?? 0) + (afterBytes?.length ?? 0);
    files.push({
      path,
      status,
      before: beforeBytes === undefined ? null : digestOfBytes(beforeBytes),
      after: afterBytes === undefined ? null : digestOfBytes(afterBytes),
      ...(beforeBytes === undefined ? {} : { beforeBytes }),
      ...(afterBytes === undefined ? {} : { afterBytes }),
    });
  }
  const withContents = total <= CHANGESET_MAX_BYTES;
  if (!withContents)
    skipped.push({
      code: "changeset/too-large",
      path: "",
      message: `the changed files hold ${total} bytes, over ${CHANGESET_MAX_BYTES}: contents left out`,
    });
  const listed: ChangesetFile[] = files.map((f) => ({
    path: f.path,
    status: f.status,
    before: f.before,
    after: f.after,
    ...(withContents && f.beforeBytes !== undefined
      ? { "before/content": toBase64(f.beforeBytes) }
      : {}),
    ...(withContents && f.afterBytes !== undefined
      ? { "after/content": toBase64(f.afterBytes) }
      : {}),
  }));
  return {
    "query/id": input.query,
    "proposal/ref": input.proposalRef,
    "environment/ref": input.environmentRef,
    baseline: baselineDigest(listed),
    "baseline/dir": input.baselineDir,
    files: listed,
    complete: skipped.length === 0,
    ...(skipped.length === 0 ? {} : { skipped }),
  };
}
