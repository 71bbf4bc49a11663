// Runs a passage for the driver: the role's model (chosen per role), the agent definition's system
// prompt, the observation tools the composition gives it, under the task pack's passage limits; the
// transcript comes back as a record.
import type { Role } from "../core/loop/types.js";
import { ok, type Result, WarrantError } from "../core/result.js";
import type { ModelProvider } from "../core/turn/model-provider.js";
import { targetOf } from "../core/turn/model-target.js";
import type { TypedMessage } from "../core/turn/payloads.js";
import { registryOf, type ToolHost, toolFailure } from "../core/turn/tool-host.js";
import type { ToolRegistry } from "../core/turn/tool-registry.js";
import type { ValidMessage } from "../core/turn/types.js";
import type { Emit, ToolKind } from "./events.js";
import { type PassageDefinition, type PassageEvent, runPassage } from "./passage.js";
import { transcriptRecord } from "./passage-transcript.js";
import type { PassageOutcome, PassageRequest, PassageRunner } from "./ports.js";

/**
 * The model for one passage. `priorCalls` is how many model calls this role's earlier, ended
 * passages made: a scripted model starts after them, so a passage redone after a crash replays
 * exactly the answers the interrupted one was given.
 */
export type ModelForPassage = (role: Role, priorCalls: number, query: string) => ModelProvider;

const DEFAULT_LIMITS = { maxTurns: 8, maxTokens: 32_000 };

function systemPrompt(role: Role, definition: unknown): string {
  const prompts =
    (definition as { prompts?: readonly { role?: string; content?: string }[] }).prompts ?? [];
  const own = prompts
    .filter((p) => p.role === "system" && typeof p.content === "string")
    .map((p) => p.content as string);
  return [
    `You are the ${role} of a Warrant loop. Answer with exactly one typed message.`,
    ...own,
  ].join("\n\n");
}

/**
 * The observation tools a passage may call (workspace reads of the pack's baseline, the MCP tools
 * its agent definition declares), or why it cannot have them (`tool/…`: an MCP server that cannot
 * be reached): the passage then fails with that code before its first model call.
 */
export type ToolsForPassage = (request: PassageRequest) => Promise<Result<ToolHost>>;

const noTools: ToolHost = {
  specs: () => [],
  call: async () => toolFailure("tool/unknown", "no tools"),
};

export interface AgentPassagesOptions {
  readonly models: ModelForPassage;
  /** The passages' tools (default: none). */
  readonly tools?: ToolsForPassage;
  /** Where the passage's model calls, repairs and tool calls are told. */
  readonly emit?: Emit;
  /** Which kind of tool a name is, for the events (default: `workspace`). */
  readonly toolKind?: (name: string) => ToolKind;
  /**
   * Put prompts, answers, tool arguments and tool results in the events (default false): only for
   * an observer that was asked to record content.
   */
  readonly captureContent?: boolean;
}

/** The request's check of a typed message, as the passage calls it on a validated one. */
function hostCheck(check: NonNullable<PassageRequest["checkMessage"]>) {
  return (m: ValidMessage) => check({ type: m.type, payload: m.payload } as TypedMessage);
}

export function createAgentPassages(options: AgentPassagesOptions): PassageRunner {
  const modelFor = options.models;
  const toolsFor = options.tools ?? (async () => ok(noTools));
  const emit = options.emit ?? (() => undefined);
  const toolKind = options.toolKind ?? (() => "workspace");

  // Input schemas compile once per tool host, not once per passage.
  const registries = new WeakMap<ToolHost, ToolRegistry>();
  const registryFor = (host: ToolHost): ToolRegistry => {
    const known = registries.get(host);
    if (known !== undefined) return known;
    const made = registryOf(host);
    if (!made.ok) {
      const p = made.errors[0];
      throw new WarrantError(p?.code ?? "tool/registry", p?.message ?? "the tools do not register");
    }
    // Participants' passages get observation tools only (docs/spec/turns.md).
    const observation = made.value.withEffect("observation");
    registries.set(host, observation);
    return observation;
  };
  return {
    async run(request: PassageRequest): Promise<PassageOutcome> {
      const agent = request.pack.agents[request.role];
      const limits = request.pack.pack.passage;
      const tools = await toolsFor(request);
      if (!tools.ok) {
        const p = tools.errors[0];
        return {
          ok: false,
          code: p?.code ?? "tool/unavailable",
          message: p?.message ?? "the passage's tools are unavailable",
          modelCalls: 0,
        };
      }
      const host = tools.value;
      const provider = modelFor(request.role, request.priorCalls, request.query);
      const target = targetOf(provider);
      const where = { query: request.query, role: request.role, passageRef: request.passageRef };
      const callId = (turn: number, call: number) => `${request.passageRef}#${turn}.${call}`;
      const onEvent = (e: PassageEvent): void => {
        switch (e.kind) {
          case "model-call-start": {
            const start = {
              kind: "model-call-start",
              ...where,
              index: e.index,
              provider: provider.id,
              target,
            } as const;
            emit(e.request === undefined ? start : { ...start, request: e.request });
            break;
          }
          case "model-call-end":
            emit({ ...e, ...where, provider: provider.id });
            break;
          case "repair":
            emit({ ...e, ...where });
            break;
          case "tool-call-start":
            emit({
              kind: "tool-call-start",
              ...where,
              name: e.name,
              callId: callId(e.turn, e.call),
              tool: toolKind(e.name),
              ...(e.args === undefined ? {} : { args: e.args }),
            });
            break;
          case "tool-call-end": {
            const { turn, call, ...rest } = e;
            emit({ ...rest, ...where, callId: callId(turn, call), tool: toolKind(e.name) });
            break;
          }
          default:
            e satisfies never;
        }
      };
      const outcome = await runPassage({
        role: request.role,
        agentId: request.agentId,
        definition: (agent?.definition ?? {}) as PassageDefinition,
        system: systemPrompt(request.role, agent?.definition ?? {}),
        evidence: request.evidence,
        registry: registryFor(host),
        toolHost: host,
        provider,
        onEvent,
        content: options.captureContent === true,
        limits: {
          maxTurns: limits?.maxTurns ?? DEFAULT_LIMITS.maxTurns,
          maxTokens: limits?.maxTokens ?? DEFAULT_LIMITS.maxTokens,
        },
        ...(limits?.repairs === undefined ? {} : { repairs: limits.repairs }),
        ...(request.checkMessage === undefined
          ? {}
          : { checkMessage: hostCheck(request.checkMessage) }),
      });
      const transcript = transcriptRecord(request.query, outcome.transcript, request.passageRef);
      const usage = outcome.transcript.usage;
      const { modelCalls } = usage;
      if (!outcome.ok) {
        const { code, message } = outcome;
        return { ok: false, code, message, transcript, modelCalls, usage };
      }
      const message = {
        type: outcome.message.type,
        payload: outcome.message.payload,
      } as TypedMessage;
      return { ok: true, message, transcript, modelCalls, usage };
    },
  };
}
