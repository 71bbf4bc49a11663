// The interfaces adapters implement. The core declares them; adapters under src/adapters implement
// them; the CLI composes them.
export type {
  AppendBatch,
  AppendOutcome,
  LedgerRecord,
  LedgerStore,
  LoopSummary,
  OperatorAct,
  StoredFact,
} from "./loop/ledger-store.js";
export type {
  Environment,
  EnvironmentOptions,
  ExecOptions,
  ExecResult,
  Sandbox,
  SandboxBackend,
} from "./sandbox/sandbox-port.js";
export type {
  ConversationEntry,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ProviderTool,
  StopKind,
  ToolResultEntry,
  Usage,
} from "./turn/model-provider.js";
export type { ToolCallOptions, ToolHost, ToolResult } from "./turn/tool-host.js";

/** The clock: the core never reads time itself; the runtime passes `now` in. */
export interface Clock {
  now(): Date;
}
