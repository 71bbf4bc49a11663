// The passage executor: runs model turns under a passage's limits until the model emits a message
// its role may emit, a repair fails, or a limit is reached. Tool calls go through the tool host and
// their results back to the model. Every model call and tool call lands in the transcript.
//
// Per-turn cost is flat: the conversation is append-only and shared with the provider (which
// converts only new entries), request digests chain over new entries, and nothing re-serialises
// the history.
import type { Role } from "../core/loop/types.js";
import {
  addUsage,
  type ConversationEntry,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  NO_USAGE,
  type ProviderTool,
  type ResponseMeta,
  type ToolResultEntry,
  type Usage,
} from "../core/ports/model-provider.js";
import type { ToolHost, ToolResult } from "../core/ports/tool-host.js";
import { canonicalJson } from "../core/records/canonical.js";
import { type Problem, WarrantError } from "../core/result.js";
import { repairText } from "../core/turn/repair-text.js";
import type { ToolRegistry, ToolSpec } from "../core/turn/tool-registry.js";
import {
  type MessageType,
  ROLE_MESSAGE_TYPES,
  type ValidCall,
  type ValidMessage,
} from "../core/turn/types.js";
import { type TurnContext, validateTurn } from "../core/turn/validate-turn.js";
import { RequestDigests, sha256Text } from "./passage-digest.js";
import {
  type PassageTranscript,
  type TranscriptHead,
  TranscriptLog,
} from "./passage-transcript.js";

export interface PassageEvidence {
  readonly ref: string;
  readonly content: string;
}

/** The model settings a passage reads from an agent definition (its first model's). */
export interface PassageDefinition {
  readonly models?: readonly {
    readonly settings?: {
      readonly maxTokens?: number | null;
      readonly maxCompletionTokens?: number | null;
    };
  }[];
}

export interface PassageLimits {
  /** Model calls, repair attempts included. */
  readonly maxTurns: number;
  /** Input plus output tokens over all model calls. */
  readonly maxTokens: number;
}

/** What happens inside a passage, as it happens (the transcript keeps the same, in full). */
export type PassageEvent =
  | {
      readonly kind: "model-call-start";
      readonly index: number;
      /** Only with `content`. */
      readonly request?: ModelRequest;
    }
  | {
      readonly kind: "model-call-end";
      readonly index: number;
      readonly latencyMs: number;
      /** Absent when the call failed (`error` is its code). */
      readonly stop?: ModelResponse["stop"];
      readonly valid?: boolean | null;
      readonly usage?: Usage;
      readonly error?: string;
      /** How the provider named its answer (absent when the call failed). */
      readonly response?: ResponseMeta;
      /** The candidate turn: only with `content`. */
      readonly output?: unknown;
    }
  | { readonly kind: "repair"; readonly index: number; readonly codes: readonly string[] }
  | {
      readonly kind: "tool-call-start";
      /** The model call whose turn made this call, and the call's place in that turn. */
      readonly turn: number;
      readonly call: number;
      readonly name: string;
      /** Only with `content`. */
      readonly args?: Readonly<Record<string, unknown>>;
    }
  | {
      readonly kind: "tool-call-end";
      readonly turn: number;
      readonly call: number;
      readonly name: string;
      readonly isError: boolean;
      readonly code?: string;
      readonly latencyMs: number;
      /** What the model reads back: only with `content`. */
      readonly result?: string;
    };

export interface PassageInput {
  readonly role: Role;
  readonly agentId: string;
  /** The message types the passage may end with, when not its role's (a sub-agent's passage). */
  readonly messageTypes?: readonly MessageType[];
  readonly definition?: PassageDefinition;
  readonly system: string;
  /** Fixed before the first model call: the first user entry of the conversation. */
  readonly evidence: string | readonly PassageEvidence[];
  readonly registry: ToolRegistry;
  readonly toolHost: Pick<ToolHost, "call">;
  readonly provider: ModelProvider;
  readonly limits: PassageLimits;
  /** Repair attempts for the whole passage (default 2). */
  readonly repairs?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: PassageEvent) => void;
  /** Put the request, the answer and the tool payloads in the events (default false). */
  readonly content?: boolean;
  /** Output tokens asked of each call when the definition states none (default 4096). */
  readonly maxOutputTokens?: number;
  readonly toolTimeoutMs?: number;
  /** Whether a message's paper_ref resolves (see validateTurn). */
  readonly resolvePaperRef?: (ref: string) => boolean;
  /**
   * The host's own check of a message that validated (a Plan against the task pack): its problems,
   * pointers into the payload. A refused message is answered as a repair while repairs remain
   * (charged to the same budget, recorded as the call's validation); when none remains the passage
   * ends with the message all the same, and the caller acts on the refusal.
   */
  readonly checkMessage?: (message: ValidMessage) => readonly Problem[];
}

