// The Sandbox port: fresh contained environments for runs (docs/spec/containment.md). Its adapters (bwrap,
// unshare) implement it outside the core, which never starts a process.
import type { Problem, Result } from "../result.js";
import type { AddressClass, NetworkPolicy } from "../taskpack/network.js";

/** The version of the sandbox port (`Sandbox`, `Environment`, `Baseline`). */
export const SANDBOX_PORT_VERSION = "v1";

export type SandboxBackend = "bwrap" | "unshare";

/**
 * How an environment holds its workspace: `overlay` — the baseline as a read-only lower layer and
 * an empty upper layer, the only writable place (kernel overlayfs in the command's own mount
 * namespace); `copy` — a private copy (reflinked where the file system can), where the kernel
 * refuses an unprivileged overlay.
 */
export type EnvironmentMode = "overlay" | "copy";

export interface PathDigest {
  /** `/`-separated relative path; a name that is not UTF-8 is written with `\xHH` escapes. */
  readonly path: string;
  /** `sha256:<b64url>` of a file's bytes, `symlink:sha256:…` of a link's target, `special:<kind>`. */
  readonly digest: string;
}

/** A changed entry that was in the baseline too: `before` is the baseline entry's digest. */
export interface ModifiedPath extends PathDigest {
  readonly before?: string;
}

/** What commands and patches changed in an environment, against the baseline it was made from. */
export interface EnvironmentChanges {
  readonly added: readonly PathDigest[];
  /** Changed content or kind; a file whose bytes are the baseline's again is not listed. */
  readonly modified: readonly ModifiedPath[];
  /** With the baseline's digest. */
  readonly deleted: readonly PathDigest[];
  /**
   * Hostile shapes met on the way, never opened: `environment/special-file` (FIFO, socket,
   * device), `environment/name-not-utf8`, `environment/too-deep`, `environment/too-many-changes`.
   */
  readonly findings: readonly Problem[];
  /** False when the walk stopped at a bound: a path not listed may still have changed. */
  readonly complete: boolean;
}

/**
 * A workspace pinned for the environments of one loop: copied once, its digests computed at most
 * once. Environments made over it see it as it was when it was opened, whatever happens to the
 * workspace afterwards.
 */
export interface Baseline {
  /** The workspace it was taken from. */
  readonly source: string;
  /**
   * Workspace folders left out of the copy: every environment made over it contains them as they
   * are on the host, copy-on-write (read-only where environments are copies), and nothing written
   * under them is a change of the environment.
   */
  readonly dependencies: readonly string[];
  readonly files: number;
  readonly bytes: number;
  /** Every entry's digest by relative path (as `Environment.snapshot` gives them). */
  digests(): Promise<ReadonlyMap<string, string>>;
  /** Give the pin back; the copy is removed once no environment made over it is left. */
  release(): Promise<void>;
}

/**
 * How much host work reading an environment's changes may take: at most `maxEntries` changed
 * entries, for at most `timeMs`. Past either the walk stops: `environment/too-many-changes`, and
 * `complete: false`.
 */
export interface ChangeBounds {
  readonly maxEntries: number;
  readonly timeMs: number;
}

/** 50 000 changed entries, 30 s. */
export const DEFAULT_CHANGE_BOUNDS: ChangeBounds = { maxEntries: 50_000, timeMs: 30_000 };

/** Bounds a task pack may set them within (`resources.changedEntries`, `changeCaptureMs`). */
export const CHANGE_BOUND_RANGES: Readonly<Record<keyof ChangeBounds, readonly [number, number]>> =
  {
    maxEntries: [1, 1_000_000],
    timeMs: [100, 600_000],
  };

/** A stable environment name: the directory is `warrant-env-<name>`, found again after a crash. */
export const ENVIRONMENT_NAME = /^[a-z0-9-]{1,64}$/;

export function isEnvironmentName(name: string): boolean {
  return ENVIRONMENT_NAME.test(name);
}

/**
 * What the commands of one environment may use (docs/spec/containment.md): `memoryBytes` of
 * memory (a memory cgroup where one is delegated and writable, else RLIMIT_DATA per process),
 * `tmpBytes` of `/tmp` (a size-limited tmpfs), and `diskBytes` added to the workspace (a watchdog
 * on its writable layer, RLIMIT_FSIZE per file). A breach kills the command and is reported as
 * `ExecResult.limit`.
 */
export interface ResourceLimits {
  readonly memoryBytes: number;
  readonly tmpBytes: number;
  readonly diskBytes: number;
}

/** 1 GiB of memory, 256 MiB of /tmp, 1 GiB of workspace growth. */
export const DEFAULT_RESOURCES: ResourceLimits = {
  memoryBytes: 1 << 30,
  tmpBytes: 256 << 20,
  diskBytes: 1 << 30,
};

