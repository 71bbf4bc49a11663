// What createWarrant is assembled from: the ports a runtime needs, each with a default that mirrors
// the command line (SQLite at .warrant/ledger.db, the detected sandbox, the host key beside the
// store, the system clock).
import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { StoreCreation } from "../adapters/store/open-store.js";
import type { Role } from "../core/loop/types.js";
import type { JobQueue } from "../core/ports/job-queue.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import type { Sandbox } from "../core/ports/sandbox.js";
import type { RecordSigner } from "../core/ports/signer.js";
import type { Clock, Time } from "../core/ports/time.js";
import type { WarrantEvent } from "../runtime/events.js";
import type { Ask } from "../runtime/hil.js";
import type { McpConnect } from "../runtime/passage-tools.js";
import type { CodeTool } from "./define-tool.js";
import type { Model } from "./model.js";

/** What a model resolver is told about the passage it picks a model for. */
export interface ModelContext {
  readonly query: string;
  /** Model calls this role's earlier, ended passages made (a replaying model starts after them). */
  readonly priorCalls: number;
  /** What the loop's binding recorded for this role when it opened (a model URI for the CLI). */
  readonly recorded: string | undefined;
}

/** Picks a role's model per passage; undefined: the role has none (`model/missing`). */
export type ModelResolver = (role: Role, context: ModelContext) => Model | undefined;

export interface AskingApprover {
  readonly ask: Ask;
  /** Recorded with each answer `ask` gives (default `answered by the approver`). */
  readonly recordedAs?: string;
}

/** An observer of every event of every drive; it cannot reach back into the drive. */
export type WarrantSubscriber = (event: WarrantEvent) => void;

/**
 * OpenTelemetry traces and metrics of every drive (GenAI semantic conventions). Without a
 * `tracerProvider`, drives are traced when the environment names an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, unless
 * `OTEL_SDK_DISABLED=true`): the runtime then loads the SDK and exports over OTLP/HTTP itself.
 */
export interface TelemetryOptions {
  /** Your tracer provider: spans go there, and the environment is not read for an endpoint. */
  readonly tracerProvider?: TracerProvider;
  /** Your meter provider, for the metrics (with a `tracerProvider`). */
  readonly meterProvider?: MeterProvider;
  /**
   * Record prompts, answers, tool arguments and results on spans. Default: whether
   * `WARRANT_OTEL_CAPTURE_CONTENT=1`. API keys are never recorded.
   */
  readonly captureContent?: boolean;
  /** Where the `OTEL_*` variables are read. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Told once when telemetry is lost (a collector unreachable). Default: a line on stderr. */
  readonly onWarning?: (message: string) => void;
}

