// The validated task pack: the contract's document mapped to the shapes the runtime acts on.

import type { DeliberationLimits } from "../contracts/types/operator-task-common.v1.js";
import type {
  CommandProfile as CommandProfileWire,
  TaskPackV1,
} from "../contracts/types/task-pack.v1.js";
import type { ResourceLimits } from "../ports/sandbox.js";
import type { Result } from "../result.js";
import type { Glob } from "./glob.js";
import type { NetworkPolicy } from "./network.js";

/** What a command does to the workspace, as the contract names it. */
export type CommandEffect = CommandProfileWire["effect"];

export interface CommandProfile {
  readonly name: string;
  readonly effect: CommandEffect;
  /** The argv template; an element `{name}` is replaced whole by the string argument `name`. */
  readonly argv: readonly string[];
  /** The profile's argument schema, as written in the pack. */
  readonly argsSchema: Readonly<Record<string, unknown>>;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly maxProcesses?: number;
  /** Variables set for the command (no credential-looking name: the validator refuses those). */
  readonly env?: Readonly<Record<string, string>>;
  /** Validates arguments against `argsSchema` (compiled once, when the pack was validated). */
  readonly validateArgs: (args: unknown) => Result<Readonly<Record<string, unknown>>>;
}

export type VerifierCheck =
  | {
      readonly kind: "command";
      readonly name: string;
      readonly command: string;
      readonly args: Readonly<Record<string, unknown>>;
    }
  | { readonly kind: "unchanged"; readonly name: string; readonly globs: readonly Glob[] }
  | { readonly kind: "only-allowed-changed"; readonly name: string };

/** A limit a pack may set (contracts/operator-task-common.v1.schema.json, deliberationLimits). */
export type PackLimitKey = keyof DeliberationLimits;

/** The agent definition file of each role, as the contract (contracts/task-pack.v1.json) types it. */
export type TaskPackAgents = Readonly<TaskPackV1["agents"]>;

/**
 * A pack's `resources`: what each command may use, and how much host work reading a run's changes
 * may take (`changedEntries`, `changeCaptureMs`, over DEFAULT_CHANGE_BOUNDS): past either, the
 * change is kept incomplete (`environment/too-many-changes`).
 */
export interface PackResources extends ResourceLimits {
  readonly changedEntries: number;
  readonly changeCaptureMs: number;
}

export interface TaskPack {
  readonly name: string;
  readonly task: string;
  /** As written in the pack (relative to the pack file unless absolute). */
  readonly workspace: string;
  readonly agents: TaskPackAgents;
  readonly commands: ReadonlyMap<string, CommandProfile>;
  /**
   * Files commands may create or change without it counting as a change (DEFAULT_IGNORE unless
   * said), and everything under a dependency folder.
   */
  readonly ignore: readonly Glob[];
  readonly patchPolicy: { readonly allow: readonly Glob[]; readonly maxBytes: number };
  readonly verifier: { readonly timeoutMs: number; readonly checks: readonly VerifierCheck[] };
  readonly hil: "each-mutation" | "none";
  readonly admission: "auto" | "operator";
  /**
   * Task-specific guidance per role, given to that role's passages with the task (the runtime's own
   * text states only protocol rules). Empty when the pack gives none.
   */
  readonly guidance: Readonly<Partial<Record<keyof TaskPackAgents, string>>>;
  /** The pack's limits layer, keys spelled as in the contract. */
  readonly limits: Readonly<Partial<Record<PackLimitKey, number>>>;
  /** Whose memory namespace-scoped writable agent memory is (the run's `--namespace` wins). */
  readonly memoryNamespace?: string;
  /** Where definitions' `openai-compatible` models are asked, unless the environment says. */
  readonly openaiCompatibleBaseUrl?: string;
  /** What each command of a run may use (the pack's `resources` over DEFAULT_RESOURCES). */
  readonly resources: PackResources;
  /**
   * The destinations the run's commands may reach through the host's egress proxy; absent: no
   * network at all (the default).
   */
  readonly network?: NetworkPolicy;
  /**
   * Workspace folders (normalised relative paths) every environment contains as they are on the
   * host, copy-on-write; `ignore` already skips everything under them.
   */
  readonly dependencies: readonly string[];
  /** Absolute host folders bound read-only at the same path; each one's `bin/` goes first on PATH. */
  readonly toolchains: readonly string[];
  readonly passage: {
    readonly maxTurns?: number;
    readonly maxTokens?: number;
    /** Repair attempts per passage; 2 when the pack does not say. */
    readonly repairs: number;
  };
  /** The validated document itself (for hashing and display). */
  readonly document: Readonly<Record<string, unknown>>;
}
