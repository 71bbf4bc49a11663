// The change a verified run made, kept after its environment is gone: each regular file it added,
// modified or deleted (ignored paths left out), with the baseline's and the final contents, so
// `diff` can show it and `apply` can check a target and write it (the `changeset` record).
import type * as Wire from "../core/contracts/types/ledger-records.v1.js";
import type { Environment, EnvironmentChanges } from "../core/ports/sandbox.js";
import { digestOf, digestOfBytes } from "../core/records/canonical.js";
import type { Problem } from "../core/result.js";
import type { Glob } from "../core/taskpack/glob.js";
import { isIgnored } from "../core/taskpack/ignore.js";

/** Contents past this many bytes in all are left out: the change is listed, not applicable. */
export const CHANGESET_MAX_BYTES = 8 << 20;

export type ChangeStatus = Wire.ChangesetFile["status"];

/**
 * One file of a change, as contracts/ledger-records.v1.json types it: `before` and `after` are the
 * `sha256:…` of the baseline's and the final bytes (null for an added or a deleted file);
 * `before/content` and `after/content` the bytes in base64 (absent for the side that does not
 * exist, and in an incomplete set).
 */
export type ChangesetFile = Readonly<Wire.ChangesetFile>;

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

/** When capture must stop: the runtime's clock, read through its port, and the deadline on it. */
export interface CaptureBound {
  /** Milliseconds on the runtime's clock. */
  readonly now: () => number;
  readonly deadline: number;
  /** How long the bound was (for the message). */
  readonly timeMs: number;
}

interface Entry {
  readonly path: string;
  readonly status: ChangeStatus;
  readonly before: string | null;
  readonly after: string | null;
  readonly beforeBytes?: Uint8Array;
  readonly afterBytes?: Uint8Array;
}

const isFileDigest = (d: string | undefined): d is string => d?.startsWith("sha256:") === true;

/**
 * What the environment changed against its baseline, read before the environment is destroyed.
 * Bounded: contents are read only while the walk was complete, the clock is before
 * `bound.deadline` and they fit; past the deadline the rest is listed from the walk's digests
 * and the set is incomplete (`environment/too-many-changes`). The whole record — paths, digests,
 * findings and contents — stays within CHANGESET_MAX_BYTES (`changeset/too-large`: contents left
 * out, then the listing cut).
 */
export async function captureChangeset(
  env: Environment,
  changes: EnvironmentChanges,
  input: {
    readonly query: string;
    readonly proposalRef: string;
    readonly environmentRef: string;
    readonly baselineDir: string;
    readonly ignore: readonly Glob[];
  },
  bound?: CaptureBound,
  maxBytes: number = CHANGESET_MAX_BYTES,
): Promise<CapturedChangeset> {
  const skipped: Problem[] = [...changes.findings];
  if (!changes.complete)
    skipped.push({
      code: "changeset/walk-incomplete",
      path: "",
      message: "the change walk stopped at a bound",
    });
  const touched: { path: string; status: ChangeStatus; digest: string; before?: string }[] = [
    ...changes.added.map((c) => ({ ...c, status: "added" as const })),
    ...changes.modified.map((c) => ({ ...c, status: "modified" as const })),
    ...changes.deleted.map((c) => ({ ...c, status: "deleted" as const })),
  ]
    .filter((c) => !isIgnored(input.ignore, c.path))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const notAFile = (p: string, why: string) =>
    skipped.push({ code: "changeset/not-a-file", path: "", message: `${p}: ${why}` });
  // Contents are read while they can still all be kept: a complete walk, time left, room left.
  let reading = changes.complete;
  let total = 0;
  const stopReading = (problem: Problem) => {
    if (!reading) return;
    reading = false;
    skipped.push(problem);
  };
  const entries: Entry[] = [];
  for (const t of touched) {
    const { path, status } = t;
    if (reading && bound !== undefined && bound.now() > bound.deadline)
      stopReading({
        code: "environment/too-many-changes",
        path: "",
        message: `change capture passed its time bound of ${bound.timeMs} ms: contents left out`,
      });
    if (!reading) {
      // Listed from the walk's digests alone: the set is incomplete and never applied.
      const before = status === "added" ? null : status === "deleted" ? t.digest : t.before;
      const after = status === "deleted" ? null : t.digest;
      if (before !== null && !isFileDigest(before)) {
        notAFile(path, "the baseline entry was not a regular file");
        continue;
      }
      if (after !== null && !isFileDigest(after)) {
        notAFile(path, "the run left something other than a regular file");
        continue;
      }
      entries.push({ path, status, before, after });
      continue;
    }
    let beforeBytes: Uint8Array | undefined;
    let afterBytes: Uint8Array | undefined;
    if (status !== "added") {
      if (status === "deleted" && !isFileDigest(t.digest)) {
        notAFile(path, "the baseline entry was not a regular file");
        continue;
      }
      beforeBytes = await env.readBaseline?.(path, maxBytes + 1);
      if (beforeBytes === undefined) {
        notAFile(path, "its baseline content cannot be read as a regular file");
        continue;
      }
    }
    if (status !== "deleted") {
      if (!isFileDigest(t.digest)) {
        notAFile(path, "the run left something other than a regular file");
        continue;
      }
      const r = await env.readPart(path, maxBytes + 1);
      if (!r.ok) {
        notAFile(path, r.errors[0]?.message ?? "unreadable");
        continue;
      }
      if (r.value.truncated) {
        // Larger than the whole bound: listed by its digest, and no contents are kept.
        stopReading(tooLarge(maxBytes));
        const before = beforeBytes === undefined ? null : digestOfBytes(beforeBytes);
        entries.push({ path, status, before, after: t.digest });
        continue;
      }
      afterBytes = r.value.bytes;
    }
    total += (beforeBytes?.length ?? 0) + (afterBytes?.length ?? 0);
    // Past the bound the contents cannot all be kept: the bytes already read are dropped below.
    if (total > maxBytes) stopReading(tooLarge(maxBytes));
    entries.push({
      path,
      status,
      before: beforeBytes === undefined ? null : digestOfBytes(beforeBytes),
      after: afterBytes === undefined ? null : digestOfBytes(afterBytes),
      ...(beforeBytes === undefined ? {} : { beforeBytes }),
      ...(afterBytes === undefined ? {} : { afterBytes }),
    });
  }
  return withinSize(entries, skipped, reading, input, maxBytes);
}

