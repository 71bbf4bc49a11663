// What a command changed in its environment, against the pinned baseline. In overlay mode only the
// upper layer is walked — whiteouts are deletions, an opaque directory deletes what it hides — so
// the cost follows the files changed, never the repository. In copy mode the whole copy is walked,
// but a file whose ctime is not past the copy's end (ctime cannot be set from user space) and whose
// size is the baseline's is the copy's own and is not hashed. Either way a file whose bytes equal
// the baseline's again is not a change. Hostile shapes are findings, never failures: special files
// (`environment/special-file`), names that are not UTF-8 (`environment/name-not-utf8`, reported
// escaped), trees deeper or larger than the walk's bounds (`environment/too-deep`,
// `environment/too-many-changes`, and `complete: false`). The walk has a time bound too: past its
// deadline it stops where it is, with `environment/too-many-changes`.
import type { BigIntStats } from "node:fs";
import type { EnvironmentChanges, ModifiedPath, PathDigest } from "../../core/ports/sandbox.js";
import type { Problem } from "../../core/result.js";
import {
  type BaselineNode,
  escapeKey,
  type HashHook,
  type PinnedBaseline,
  symlinkDigest,
} from "./baseline-pin.js";
import {
  closeQuietly,
  displayPath,
  type EntryKind,
  escapeName,
  hashFd,
  isSpecial,
  isUtf8,
  nameKey,
  openDirPath,
  openRegularAt,
  pathHandleAt,
  readlinkAt,
} from "./host-fs.js";
import { OpaqueMemo } from "./opaque-dirs.js";
import { type PathNode, partsOf, walkTree } from "./tree-walk.js";

/** Deeper than this, a tree is not walked into (PATH_MAX is 4096 bytes; this is far past it). */
export const MAX_CHANGE_DEPTH = 2048;
/** The most changed entries any walk lists (a snapshot's bound; changes() take a lower one). */
export const MAX_CHANGED_ENTRIES = 200_000;
const MAX_FINDINGS = 100;
/** The clock is read once every this many entries. */
const CLOCK_EVERY = 64;
/** In overlay mode, the share of the time bound the walk of the upper layer may take. */
const WALK_SHARE = 0.8;

export interface ChangeOptions {
  readonly upper: string;
  readonly baseline: PinnedBaseline;
  readonly onHash?: HashHook | undefined;
  /** Copy mode: the ctime (ns) at the end of the copy; nothing older was changed since. */
  readonly copiedUntilNs?: bigint;
  readonly maxDepth?: number;
  readonly maxEntries?: number;
  /** How long the walk may take (ms; default: no bound): past it, it stops, incomplete. */
  readonly timeMs?: number;
  /** The environment's opaque answers (overlay mode), shared with its host view. */
  readonly opaque?: OpaqueMemo | undefined;
}

class Collector {
  readonly added: PathDigest[] = [];
  readonly modified: ModifiedPath[] = [];
  readonly deleted: PathDigest[] = [];
  readonly findings: Problem[] = [];
  complete = true;
  /** Set once a bound is passed: nothing more is listed or hashed. */
  stopped = false;
  entries = 0;
  private dropped = 0;
  private ticks = 0;
  private told = false;
  private readonly started = Date.now();
  private deadline: number;

  /** `firstShare`: the part of the time bound a first pass may take (the rest is the second's). */
  constructor(
    private readonly maxEntries: number,
    private readonly timeMs: number = Number.POSITIVE_INFINITY,
    firstShare = 1,
  ) {
    this.deadline = this.started + timeMs * firstShare;
  }

  /** Count one more entry kept; false (and incomplete) once past either bound. */
  take(): boolean {
    if (this.stopped) return false;
    this.entries += 1;
    if (this.entries > this.maxEntries) {
      this.stop(`more than ${this.maxEntries} changed entries`);
      return false;
    }
    return !this.late();
  }

