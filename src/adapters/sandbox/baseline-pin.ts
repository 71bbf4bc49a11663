// The baseline a loop's environments share: a private copy of the workspace taken once
// (`warrant-base-*`, reflinked where the file system can), owned by the uid commands run as and
// never written again, with an index of its tree (made once, by one walk) and its files' digests
// (each hashed at most once, when first needed, and kept against the file's size, mtime and
// inode). Environments lay their changes over it; no command ever sees its path.
import type { BigIntStats } from "node:fs";
import { chmod, lstat, mkdir, mkdtemp, readdir, realpath } from "node:fs/promises";
import path from "node:path";
import { WarrantError } from "../../core/result.js";
import { gitFiles, gitWorkTree } from "../fs/git.js";
import { hostCommand } from "./host-command.js";
import {
  closeQuietly,
  displayPath,
  type EntryKind,
  escapeName,
  fstatBig,
  hashBytes,
  hashFd,
  nameKey,
  openDirAt,
  openDirPath,
  openRegularAt,
  readlinkAt,
} from "./host-fs.js";
import { claimPin } from "./pin-owner.js";
import { type PathNode, partsOf, removePath, walkTree } from "./tree-walk.js";

/** The uid/gid that sandboxed commands run as when the host runs as root. */
export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

/** One entry of the baseline's tree. */
export interface BaselineNode {
  readonly node: PathNode | undefined;
  readonly kind: EntryKind;
  readonly size: bigint;
  readonly mode: number;
  readonly children: Map<string, BaselineNode> | undefined;
  /** A symlink's target bytes. */
  readonly target: Buffer | undefined;
  /** The cache key the digest was taken against, and the digest. */
  key: string | undefined;
  digest: string | undefined;
}

/** Called once per file hashed (tests count hashing through it). */
export type HashHook = (layer: "baseline" | "environment", relPath: string) => void;

/** A dependency folder of the workspace: left out of the copy, an empty mountpoint there instead. */
export interface PinnedDependency {
  /** Its path relative to the workspace. */
  readonly rel: string;
  /** Its real path on the host: what environments lay over the mountpoint. */
  readonly real: string;
  /** Its mode bits. */
  readonly mode: number;
}

export interface PinnedBaseline {
  /** The workspace it was copied from. */
  readonly source: string;
  /** The dependency folders environments made over it contain as they are on the host. */
  readonly dependencies: readonly PinnedDependency[];
  /** The copy: the lower layer of every overlay environment made over it. */
  readonly tree: string;
  readonly root: BaselineNode;
  readonly files: number;
  readonly bytes: number;
  /** The digest of a file (or `symlink:…` / `special:<kind>` entry) of the baseline. */
  digestOf(entry: BaselineNode): Promise<string>;
  /** Every entry's digest by relative path (computed once, kept). */
  digests(): Promise<ReadonlyMap<string, string>>;
  /** Remove the copy. */
  remove(): Promise<boolean>;
}

export const BASE_DIR_PREFIX = "warrant-base-";

function keyOf(st: BigIntStats): string {
  return `${st.size}:${st.mtimeNs}:${st.ino}`;
}

/** `symlink:` digest of a target text: the same as `snapshot()` has always given. */
export function symlinkDigest(target: Buffer): string {
  return `symlink:${hashBytes(target)}`;
}

export interface PinOptions {
  readonly tempRoot: string;
  readonly runAs: RunAs | undefined;
  readonly onHash?: HashHook | undefined;
  /** Workspace-relative folders never copied (the environments see the host's own). */
  readonly dependencies?: readonly string[] | undefined;
}