export interface WarrantOptions {
  /**
   * The ledger: a store, or its URI (`sqlite:PATH`, `postgres://…`, `memory:`). Default
   * `sqlite:.warrant/ledger.db`. A store given as an object is not closed by close().
   */
  readonly store?: LedgerStore | string;
  /**
   * What opening a `sqlite:` store that does not exist may create: `true` (default) the file and
   * any missing folder; `"inside-cwd"` the file, and missing folders only inside `cwd` (elsewhere
   * the folder must exist: `store/folder-missing`); `false` nothing: createWarrant rejects with
   * `store/not-found`, naming the ledger the path probably meant when there is one near. Readers
   * pass `false` so that a mistyped path is said, not silently made into an empty store.
   */
  readonly createStore?: StoreCreation;
  /**
   * Each role's model instead of its agent definition's: a map by role, or a function of the role
   * and the passage (returning undefined for a role that runs on its definition's models). Recorded
   * as the passage's `model/override`.
   */
  readonly models?: Partial<Record<Role, Model>> | ModelResolver;
  /** Observation tools written in code (defineTool), offered to every passage. */
  readonly tools?: readonly CodeTool[];
  /** More folders to find agent definitions' skills in (`<dir>/<name>/`), after `skills/` beside each definition. */
  readonly skills?: readonly string[];
  /** Whose memory namespace-scoped writable agent memory is (before the task pack's `memoryNamespace`). */
  readonly namespace?: string;
  /**
   * Where runs are contained: `bwrap` or `unshare` (that backend or, when it does not work here,
   * createWarrant rejects with `sandbox/unavailable` — never another backend), `auto` (the first
   * of bwrap and unshare that proves itself here, else none), a Sandbox (another implementation
   * of the port: warrant/testing's `fakeSandbox()` in tests), `none` (every run is refused
   * `environment/not-contained`), or a function that finds one on first use. Default `auto`.
   */
  readonly sandbox?:
    | Sandbox
    | "none"
    | "auto"
    | "bwrap"
    | "unshare"
    | (() => Promise<Sandbox | undefined>);
  /**
   * With `sandbox: "unshare"`: run commands without its seccomp filter where its loader is
   * missing or does not work (else createWarrant rejects with `sandbox/no-seccomp`); each run
   * report then says `"sandbox/seccomp": false`. `auto` falls back to it by itself.
   */
  readonly allowWeakerSandbox?: boolean;
  /**
   * Who approves mutations (and admissions, when the pack asks the operator): `wait` for an
   * approve or deny posted by any process (`approve()`, `warrant approve`), until the deadline;
   * `auto` to approve each at once, recorded as such; or an Ask (with the text its answers are
   * recorded with), answered while still polling. Default `wait`.
   */
  readonly approver?: "auto" | "wait" | Ask | AskingApprover;
  /** The loop's clock (deadlines, record times). Default: `time`'s clock. */
  readonly clock?: Clock;
  /**
   * The process's time: leases, their renewals and waits, workers' heartbeats, approval polls and
   * the shutdown timeout run on it (leases bind processes: wall-clock time). Default: the system's.
   * A test passes warrant/testing's `manualClock()` and advances it.
   */
  readonly time?: Time;
  /**
   * Signs proposals and execution records: a signer, `none`, or a function that makes one on first
   * use. Default: the Ed25519 host key kept beside the store (`host.key`, created mode 0600).
   */
  readonly signer?: RecordSigner | "none" | (() => Promise<RecordSigner>);
  /** Observers of every drive's events (the live view, say). */
  readonly onEvent?: WarrantSubscriber | readonly WarrantSubscriber[];
  /**
   * The former name of `onEvent`, kept for one release: its subscribers are told every event
   * after `onEvent`'s.
   * @deprecated Use `onEvent` (`openTelemetry` is the option for OpenTelemetry).
   */
  readonly telemetry?: WarrantSubscriber | readonly WarrantSubscriber[];
  /**
   * OpenTelemetry tracing and metrics: providers of yours, or (default) whatever the standard
   * `OTEL_*` environment asks for; `false` turns it off whatever the environment says.
   */
  readonly openTelemetry?: TelemetryOptions | false;
  /**
   * The operator acting for this host: a name (or `node-operator-binding:NAME`), recorded with
   * every act and every approval the runtime's approver gives. Default `$WARRANT_OPERATOR`, else
   * the login name. A name is 1 to 128 characters without white space or control characters
   * (`operator/name-invalid`).
   */
  readonly operator?: string;
  /** Hands dispatched loops to workers (warrant/postgres: graphileJobQueue). */
  readonly queue?: JobQueue;
  /** Offer the pack's observation profiles as `profile.<name>` tools when runs can be contained. */
  readonly profileTools?: boolean;
  readonly mcp?: {
    /** Connects an agent's MCP servers. Default: the official SDK's client. */
    readonly connect?: McpConnect;
    readonly connectTimeoutMs?: number;
    readonly callTimeoutMs?: number;
  };
  readonly lease?: {
    /** Default `WARRANT_LEASE_TTL_MS`, else 10 s. */
    readonly ttlMs?: number;
    /** Default `host:pid:random`. */
    readonly holder?: string;
  };
  /** How often a waiting approval looks for an answer. Default 200 ms. */
  readonly pollIntervalMs?: number;
  /** Base of a relative SQLite path and of the host key's folder. Default: the working directory. */
  readonly cwd?: string;
}