function tooLarge(maxBytes: number): Problem {
  return {
    code: "changeset/too-large",
    path: "",
    message: `the change is larger than ${maxBytes} bytes: contents left out`,
  };
}

const listedOf = (e: Entry, contents: boolean): ChangesetFile => ({
  path: e.path,
  status: e.status,
  before: e.before,
  after: e.after,
  ...(contents && e.beforeBytes !== undefined ? { "before/content": toBase64(e.beforeBytes) } : {}),
  ...(contents && e.afterBytes !== undefined ? { "after/content": toBase64(e.afterBytes) } : {}),
});

const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

/**
 * The record, its whole size within `maxBytes`: with contents when every one was read and they
 * fit, else without; a listing that alone passes the bound is cut (`changeset/too-large`).
 */
function withinSize(
  entries: readonly Entry[],
  skipped: Problem[],
  contentsRead: boolean,
  input: Parameters<typeof captureChangeset>[2],
  maxBytes: number,
): CapturedChangeset {
  const build = (files: readonly ChangesetFile[]): CapturedChangeset => ({
    "query/id": input.query,
    "proposal/ref": input.proposalRef,
    "environment/ref": input.environmentRef,
    baseline: baselineDigest(files),
    "baseline/dir": input.baselineDir,
    files,
    complete: skipped.length === 0,
    ...(skipped.length === 0 ? {} : { skipped }),
  });
  // Room for what is added to the body when it is stored (its execution ref, a signature).
  const limit = maxBytes - RECORD_ENVELOPE_BYTES;
  if (contentsRead) {
    const full = build(entries.map((e) => listedOf(e, true)));
    if (jsonBytes(full) <= limit) return full;
    skipped.push(tooLarge(maxBytes));
  }
  let files = entries.map((e) => listedOf(e, false));
  let record = build(files);
  if (jsonBytes(record) <= limit) return record;
  const cut: Problem = {
    code: "changeset/too-large",
    path: "",
    message: `the listing of ${entries.length} changed files is larger than ${maxBytes} bytes: only the first are listed`,
  };
  skipped.push(cut);
  // Keep the longest prefix that fits: sizes summed, then checked on the record itself.
  const fixed = jsonBytes(build([]));
  let size = fixed;
  let keep = 0;
  while (keep < files.length && size + jsonBytes(files[keep]) + 1 <= limit) {
    size += jsonBytes(files[keep]) + 1;
    keep += 1;
  }
  files = files.slice(0, keep);
  record = build(files);
  while (files.length > 0 && jsonBytes(record) > limit) {
    files = files.slice(0, Math.floor(files.length * 0.99));
    record = build(files);
  }
  return record;
}

/** Bytes kept free in the changeset's bound for the fields added when it is stored. */
const RECORD_ENVELOPE_BYTES = 2048;
