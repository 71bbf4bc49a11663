// Every name tracing and metrics use: span names, attribute keys, event and instrument names. The
// `gen_ai.*` ones follow the OpenTelemetry GenAI semantic conventions, all still "Development"
// there, so they live here alone: a renamed convention is one edit. The `warrant.*` ones are ours.

/** The semantic-conventions schema the `gen_ai.*` names are taken from. */
export const SCHEMA_URL = "https://opentelemetry.io/schemas/gen-ai/1.42.0";
/** The instrumentation scope of the tracer and the meter. */
export const SCOPE_NAME = "warrant";

export const OPERATION = {
  workflow: "invoke_workflow",
  agent: "invoke_agent",
  chat: "chat",
  tool: "execute_tool",
} as const;

/** Tool span names made once per tool (at most 256 kept): a passage calls the same few tools. */
const toolSpanNames = new Map<string, string>();

function toolSpanName(name: string): string {
  let made = toolSpanNames.get(name);
  if (made === undefined) {
    made = `${OPERATION.tool} ${name}`;
    if (toolSpanNames.size < 256) toolSpanNames.set(name, made);
  }
  return made;
}

export const SPAN = {
  workflow: (pack: string) => `${OPERATION.workflow} ${pack}`,
  agent: (role: string) => `${OPERATION.agent} ${role}`,
  chat: (model: string) => `${OPERATION.chat} ${model}`,
  tool: toolSpanName,
  run: (proposalRef: string) => `warrant.run ${proposalRef}`,
  step: (stepId: string) => `warrant.step ${stepId}`,
  check: (name: string) => `warrant.check ${name}`,
  eval: "warrant.eval",
  cell: (task: string, agent: string, epoch: number) =>
    `warrant.eval.cell ${task} ${agent} ${epoch}`,
} as const;

export const GEN_AI = {
  operationName: "gen_ai.operation.name",
  workflowName: "gen_ai.workflow.name",
  agentName: "gen_ai.agent.name",
  agentId: "gen_ai.agent.id",
  agentVersion: "gen_ai.agent.version",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  requestMaxTokens: "gen_ai.request.max_tokens",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  reasoningTokens: "gen_ai.usage.reasoning.output_tokens",
  tokenType: "gen_ai.token.type",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolArguments: "gen_ai.tool.call.arguments",
  toolResult: "gen_ai.tool.call.result",
  systemInstructions: "gen_ai.system_instructions",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
} as const;

/** General conventions the GenAI ones lean on. */
export const GENERAL = {
  errorType: "error.type",
  serverAddress: "server.address",
  serverPort: "server.port",
} as const;

export const WARRANT = {
  query: "warrant.query",
  binding: "warrant.binding",
  store: "warrant.store",
  holder: "warrant.holder",
  driveStatus: "warrant.drive.status",
  stopReason: "warrant.stop.reason",
  blockedReason: "warrant.blocked.reason",
  blockedDetail: "warrant.blocked.detail",
  budgetCounter: "warrant.budget.counter",
  link: "warrant.link",
  role: "warrant.role",
  passageRef: "warrant.passage.ref",
  passageRedone: "warrant.passage.redone",
  messageType: "warrant.message.type",
  planRefused: "warrant.plan.refused",
  modelCalls: "warrant.passage.model_calls",
  toolCalls: "warrant.passage.tool_calls",
  repairs: "warrant.passage.repairs",
  turnValid: "warrant.turn.valid",
  repairCodes: "warrant.repair.codes",
  toolKind: "warrant.tool.kind",
  proposalRef: "warrant.proposal.ref",
  environmentRef: "warrant.environment.ref",
  sandboxBackend: "warrant.sandbox.backend",
  runOutcome: "warrant.run.outcome",
  runRefusal: "warrant.run.refusal",
  environmentMade: "warrant.environment.made",
  environmentDestroyed: "warrant.environment.destroyed",
  runInterrupted: "warrant.run.interrupted",
  phase: "warrant.run.phase",
  durationMs: "warrant.duration_ms",
  stepId: "warrant.step.id",
  stepIndex: "warrant.step.index",
  stepClass: "warrant.step.class",
  stepAction: "warrant.step.action",
  stepStatus: "warrant.step.status",
  exitCode: "warrant.step.exit_code",
  truncated: "warrant.step.truncated",
  timedOut: "warrant.step.timed_out",
  refusal: "warrant.refusal",
  checkName: "warrant.check.name",
  checkPassed: "warrant.check.passed",
  checkDetail: "warrant.check.detail",
  approvalStep: "warrant.approval.step",
  approvalKind: "warrant.approval.kind",
  approvalAnswer: "warrant.approval.answer",
  approvalBy: "warrant.approval.by",
  approvalDescription: "warrant.approval.description",
  factKind: "warrant.fact.kind",
  factSequence: "warrant.fact.sequence",
  detail: "warrant.detail",
  evalId: "warrant.eval.id",
  evalSet: "warrant.eval.set",
  evalCells: "warrant.eval.cells",
  evalStatus: "warrant.eval.status",
  evalPassed: "warrant.eval.passed",
  cellTask: "warrant.eval.task",
  cellAgent: "warrant.eval.agent",
  cellEpoch: "warrant.eval.epoch",
  cellKey: "warrant.eval.key",
  cellOutcome: "warrant.eval.outcome",
  cellAttempts: "warrant.eval.attempts",
} as const;

export const EVENT = {
  fact: "warrant.fact",
  repair: "warrant.repair",
  phase: "warrant.run.phase",
  approvalRequested: "warrant.approval.requested",
  approvalAnswered: "warrant.approval.answered",
  budgetRefused: "warrant.budget.refused",
  blocked: "warrant.blocked",
  leaseLost: "warrant.lease.lost",
  summarySkipped: "warrant.summary.skipped",
} as const;

export const METRIC = {
  operationDuration: "gen_ai.client.operation.duration",
  tokenUsage: "gen_ai.client.token.usage",
  loopStops: "warrant.loop.stops",
  budgetSpent: "warrant.budget.spent",
} as const;

/** The buckets the conventions advise for each histogram. */
export const BUCKETS = {
  durationSeconds: [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
  ],
  tokens: [
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
  ],
} as const;