  /** Whether the time bound has passed (then the walk is stopped). */
  late(): boolean {
    if (this.stopped) return true;
    this.ticks += 1;
    if (this.ticks % CLOCK_EVERY !== 0 || Date.now() < this.deadline) return false;
    this.stop(`the change walk passed its time bound of ${this.timeMs} ms`);
    return true;
  }

  /** Whether the time bound has passed, read on every call (a large file's chunks). */
  overdue(): boolean {
    if (this.stopped) return true;
    if (Date.now() < this.deadline) return false;
    this.stop(`the change walk passed its time bound of ${this.timeMs} ms`);
    return true;
  }

  private stop(why: string): void {
    this.stopped = true;
    this.complete = false;
    if (this.told) return;
    this.told = true;
    this.find("environment/too-many-changes", "", why);
  }

  /** Count afresh for a second pass over what the first one kept, until the whole time bound. */
  recount(): void {
    this.stopped = false;
    this.entries = 0;
    this.deadline = this.started + this.timeMs;
  }

  find(code: string, path: string, message: string, detail?: Record<string, unknown>): void {
    if (this.findings.length >= MAX_FINDINGS) {
      this.dropped += 1;
      return;
    }
    this.findings.push({
      code,
      path,
      message,
      ...(detail === undefined ? {} : { detail }),
    });
  }

  /** Notes on the entry `name` at `path` that any walk makes. */
  note(name: Buffer, path: string, kind: EntryKind): void {
    if (!isUtf8(name)) this.find("environment/name-not-utf8", path, "a name that is not UTF-8");
    if (isSpecial(kind))
      this.find("environment/special-file", path, `a ${kind}: never opened`, { kind });
  }

  tooDeep(path: string): void {
    this.complete = false;
    this.find("environment/too-deep", path, "the tree goes deeper than the walk follows");
  }

  result(): EnvironmentChanges {
    const byPath = (a: PathDigest, b: PathDigest) =>
      a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
    const findings =
      this.dropped === 0
        ? this.findings
        : [
            ...this.findings,
            {
              code: "environment/findings-dropped",
              path: "",
              message: `${this.dropped} more findings not listed`,
            },
          ];
    return {
      added: this.added.sort(byPath),
      modified: this.modified.sort(byPath),
      deleted: this.deleted.sort(byPath),
      findings,
      complete: this.complete,
    };
  }
}

function join(prefix: string, name: string): string {
  return prefix === "" ? name : `${prefix}/${name}`;
}

/** Every entry under a baseline entry, reported deleted with its baseline digest. */
async function deleteAll(
  out: Collector,
  baseline: PinnedBaseline,
  entry: BaselineNode,
  path: string,
): Promise<void> {
  if (entry.kind !== "dir") {
    if (out.take()) out.deleted.push({ path, digest: await baseline.digestOf(entry) });
    return;
  }
  for (const [key, c] of entry.children ?? []) {
    if (out.stopped) return;
    await deleteAll(out, baseline, c, join(path, escapeKey(key)));
  }
}

/**
 * The digest of a changed non-directory entry just met (a regular file is hashed, streamed);
 * undefined when the time bound passed while a file was hashed (the walk then stops).
 */
async function digestHere(
  dirFd: number,
  name: Buffer,
  kind: EntryKind,
  path: string,
  onHash: HashHook | undefined,
  overdue: () => boolean,
): Promise<{ kind: EntryKind; digest: string } | undefined> {
  if (kind === "symlink") return { kind, digest: symlinkDigest(readlinkAt(dirFd, name)) };
  if (kind !== "file") return { kind, digest: `special:${kind}` };
  const opened = openRegularAt(dirFd, name);
  if (!opened.ok) {
    // Swapped for something else since it was listed: report what is there now, unopened.
    const now = opened.kind === "gone" ? "file" : opened.kind;
    return { kind: now, digest: `special:${now}` };
  }
  try {
    onHash?.("environment", path);
    const digest = await hashFd(opened.fd, overdue);
    return digest === undefined ? undefined : { kind, digest };
  } finally {
    closeQuietly(opened.fd);
  }
}