/** Bounds of each resource limit a task pack may set (the pack schema states the same). */
export const RESOURCE_BOUNDS: Readonly<Record<keyof ResourceLimits, readonly [number, number]>> = {
  memoryBytes: [16 << 20, 64 * 2 ** 30],
  tmpBytes: [1 << 20, 16 * 2 ** 30],
  diskBytes: [1 << 20, 256 * 2 ** 30],
};

export type LimitedResource = "memory" | "tmp" | "disk";

/** The limit a command was stopped at (or ran into, for /tmp): which one and its size. */
export interface LimitHit {
  readonly resource: LimitedResource;
  /** The limit, in bytes. */
  readonly bytes: number;
  /** How it was seen: the memory cgroup's OOM kill, a full /tmp, the disk watchdog, RLIMIT_FSIZE. */
  readonly via: "cgroup" | "tmpfs" | "watchdog" | "rlimit-fsize";
}

/** How a contained command asked the egress proxy for a connection. */
export type EgressProtocol = "http-connect" | "http" | "socks5";

/** One connection a command asked the egress proxy for, and what became of it. */
export interface EgressConnection {
  readonly protocol: EgressProtocol;
  /** The host as the allow-list spells it (canonical), or as the client wrote it when refused. */
  readonly host: string;
  readonly port: number;
  /** The address connected to (or tried last): the host itself for an IP literal. */
  readonly address?: string;
  readonly "address/class"?: AddressClass;
  /** Whether the allow-list names this host:port. */
  readonly allowed: boolean;
  /**
   * Why it was refused (`egress/not-listed`, `egress/port-not-listed`, `egress/bad-target`,
   * `egress/bad-request`, `egress/head-too-large`, `egress/unsupported`,
   * `egress/too-many-connections`) or failed although allowed
   * (`egress/resolve-failed`, `egress/connect-failed`); absent when it was connected.
   */
  readonly reason?: string;
  /** Bytes from the command to the destination (a plain HTTP request's rewritten head included). */
  readonly "bytes/up": number;
  /** Bytes from the destination to the command. */
  readonly "bytes/down": number;
}

/** The connections an environment's commands made through its egress proxy. */
export interface EgressLog {
  /** In order of arrival, at most 1000. */
  readonly list: readonly EgressConnection[];
  /** How many more there were, not listed. */
  readonly omitted: number;
}

/** How a workspace is pinned. */
export interface BaselineOptions {
  /**
   * Workspace-relative folders (normalised, none inside another) not copied: environments lay the
   * host's own folder there (`sandbox/dependency-missing` is thrown when one is not a real folder).
   */
  readonly dependencies?: readonly string[];
}

export interface EnvironmentOptions {
  /**
   * Absolute host folders bound read-only at the same path (a language install, a JDK); each
   * one's `bin/`, when there, goes first on the commands' PATH, in this order.
   */
  readonly toolchains?: readonly string[];
  /**
   * Network access for its commands: only these destinations, through an egress proxy on the
   * host reached over a unix socket bound into the sandbox (its network namespace stays empty).
   * Absent: no network at all.
   */
  readonly network?: NetworkPolicy;
  /** Default process-count limit for commands in this environment (RLIMIT_NPROC). */
  readonly maxProcesses?: number;
  /** Memory, /tmp and workspace-growth limits of every command (default DEFAULT_RESOURCES). */
  readonly resources?: Partial<ResourceLimits>;
  /**
   * Let commands open new AF_UNIX sockets (denied by the seccomp filter otherwise, like AF_NETLINK
   * and AF_VSOCK): for a run that reaches a host service through a socket bound into it.
   */
  readonly unixSockets?: boolean;
  /**
   * A stable name (`[a-z0-9-]{1,64}`, else `sandbox/invalid-name` is thrown): the private
   * directory is `<tempRoot>/warrant-env-<name>`, so a process that dies before recording it can
   * still have it removed (`discardEnvironment`). Whatever is already at that path is removed
   * first: it can only be a leftover of an earlier attempt under the same name. Without a name
   * the directory gets a fresh random name.
   */
  readonly name?: string;
}

export interface ExecOptions {
  /** Wall-clock limit; the whole process tree is killed when it passes. */
  readonly timeoutMs: number;
  /** stdout and stderr together; bytes past the limit are dropped and `truncated` is set. */
  readonly maxOutputBytes: number;
  /** Extra variables on top of the fixed minimal environment; secret-looking names are dropped. */
  readonly env?: Readonly<Record<string, string>>;
  /** Aborting kills the process tree and reports `cancelled`. */
  readonly signal?: AbortSignal;
  /** Overrides the environment's process-count limit for this command. */
  readonly maxProcesses?: number;
}

export interface ExecResult {
  /** The command's exit status; null when it was killed by a signal. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly truncated: boolean;
  /** `sha256:<b64url>` over JCS `{stderr: digest(stderr bytes), stdout: digest(stdout bytes)}`. */
  readonly outputDigest: string;
  /** RFC 3339 UTC. */
  readonly startedAt: string;
  readonly endedAt: string;
  /** Set when a resource limit stopped the command (or left /tmp full). */
  readonly limit?: LimitHit;
}