export type PassageOutcome =
  | {
      readonly ok: true;
      readonly message: ValidMessage;
      readonly transcript: PassageTranscript;
    }
  | {
      readonly ok: false;
      /** `turn/…` (invalid output, refusal, truncation), `passage/…` (limits), `model/…`. */
      readonly code: string;
      readonly message: string;
      readonly errors: readonly Problem[];
      readonly transcript: PassageTranscript;
    };

export const DEFAULT_REPAIRS = 2;

/**
 * What a tool host throws when its write to the loop's ledger failed (a lost lease, a store gone):
 * the passage does not go on with part of it unrecorded; `reason` is rethrown to the drive.
 */
export class LedgerWriteFailed extends Error {
  readonly reason: unknown;
  constructor(reason: unknown) {
    super("a tool's write to the ledger failed", { cause: reason });
    this.reason = reason;
  }
}

/** Runs a tool's ledger write, turning its failure into LedgerWriteFailed. */
export async function ledgerWrite<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    throw new LedgerWriteFailed(e);
  }
}
const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** A function, so the compiler does not narrow `aborted` across awaits. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function renderEvidence(evidence: string | readonly PassageEvidence[]): string {
  if (typeof evidence === "string") return evidence;
  return evidence.map((e) => `## ${e.ref}\n\n${e.content}`).join("\n\n");
}

/** The host's problems with a message, worded as the turn's own repairs are: what, where, why. */
function hostRefusals(message: ValidMessage, problems: readonly Problem[]): Problem[] {
  return problems.map((p) => ({
    code: p.code,
    path: "/message/payload_json",
    message: `the host refused the ${message.type} at ${p.path || "(root)"}: ${p.message}`,
    detail: { subject: message.type, instancePath: p.path, ...p.detail },
  }));
}

function outputTokensOf(input: PassageInput): number {
  const settings = input.definition?.models?.[0]?.settings;
  const stated = settings?.maxCompletionTokens ?? settings?.maxTokens;
  return typeof stated === "number" && stated > 0
    ? stated
    : (input.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS);
}

/** The end of a model call that answered, as its event says it. */
function modelCallEnd(
  index: number,
  response: ModelResponse,
  valid: boolean | null,
  content: boolean,
): PassageEvent {
  const { latencyMs, stop, usage, meta } = response;
  return content
    ? {
        kind: "model-call-end",
        index,
        latencyMs,
        stop,
        valid,
        usage,
        response: meta,
        output: response.candidate,
      }
    : { kind: "model-call-end", index, latencyMs, stop, valid, usage, response: meta };
}

/** The end of a tool call, as its event says it. */
function toolCallEnd(
  turn: number,
  call: number,
  name: string,
  result: ToolResult,
  latencyMs: number,
  content: boolean,
): PassageEvent {
  // Literals, not spreads (an object spread with more properties after it is slow in V8).
  const { isError, code } = result;
  const kind = "tool-call-end";
  if (code === undefined) {
    return content
      ? { kind, turn, call, name, isError, latencyMs, result: result.content }
      : { kind, turn, call, name, isError, latencyMs };
  }
  return content
    ? { kind, turn, call, name, isError, latencyMs, code, result: result.content }
    : { kind, turn, call, name, isError, latencyMs, code };
}