/** Compare a changed entry with the baseline's entry at its path: added, modified or restored. */
async function compare(
  out: Collector,
  baseline: PinnedBaseline,
  lower: BaselineNode | undefined,
  path: string,
  kind: EntryKind,
  digest: string,
): Promise<void> {
  if (lower === undefined) {
    if (out.take()) out.added.push({ path, digest });
    return;
  }
  if (lower.kind === "dir") {
    await deleteAll(out, baseline, lower, path);
    if (out.take()) out.added.push({ path, digest });
    return;
  }
  const before = await baseline.digestOf(lower);
  if (lower.kind === kind && before === digest) return;
  if (out.take()) out.modified.push({ path, digest, before });
}

interface UpperItem {
  readonly kind: EntryKind;
  readonly digest: string | undefined;
  readonly children: Map<string, UpperItem> | undefined;
  /** An O_PATH handle kept until the directory's opaque attribute is read. */
  handle: number | undefined;
  opaque: boolean;
}

interface UpperState {
  readonly item: UpperItem;
  /** The baseline directory at the same path (whether or not it shows through). */
  readonly lower: BaselineNode | undefined;
}

/** Overlay mode: the changes are what the upper layer holds. */
export async function overlayChanges(opts: ChangeOptions): Promise<EnvironmentChanges> {
  // The walk (which hashes) takes at most most of the time bound; comparing what it kept with
  // the baseline gets the rest.
  const out = new Collector(opts.maxEntries ?? MAX_CHANGED_ENTRIES, opts.timeMs, WALK_SHARE);
  const root: UpperItem = {
    kind: "dir",
    digest: undefined,
    children: new Map(),
    handle: undefined,
    opaque: false,
  };
  const pending: UpperItem[] = [];
  const memo = opts.opaque ?? new OpaqueMemo();
  const flush = async () => {
    const batch = pending.splice(0);
    try {
      const opaque = await memo.opaque(batch.map((i) => i.handle as number));
      batch.forEach((item, i) => {
        item.opaque = opaque[i] === true;
      });
    } finally {
      for (const item of batch) {
        closeQuietly(item.handle);
        item.handle = undefined;
      }
    }
  };
  const fd = openDirPath(opts.upper);
  try {
    await walkTree<UpperState>(
      fd,
      { item: root, lower: opts.baseline.root },
      {
        async entry(dirFd, name, _st, kind, node, parent) {
          // Changed entries count towards the bound; directories (never listed themselves) are
          // bounded by the time bound and the depth.
          if (kind === "dir" ? out.late() : !out.take()) return undefined;
          const path = displayPath(partsOf(node));
          out.note(name, path, kind);
          const lower = parent.lower?.children?.get(nameKey(name));
          if (kind === "dir") {
            const item: UpperItem = {
              kind,
              digest: undefined,
              children: new Map(),
              handle: undefined,
              opaque: false,
            };
            parent.item.children?.set(nameKey(name), item);
            if (lower?.kind === "dir") {
              item.handle = pathHandleAt(dirFd, name);
              pending.push(item);
              if (pending.length >= 200) await flush();
            }
            return { item, lower: lower?.kind === "dir" ? lower : undefined };
          }
          const d =
            kind === "whiteout"
              ? { kind, digest: undefined }
              : await digestHere(dirFd, name, kind, path, opts.onHash, () => out.overdue());
          if (d === undefined) return undefined;
          parent.item.children?.set(nameKey(name), {
            kind: d.kind,
            digest: d.digest,
            children: undefined,
            handle: undefined,
            opaque: false,
          });
          return undefined;
        },
        tooDeep(node) {
          out.tooDeep(displayPath(partsOf(node)));
        },
      },
      { maxDepth: opts.maxDepth ?? MAX_CHANGE_DEPTH, fixModes: true, stop: () => out.stopped },
    );
    await flush();
  } finally {
    closeQuietly(fd);
    for (const item of pending) closeQuietly(item.handle);
  }
  // Entries walked count towards the bound only once: the comparison below counts again, over
  // what the walk kept (all of it, or what it reached before a bound).
  out.recount();
  await mergeUpper(out, opts.baseline, root, opts.baseline.root, "", false);
  return out.result();
}