/** Copy `source` to a fresh private directory under `tempRoot` and index it. */
export async function pinBaseline(source: string, opts: PinOptions): Promise<PinnedBaseline> {
  const real = await realpath(source).catch((e: Error) => {
    throw new WarrantError("sandbox/baseline-copy", `cannot copy ${source}: ${e.message}`);
  });
  const base = await mkdtemp(path.join(opts.tempRoot, BASE_DIR_PREFIX));
  const tree = path.join(base, "tree");
  try {
    await claimPin(base);
    // A git work tree's baseline (the workspace is its top folder) is its files, tracked plus
    // untracked and not ignored: never .git/, never ignored build output such as node_modules/.
    const listed = (await gitWorkTree(real))?.prefix === "" ? await gitFiles(real) : undefined;
    const deps = opts.dependencies ?? [];
    const inDep = (f: string) => deps.some((d) => f === d || f.startsWith(`${d}/`));
    if (listed !== undefined)
      await copyListed(
        real,
        tree,
        listed.filter((f) => !inDep(f)),
      );
    else if (deps.length > 0) await copyExcept(real, tree, deps);
    // -a keeps symlinks as links, modes and times; ownership is set below, never the source's.
    else
      await hostCommand("sandbox/baseline-copy", [
        "cp",
        "-a",
        "-T",
        "--no-preserve=ownership",
        "--reflink=auto",
        "--",
        real,
        tree,
      ]);
    const dependencies = await dependencyMountpoints(real, tree, deps);
    if (opts.runAs !== undefined) {
      const owner = `${opts.runAs.uid}:${opts.runAs.gid}`;
      await hostCommand("sandbox/baseline-copy", ["chown", "-R", "-h", owner, "--", base]);
    }
    const index = await indexTree(tree);
    return pinned(path.resolve(source), tree, base, index, opts.onHash, dependencies);
  } catch (e) {
    await removePath(base);
    if (e instanceof WarrantError) throw e;
    throw new WarrantError(
      "sandbox/baseline-copy",
      `cannot copy ${source}: ${(e as Error).message}`,
    );
  }
}

/** Copies the listed files (and links) of `source` into `tree`, their folders made as needed. */
async function copyListed(source: string, tree: string, files: readonly string[]): Promise<void> {
  await mkdir(tree, { mode: 0o755 });
  const present: string[] = [];
  for (const f of files) {
    const st = await lstat(path.join(source, f)).catch(() => undefined);
    // A tracked file deleted in the work tree is not there; a submodule is a folder: neither copied.
    if (st !== undefined && (st.isFile() || st.isSymbolicLink())) present.push(f);
  }
  await copyInto(source, tree, present, ["--parents"]);
}

/** `cp -a` of `names` (relative to `source`) into `tree`, 512 to a command; never the owner. */
async function copyInto(
  source: string,
  tree: string,
  names: readonly string[],
  flags: readonly string[] = [],
): Promise<void> {
  for (let i = 0; i < names.length; i += 512) {
    await hostCommand(
      "sandbox/baseline-copy",
      [
        "cp",
        "-a",
        ...flags,
        "--no-preserve=ownership",
        "--reflink=auto",
        "-t",
        tree,
        "--",
        ...names.slice(i, i + 512),
      ],
      { cwd: source },
    );
  }
}

/**
 * Copies `source` into `tree` except the `skip` paths (relative, normalised): the folders on the
 * way to one are made with their modes and walked; everything else is copied whole (`cp -a`).
 */
async function copyExcept(source: string, tree: string, skip: readonly string[]): Promise<void> {
  const st = await lstat(source);
  await mkdir(tree);
  await chmod(tree, st.mode & 0o7777);
  const whole: string[] = [];
  for (const name of await readdir(source)) {
    const inner = skip
      .filter((d) => d === name || d.startsWith(`${name}/`))
      .map((d) => d.slice(name.length + 1));
    if (inner.includes("")) continue;
    const entry = await lstat(path.join(source, name));
    if (inner.length > 0 && entry.isDirectory())
      await copyExcept(path.join(source, name), path.join(tree, name), inner);
    else whole.push(name);
  }
  await copyInto(source, tree, whole);
}

/** An empty folder in the copy where each dependency is (its mode the host's); each one checked. */
async function dependencyMountpoints(
  source: string,
  tree: string,
  deps: readonly string[],
): Promise<PinnedDependency[]> {
  const out: PinnedDependency[] = [];
  for (const rel of deps) {
    const host = path.join(source, rel);
    const st = await lstat(host).catch(() => undefined);
    const real = st?.isDirectory() === true ? await realpath(host).catch(() => "") : "";
    if (st === undefined || real !== host) {
      throw new WarrantError(
        "sandbox/dependency-missing",
        `the dependency ${rel} is not a folder of ${source}${st === undefined ? "" : " (a link, or reached through one)"}`,
      );
    }
    const at = path.join(tree, rel);
    await mkdir(at, { recursive: true });
    await chmod(at, st.mode & 0o7777);
    out.push({ rel, real, mode: st.mode & 0o7777 });
  }
  return out;
}