export interface Environment {
  readonly id: string;
  readonly backend: SandboxBackend | (string & {});
  readonly mode: EnvironmentMode;
  /** False when its commands run without the seccomp filter (the weaker sandbox, allowed). */
  readonly seccomp?: boolean;
  /**
   * The workspace's absolute path as commands see it (their cwd and HOME). On the host it holds
   * the workspace only in copy mode: read it through readFile.
   */
  readonly root: string;
  exec(argv: readonly string[], opts: ExecOptions): Promise<ExecResult>;
  /**
   * Write a workspace file (creating parent directories). Refused with
   * `workbench/patch-outside-policy` when the path is not a safe relative path or its real path
   * leaves the workspace (symlink escapes), whatever the plan check said.
   */
  writeFile(relPath: string, bytes: Uint8Array): Promise<Result<{ readonly path: string }>>;
  /**
   * Refused like writeFile; `sandbox/not-found` when the file does not exist;
   * `environment/special-file` for a FIFO, socket or device (never opened); `sandbox/too-large`
   * past `maxBytes` (default 64 MiB).
   */
  readFile(relPath: string, opts?: { readonly maxBytes?: number }): Promise<Result<Uint8Array>>;
  /** At most `maxBytes` of a file, `truncated` when more was there; refused like readFile. */
  readPart(
    relPath: string,
    maxBytes: number,
  ): Promise<Result<{ readonly bytes: Uint8Array; readonly truncated: boolean }>>;
  /**
   * A regular file of the baseline the environment was made from, as it was pinned (undefined when
   * there is none there, it is not a regular file inside the baseline, or it holds over `maxBytes`).
   */
  readBaseline?(relPath: string, maxBytes: number): Promise<Uint8Array | undefined>;
  /** Remove a workspace file; refused like writeFile. */
  removeFile(relPath: string): Promise<Result<{ readonly path: string }>>;
  /**
   * What changed against the baseline. Overlay mode reads the upper layer alone: the cost follows
   * the changes, not the workspace. Bounded (default DEFAULT_CHANGE_BOUNDS): past either bound the
   * answer is incomplete with an `environment/too-many-changes` finding.
   */
  changes(bounds?: Partial<ChangeBounds>): Promise<EnvironmentChanges>;
  /**
   * Digest of every file under the workspace, by normalised relative path: regular files
   * `sha256:<b64url>` of their bytes, symlinks `symlink:<digest of the target text>`, anything
   * else `special:<kind>` — the baseline's digests (computed once) with the changes applied.
   */
  snapshot(): Promise<Map<string, string>>;
  /** The egress proxy's record so far; undefined when the environment has no network. */
  connections(): EgressLog | undefined;
  /** Kill anything still running and remove the directory; confirmed when it is gone. */
  destroy(): Promise<{ readonly confirmed: boolean }>;
}

/**
 * Contained environments for runs: the one sandbox port. The runtime pins a baseline once per
 * drive, makes one named environment per run over it, and discards what a dead attempt left;
 * `sandboxContract` (warrant/testing) is what every implementation must meet.
 */
export interface Sandbox {
  /** The backend's name: `bwrap`, `unshare`, or another implementation's (`fake`). */
  readonly backend: SandboxBackend | (string & {});
  /**
   * Why this backend's commands would run without its seccomp filter here (then environments are
   * refused with `sandbox/no-seccomp` unless the weaker sandbox is allowed), or undefined when
   * they run under it.
   */
  seccomp?(): Promise<string | undefined>;
  /** The mode environments get on this host (overlay unless the kernel refuses it). */
  environmentMode(): Promise<EnvironmentMode>;
  /**
   * Pin `dir` for the environments of a loop (opening the same folder with the same dependencies
   * again while it is pinned shares the pin). Throws `sandbox/baseline-copy` when it cannot be copied.
   */
  openBaseline(dir: string, opts?: BaselineOptions): Promise<Baseline>;
  /**
   * A fresh environment over `baseline`: a pinned Baseline of this sandbox, or a folder, which is
   * then pinned for as long as an environment made over it lives.
   */
  createEnvironment(baseline: string | Baseline, opts?: EnvironmentOptions): Promise<Environment>;
  /**
   * Remove the directory of the environment named `name` if one is left (a dead process's); no
   * process is killed. Confirmed when nothing is at that path any more. Throws
   * `sandbox/invalid-name` for a name `createEnvironment` would refuse.
   */
  discardEnvironment(name: string): Promise<{ readonly confirmed: boolean }>;
  /**
   * Remove a dead environment's directory given as its `root` was journaled (a resumed run's
   * leftover); only ever a directory this sandbox makes for environments (`warrant-env-*`), never
   * confirmed for another path. No process is killed.
   */
  discardEnvironmentAt(root: string): Promise<{ readonly confirmed: boolean }>;
}