/**
 * The changes under one upper directory. `lower` is the baseline directory at the same path (for
 * comparisons); `hides` says whether the merged tree hides its entries the upper lacks (this
 * directory or one above it is opaque).
 */
async function mergeUpper(
  out: Collector,
  baseline: PinnedBaseline,
  dir: UpperItem,
  lower: BaselineNode | undefined,
  prefix: string,
  hides: boolean,
): Promise<void> {
  for (const [key, item] of dir.children ?? []) {
    if (out.late()) return;
    const path = join(prefix, escapeKey(key));
    const l = lower?.children?.get(key);
    switch (item.kind) {
      case "whiteout":
        if (l !== undefined && !hides) await deleteAll(out, baseline, l, path);
        break;
      case "dir": {
        if (l !== undefined && l.kind !== "dir" && out.take()) {
          out.deleted.push({ path, digest: await baseline.digestOf(l) });
        }
        const lowerDir = l?.kind === "dir" ? l : undefined;
        await mergeUpper(out, baseline, item, lowerDir, path, hides || item.opaque);
        break;
      }
      default:
        await compare(out, baseline, l, path, item.kind, item.digest as string);
    }
  }
  if (!hides || lower === undefined) return;
  for (const [key, l] of lower.children ?? []) {
    if (out.stopped) return;
    if (!dir.children?.has(key)) await deleteAll(out, baseline, l, join(prefix, escapeKey(key)));
  }
}

interface CopyState {
  readonly lower: BaselineNode | undefined;
  readonly seen: Set<string>;
  readonly path: string;
}

/** Copy mode: walk the whole copy; hash only what may have changed since it was made. */
export async function copyChanges(opts: ChangeOptions): Promise<EnvironmentChanges> {
  const out = new Collector(opts.maxEntries ?? MAX_CHANGED_ENTRIES, opts.timeMs);
  const since = opts.copiedUntilNs ?? -1n;
  const gone = async (state: CopyState) => {
    for (const [key, l] of state.lower?.children ?? []) {
      if (out.stopped) return;
      if (!state.seen.has(key))
        await deleteAll(out, opts.baseline, l, join(state.path, escapeKey(key)));
    }
  };
  const untouched = (st: BigIntStats, lower: BaselineNode | undefined) =>
    lower?.kind === "file" && st.isFile() && st.ctimeNs <= since && st.size === lower.size;
  const rootState: CopyState = { lower: opts.baseline.root, seen: new Set(), path: "" };
  const fd = openDirPath(opts.upper);
  try {
    await walkTree<CopyState>(
      fd,
      rootState,
      {
        async entry(dirFd, name, st, rawKind, _node, parent) {
          // Every entry of the copy is walked: the time bound is checked on each.
          if (out.late()) return undefined;
          const key = nameKey(name);
          parent.seen.add(key);
          const kind = rawKind === "whiteout" ? "char-device" : rawKind;
          const path = join(parent.path, escapeName(name));
          out.note(name, path, kind);
          const lower = parent.lower?.children?.get(key);
          if (kind === "dir") {
            if (lower !== undefined && lower.kind !== "dir" && out.take()) {
              out.deleted.push({ path, digest: await opts.baseline.digestOf(lower) });
            }
            return { lower: lower?.kind === "dir" ? lower : undefined, seen: new Set(), path };
          }
          if (untouched(st, lower)) return undefined;
          const d = await digestHere(dirFd, name, kind, path, opts.onHash, () => out.overdue());
          if (d === undefined) return undefined;
          await compare(out, opts.baseline, lower, path, d.kind, d.digest);
          return undefined;
        },
        leave: (_node: PathNode, state) => gone(state),
        tooDeep(node) {
          out.tooDeep(displayPath(partsOf(node)));
        },
      },
      { maxDepth: opts.maxDepth ?? MAX_CHANGE_DEPTH, fixModes: true, stop: () => out.stopped },
    );
    await gone(rootState);
  } finally {
    closeQuietly(fd);
  }
  return out.result();
}