/** A passage in progress: what its turns share, made once per passage, and what they count. */
interface Run {
  readonly input: PassageInput;
  readonly content: boolean;
  readonly repairs: number;
  readonly messageTypes: readonly MessageType[];
  readonly tools: readonly ProviderTool[];
  readonly evidenceText: string;
  readonly conversation: ConversationEntry[];
  readonly log: TranscriptLog;
  readonly digests: RequestDigests;
  /** Output tokens asked of each call, before the passage's token limit caps it. */
  readonly perCall: number;
  readonly turnChecks: TurnContext;
  readonly toolOptions: { readonly signal?: AbortSignal; readonly timeoutMs?: number };
  usage: Usage;
  latencyMs: number;
  modelCalls: number;
  toolCalls: number;
  repairsUsed: number;
  /** The problems of the model's last answer, while it was refused and not yet answered anew. */
  lastRefused: readonly Problem[];
}

type Failure = Extract<PassageOutcome, { ok: false }>;

/** The tools as providers are given them, made once per list of specs (a registry keeps one). */
const toolLists = new WeakMap<readonly ToolSpec[], readonly ProviderTool[]>();

function providerTools(registry: ToolRegistry): readonly ProviderTool[] {
  const specs = registry.specs();
  let tools = toolLists.get(specs);
  if (tools === undefined) {
    tools = specs.map((s) => ({
      name: s.name,
      description: s.description,
      inputSchema: s.inputSchema,
    }));
    toolLists.set(specs, tools);
  }
  return tools;
}

/** What does not change from turn to turn, made once per passage, and counters at zero. */
function startRun(input: PassageInput): Run {
  const { registry, signal } = input;
  const messageTypes = input.messageTypes ?? ROLE_MESSAGE_TYPES[input.role];
  const tools = providerTools(registry);
  const evidenceText = renderEvidence(input.evidence);
  const log = new TranscriptLog();
  return {
    input,
    content: input.content === true,
    repairs: input.repairs ?? DEFAULT_REPAIRS,
    messageTypes,
    tools,
    evidenceText,
    conversation: [{ kind: "user", text: evidenceText }],
    log,
    digests: new RequestDigests({ system: input.system, tools, messageTypes }, log.known),
    perCall: outputTokensOf(input),
    turnChecks: {
      registry,
      role: input.role,
      ...(input.messageTypes === undefined ? {} : { messageTypes: input.messageTypes }),
      ...(input.resolvePaperRef === undefined ? {} : { resolvePaperRef: input.resolvePaperRef }),
    },
    toolOptions: {
      ...(signal === undefined ? {} : { signal }),
      ...(input.toolTimeoutMs === undefined ? {} : { timeoutMs: input.toolTimeoutMs }),
    },
    usage: NO_USAGE,
    latencyMs: 0,
    modelCalls: 0,
    toolCalls: 0,
    repairsUsed: 0,
    lastRefused: [],
  };
}

/** A text digested and its digest. */
type Digested = { text: string; digest: string } | undefined;

/** The last system prompt and evidence digested: an agent's passages share their prompt. */
const lastDigested: { system: Digested; evidence: Digested } = {
  system: undefined,
  evidence: undefined,
};

/** `digestOf(text)` (SHA-256 over its JCS), hashed natively, the last one of its kind kept. */
function textDigest(text: string, kind: keyof typeof lastDigested): string {
  const last = lastDigested[kind];
  if (last?.text === text) return last.digest;
  const digest = sha256Text(canonicalJson(text));
  lastDigested[kind] = { text, digest };
  return digest;
}

/** The transcript's head as the passage ends with `outcome`. */
function transcriptHead(run: Run, outcome: PassageTranscript["outcome"]): TranscriptHead {
  const { input } = run;
  return {
    schema: "warrant.passage-transcript.v1",
    role: input.role,
    "agent/id": input.agentId,
    provider: input.provider.id,
    systemDigest: textDigest(input.system, "system"),
    evidenceDigest: textDigest(run.evidenceText, "evidence"),
    ...(typeof input.evidence === "string"
      ? {}
      : { evidenceRefs: input.evidence.map((e) => e.ref) }),
    usage: {
      ...run.usage,
      latencyMs: run.latencyMs,
      modelCalls: run.modelCalls,
      toolCalls: run.toolCalls,
      repairs: run.repairsUsed,
    },
    outcome,
  };
}

function failed(run: Run, code: string, message: string, errors: readonly Problem[] = []): Failure {
  const transcript = run.log.finish(transcriptHead(run, { ok: false, code, message }));
  return { ok: false, code, message, errors, transcript };
}

