// The public library, `warrant`: createWarrant (the one composition root) and its options, the event
// stream, models and tools written in code, the ports' types, and the pure checks (definitions,
// CIDs, turns, loops). Everything is exported by name; test/index.test.ts pins the list.

export { collectionCidOfPath } from "./adapters/fs/collection-files.js";
export { loadPack } from "./adapters/fs/pack-loader.js";
// What the command line and the console are built from, for a program that builds its own: store
// URIs, sandbox choice, loop documents and bundles, scripted loops, turns, records and model URIs.
export { parseModelUri } from "./adapters/models/model-uri.js";
export {
  chooseSandbox,
  detectSandbox,
  isSandboxChoice,
  SANDBOX_CHOICES,
  type SandboxChoice,
} from "./adapters/sandbox/detect-sandbox.js";
export type { StoreCreation } from "./adapters/store/open-store.js";
export { parseStoreUri, resolveStoreUri } from "./adapters/store/store-uri.js";
export { blobCid, decodeCid } from "./core/cid/cid.js";
export { collectionCid } from "./core/cid/collection.js";
export { definitionId } from "./core/definition/id.js";
export type { AgentDefinition } from "./core/definition/types.js";
export { type ValidDefinition, validateDefinition } from "./core/definition/validate.js";
export {
  type PassageRef,
  parseRecordRef,
  type QueryId,
  type RecordRef,
  type RunRef,
  toPassageRef,
  toQueryId,
  toRecordRef,
  toRunRef,
} from "./core/ids.js";
export type { AuditReport, TrustAnchor } from "./core/loop/audit.js";
export { auditBundle, isBundle } from "./core/loop/bundle.js";
export { checkLoopDocument } from "./core/loop/check.js";
export { parseScript } from "./core/loop/script.js";
export type { Simulation, SimulationOutcome } from "./core/loop/simulate.js";
export { simulate } from "./core/loop/simulate.js";
export type { LoopState } from "./core/loop/state.js";
export { stateNameAt } from "./core/loop/state.js";
export { parseInstant } from "./core/loop/time.js";
export type {
  Fact,
  LimitKey,
  Limits,
  LoopDocument,
  LoopStateName,
  Outcome,
  Role,
  Spent,
  Step,
  Stop,
} from "./core/loop/types.js";
export { ROLES } from "./core/loop/types.js";
export type { ApprovalAnswer, ApprovalKind, ApprovalRequest } from "./core/ports/approver.js";
export type { ChangeFeed, FeedFact } from "./core/ports/change-feed.js";
export type { JobHandler, JobQueue, QueuedJob, WorkerRunner } from "./core/ports/job-queue.js";
export type {
  LedgerRecord,
  LedgerStore,
  LoopSummary,
  OperatorAct,
  StoredFact,
} from "./core/ports/ledger-store.js";
export type {
  ConversationEntry,
  ModelRequest,
  ModelResponse,
  ProviderTool,
  StopKind,
  ToolResultEntry,
  Usage,
} from "./core/ports/model-provider.js";
export type {
  Baseline,
  BaselineOptions,
  ChangeBounds,
  EgressConnection,
  EgressLog,
  Environment,
  EnvironmentChanges,
  EnvironmentMode,
  EnvironmentOptions,
  ExecOptions,
  ExecResult,
  LimitHit,
  ResourceLimits,
  Sandbox,
  SandboxBackend,
} from "./core/ports/sandbox.js";
export type { RecordSigner } from "./core/ports/signer.js";
export type { Clock, Sleep, Time, Timer, Timers } from "./core/ports/time.js";
export type { ToolCallOptions, ToolHost, ToolResult } from "./core/ports/tool-host.js";
export { canonicalJson } from "./core/records/canonical.js";
export { type Problem, type Result, WarrantError } from "./core/result.js";
export type { CommandProfile, TaskPack } from "./core/taskpack/task-pack.js";
export {
  gitQuotePath,
  type TerminalTextOptions,
  terminalLine,
  terminalSafe,
} from "./core/text/terminal-text.js";
export type { ModelTarget } from "./core/turn/model-target.js";
export type { ToolEffect, ToolSpec } from "./core/turn/tool-registry.js";
export { createToolRegistry, type ToolRegistry } from "./core/turn/tool-registry.js";
export type { MessageType, ModelTurn, ValidTurn } from "./core/turn/types.js";
export { validateTurn } from "./core/turn/validate-turn.js";
export {
  type ApprovalContext,
  approvalContext,
  type BudgetLeft,
  type LoopConclusion,
  type LoopResult,
  loopConclusion,
  type PlannedCheck,
  type SeenOutput,
  type StepDecision,
} from "./library/approval-context.js";
export {
  type ApplyJson,
  type ApplyOptions,
  applyChange,
  type ChangeJson,
  type ChangeOptions,
  loopChange,
} from "./library/changes.js";
export {
  checkLoop,
  checkTurn,
  normalizeDefinition,
  simulateLoop,
  type TurnCheckOptions,
} from "./library/checks.js";
export {
  type ActOptions,
  createWarrant,
  type LoopListing,
  type LoopStatus,
  type LoopView,
  type ResumeOptions,
  type RunOptions,
  type StoredRecord,
  type Warrant,
  type WorkerListing,
  type WorkOptions,
} from "./library/create-warrant.js";
export {
  type CodeTool,
  defineTool,
  type JsonSchema,
  type StandardSchema,
  type StandardSchemaResult,
  type ToolContext,
  type ToolDefinition,
  type ToolInput,
} from "./library/define-tool.js";
export type { DefinitionCheck } from "./library/definition-checks.js";
export {
  type DefinitionDescription,
  type DescribeOptions,
  describeDefinition,
} from "./library/definition-show.js";
export {
  CODES,
  type Code,
  type CodeExit,
  type CodeSpec,
  type ContractErrorCode,
  codeSpec,
  exitCodeOf,
  type HostErrorCode,
  httpStatusOf,
  isCode,
  isWarrantError,
  type WarrantErrorCode,
} from "./library/errors.js";
export type { CertifyOptions, CertifyReport } from "./library/evals/certify.js";
export type { EvalListing, Evals } from "./library/evals/evals.js";
export type { CellConfiguration, LoadedEvalSet, PlannedCell } from "./library/evals/load.js";
export type { CellOutcome, CloseReason } from "./library/evals/outcome.js";
export type {
  AgentSummary,
  CompareSide,
  Comparison,
  EvalReport,
  ReportCell,
  ReportOutcome,
  TaskSummary,
} from "./library/evals/report.js";
export type {
  EvalEvent,
  EvalHandle,
  EvalProgress,
  EvalRunOptions,
} from "./library/evals/run.js";
export type { LoopUsage, TokenUsage } from "./library/loop-usage.js";
export {
  MODEL_SPECIFICATION_VERSION,
  type Model,
  type ModelCallOptions,
  type ModelFunction,
  type ModelProvider,
} from "./library/model.js";
export type { ActResult } from "./library/operator-acts.js";
export { OPERATOR_NAME_MAX, operatorBindingOf } from "./library/operators.js";
export type {
  AskingApprover,
  ModelContext,
  ModelResolver,
  TelemetryOptions,
  WarrantOptions,
  WarrantSubscriber,
} from "./library/options.js";
export { listPending, type PendingApproval, type Waiting } from "./library/pending.js";
export {
  type CheckOutcome,
  type CheckProblem,
  PREFLIGHT_CHECKS,
  type PreflightCheck,
  type PreflightProblem,
  type PreflightReport,
  type PreflightSubject,
  preflight,
} from "./library/preflight.js";
export {
  anthropicModel,
  type OpenAICompatibleModelOptions,
  type OpenAIModelOptions,
  openaiCompatibleModel,
  openaiModel,
  type ProviderModelOptions,
} from "./library/providers.js";
export {
  type RecordToRender,
  type RenderContext,
  renderOperatorAct,
  renderRecord,
} from "./library/render-record.js";
export type { LoopOutcome, RunHandle } from "./library/run-handle.js";
export { releaseSandboxes } from "./library/shutdown.js";
export type { WarrantTelemetry } from "./library/telemetry.js";
export type { RecordDisplay, WarrantViews } from "./library/views.js";
export type { AgentReport, ModelReport } from "./runtime/definition-preflight.js";
export type {
  ApprovalAnswerer,
  BlockReason,
  PassageUsage,
  RunPhase,
  ToolKind,
  WarrantEvent,
  WarrantEventKind,
} from "./runtime/events.js";
export type { Ask } from "./runtime/hil.js";
export type {
  McpConnect,
  McpConnection,
  McpConnectOptions,
  McpServerDeclaration,
} from "./runtime/passage-tools.js";
export { keySigner } from "./runtime/records.js";
export type { LoadedAgent, LoadedPack } from "./runtime/task-pack.js";
export type { Worker, WorkerEvent } from "./runtime/worker.js";
export { DEFAULT_SHUTDOWN_TIMEOUT_MS } from "./runtime/worker.js";