interface Index {
  readonly root: BaselineNode;
  readonly files: number;
  readonly bytes: number;
}

function entryOf(
  node: PathNode | undefined,
  st: BigIntStats,
  kind: EntryKind,
  target: Buffer | undefined,
): BaselineNode {
  return {
    node,
    kind,
    size: st.size,
    mode: Number(st.mode & 0o7777n),
    children: kind === "dir" ? new Map() : undefined,
    target,
    key: undefined,
    digest: undefined,
  };
}

/** One walk of a tree nothing else writes: its entries, file count and bytes. */
export async function indexTree(tree: string): Promise<Index> {
  const fd = openDirPath(tree);
  let files = 0;
  let bytes = 0;
  try {
    const root = entryOf(undefined, fstatBig(fd), "dir", undefined);
    await walkTree<BaselineNode>(fd, root, {
      entry(dirFd, name, st, kind, node, parent) {
        const target = kind === "symlink" ? readlinkAt(dirFd, name) : undefined;
        const e = entryOf(node, st, kind, target);
        parent.children?.set(nameKey(name), e);
        if (kind === "file") {
          files += 1;
          bytes += Number(st.size);
        }
        return kind === "dir" ? e : undefined;
      },
    });
    return { root, files, bytes };
  } finally {
    closeQuietly(fd);
  }
}

function pinned(
  source: string,
  tree: string,
  base: string,
  index: Index,
  onHash: HashHook | undefined,
  dependencies: readonly PinnedDependency[] = [],
): PinnedBaseline {
  let all: Promise<ReadonlyMap<string, string>> | undefined;

  /** Hash a baseline file found by walking down from the tree's root, one directory at a time. */
  async function hashEntry(entry: BaselineNode): Promise<string> {
    switch (entry.kind) {
      case "symlink":
        return symlinkDigest(entry.target as Buffer);
      case "dir":
        return "dir:";
      case "file":
        break;
      default:
        return `special:${entry.kind}`;
    }
    const parts = partsOf(entry.node);
    let dirFd = openDirPath(tree);
    try {
      for (const name of parts.slice(0, -1)) {
        const next = openDirAt(dirFd, name);
        closeQuietly(dirFd);
        dirFd = next;
      }
      const opened = openRegularAt(dirFd, parts[parts.length - 1] as Buffer);
      if (!opened.ok) return `special:${opened.kind}`;
      try {
        const key = keyOf(opened.st);
        if (entry.key === key && entry.digest !== undefined) return entry.digest;
        onHash?.("baseline", displayPath(parts));
        const digest = await hashFd(opened.fd);
        entry.key = key;
        entry.digest = digest;
        return digest;
      } finally {
        closeQuietly(opened.fd);
      }
    } finally {
      closeQuietly(dirFd);
    }
  }

  return {
    source,
    dependencies,
    tree,
    root: index.root,
    files: index.files,
    bytes: index.bytes,
    digestOf: hashEntry,
    digests() {
      all ??= (async () => {
        const out = new Map<string, string>();
        const visit = async (e: BaselineNode, prefix: string): Promise<void> => {
          for (const [key, c] of [...(e.children ?? new Map<string, BaselineNode>())].sort(
            ([a], [b]) => (a < b ? -1 : a > b ? 1 : 0),
          )) {
            const p = prefix === "" ? escapeKey(key) : `${prefix}/${escapeKey(key)}`;
            if (c.kind === "dir") await visit(c, p);
            else out.set(p, await hashEntry(c));
          }
        };
        await visit(index.root, "");
        return out;
      })();
      return all;
    },
    remove: () => removePath(base),
  };
}

/** Every entry's digest under a folder nothing writes meanwhile: one walk, every file hashed. */
export async function treeDigests(dir: string): Promise<ReadonlyMap<string, string>> {
  return pinned(dir, dir, dir, await indexTree(dir), undefined).digests();
}

/** A name key (the latin1 of its bytes) as display text. */
export function escapeKey(key: string): string {
  return escapeName(Buffer.from(key, "latin1"));
}