/** The passage's end when it is cancelled or has used its turns or tokens; otherwise undefined. */
function limitReached(run: Run, used: number): Failure | undefined {
  const { limits } = run.input;
  if (aborted(run.input.signal))
    return failed(run, "passage/cancelled", "the passage was cancelled");
  if (run.modelCalls >= limits.maxTurns) {
    return failed(
      run,
      "passage/max-turns",
      `the passage reached its limit of ${limits.maxTurns} model calls without a message`,
    );
  }
  if (used >= limits.maxTokens) {
    return failed(
      run,
      "passage/max-tokens",
      `the passage used ${used} of its ${limits.maxTokens} tokens without a message`,
    );
  }
  return undefined;
}

/** The passage's end when a model call threw: recorded, and said with the last refused answer. */
function modelCallFailed(
  run: Run,
  e: unknown,
  index: number,
  requestDigest: string,
  callStarted: number,
): Failure {
  const code = e instanceof WarrantError ? e.code : "model/failed";
  const message = e instanceof WarrantError ? e.message : "the model call failed unexpectedly";
  const latencyMs = performance.now() - callStarted;
  run.input.onEvent?.({ kind: "model-call-end", index, latencyMs, error: code });
  run.log.append({ kind: "model-error", index, requestDigest, code, message });
  if (aborted(run.input.signal))
    return failed(run, "passage/cancelled", "the passage was cancelled");
  // A model left without a valid answer: the refused one is what to fix, so it is said too.
  const cause = run.lastRefused[0];
  return cause === undefined
    ? failed(run, code, message)
    : failed(
        run,
        code,
        `${message}; its last answer was refused: ${cause.code} ${cause.path || "(root)"}: ${cause.message}`,
        run.lastRefused,
      );
}

/** The passage's end when the model refused or was cut short. */
function unfinished(
  run: Run,
  response: ModelResponse,
  index: number,
  requestDigest: string,
): Failure {
  run.log.append({
    kind: "model-call",
    index,
    requestDigest,
    raw: response.raw,
    stop: response.stop,
    ...(response.refusal === undefined ? {} : { refusal: response.refusal }),
    validation: null,
    usage: response.usage,
    response: response.meta,
    latencyMs: response.latencyMs,
  });
  run.input.onEvent?.(modelCallEnd(index, response, null, run.content));
  return response.stop === "refusal"
    ? failed(
        run,
        "turn/refusal",
        `the model refused${response.refusal ? `: ${response.refusal}` : ""}`,
      )
    : failed(run, "turn/truncated", "the model's answer was cut at its output token limit");
}

/** Answers a refused turn with a repair, charged to the passage's repairs. */
function repair(run: Run, index: number, errors: readonly Problem[]): void {
  run.repairsUsed++;
  run.lastRefused = errors;
  run.input.onEvent?.({ kind: "repair", index, codes: errors.map((e) => e.code) });
  run.conversation.push({ kind: "repair", errors, text: repairText(errors) });
}

/** An invalid turn, recorded: repaired while repairs remain (undefined), else the passage's end. */
function invalidTurn(
  run: Run,
  response: ModelResponse,
  errors: readonly Problem[],
  index: number,
  requestDigest: string,
): Failure | undefined {
  run.input.onEvent?.(modelCallEnd(index, response, false, run.content));
  run.log.append({
    kind: "model-call",
    index,
    requestDigest,
    raw: response.raw,
    stop: response.stop,
    candidate: response.candidate,
    validation: { valid: false, errors },
    usage: response.usage,
    response: response.meta,
    latencyMs: response.latencyMs,
  });
  const first = errors[0];
  if (run.repairsUsed >= run.repairs) {
    return failed(
      run,
      first?.code ?? "turn/schema",
      `the model's turn was invalid and no repair is left (${run.repairs} allowed): ${first?.message ?? ""}`,
      errors,
    );
  }
  repair(run, index, errors);
  return undefined;
}

/**
 * What the model reads of a tool call that threw (a host never rejects by contract); a tool that
 * could not write the ledger (a memory write, a sub-agent's charge) ends the drive as a crash
 * would instead: resume redoes the passage, and its writes replay.
 */
function thrownByTool(e: unknown): ToolResult {
  if (e instanceof LedgerWriteFailed) throw e.reason;
  const code = e instanceof WarrantError ? e.code : "tool/failed";
  return { ok: false, content: `the tool failed (${code})`, isError: true, code };
}

/** A tool call done: counted, in the transcript, told, and its result kept for the model. */
function recordToolCall(
  run: Run,
  index: number,
  n: number,
  call: ValidCall,
  result: ToolResult,
  latencyMs: number,
  results: ToolResultEntry[],
): void {
  run.toolCalls++;
  run.log.append({
    kind: "tool-call",
    turn: index,
    name: call.name,
    args: call.args,
    result,
    latencyMs,
  });
  run.input.onEvent?.(toolCallEnd(index, n, call.name, result, latencyMs, run.content));
  results.push({
    name: call.name,
    content: result.content,
    isError: result.isError,
  });
}

export async function runPassage(input: PassageInput): Promise<PassageOutcome> {
  const { provider, signal, onEvent } = input;
  const run = startRun(input);
  const { content, conversation, log } = run;
  for (;;) {
    const used = run.usage.inputTokens + run.usage.outputTokens;
    const limited = limitReached(run, used);
    if (limited !== undefined) return limited;
    const request: ModelRequest = {
      role: input.role,
      system: input.system,
      conversation,
      length: conversation.length,
      tools: run.tools,
      messageTypes: run.messageTypes,
      maxOutputTokens: Math.min(run.perCall, input.limits.maxTokens - used),
    };
    const index = run.modelCalls++;
    const requestDigest = run.digests.digest(request);
    let response: ModelResponse;
    // One literal per shape, never a spread of a maybe-empty object: these run on every turn.
    onEvent?.(
      content ? { kind: "model-call-start", index, request } : { kind: "model-call-start", index },
    );
    const callStarted = performance.now();
    try {
      response = await provider.complete(request, signal === undefined ? undefined : { signal });
    } catch (e) {
      return modelCallFailed(run, e, index, requestDigest, callStarted);
    }
    run.usage = addUsage(run.usage, response.usage);
    run.latencyMs += response.latencyMs;
    conversation.push({ kind: "model", response });
    if (response.stop !== "complete") return unfinished(run, response, index, requestDigest);

    const checked = validateTurn(response.candidate, run.turnChecks);
    if (!checked.ok) {
      const ended = invalidTurn(run, response, checked.errors, index, requestDigest);
      if (ended !== undefined) return ended;
      continue;
    }
    const valid = checked.value;
    const { message } = valid;
    const refused =
      message === undefined || input.checkMessage === undefined
        ? []
        : hostRefusals(message, input.checkMessage(message));
    onEvent?.(modelCallEnd(index, response, refused.length === 0, content));
    log.append({
      kind: "model-call",
      index,
      requestDigest,
      raw: response.raw,
      stop: response.stop,
      turn: valid.turn,
      validation: { valid: refused.length === 0, errors: refused },
      usage: response.usage,
      response: response.meta,
      latencyMs: response.latencyMs,
    });
    run.lastRefused = refused;
    if (message !== undefined && refused.length > 0 && run.repairsUsed < run.repairs) {
      repair(run, index, refused);
      continue;
    }
    if (message !== undefined) {
      return {
        ok: true,
        message,
        transcript: log.finish(transcriptHead(run, { ok: true, type: message.type })),
      };
    }
    // The turn's tool calls in order, inline: an async helper would cost a promise per turn.
    const results: ToolResultEntry[] = [];
    for (let n = 0; n < valid.calls.length; n++) {
      const call = valid.calls[n] as ValidCall;
      onEvent?.(
        content
          ? { kind: "tool-call-start", turn: index, call: n, name: call.name, args: call.args }
          : { kind: "tool-call-start", turn: index, call: n, name: call.name },
      );
      const started = performance.now();
      let result: ToolResult;
      try {
        result = await input.toolHost.call(call.name, call.args, run.toolOptions);
      } catch (e) {
        result = thrownByTool(e);
      }
      recordToolCall(run, index, n, call, result, performance.now() - started, results);
    }
    conversation.push({ kind: "tool-results", results });
  }
}
