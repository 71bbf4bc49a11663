// Runs a passage for the driver as its agent definition says: the definition's first model (or the
// run's override for the role, recorded as such) wrapped in its middleware; a system prompt of its
// prompts, its verified skills and its memory; the observation tools the composition offers (only
// the declared ones and the built-in ones when the definition declares tools), plus its own
// `skill.read`, `memory.write` and `agent.<name>` sub-agent tools; under the task pack's passage
// limits. The transcript comes back as a record, carrying what shaped the passage beyond its ID.
import { type MiddlewareSpec, middlewareSpecs } from "../core/definition/middleware-config.js";
import type { Role } from "../core/loop/types.js";
import type { ModelProvider } from "../core/ports/model-provider.js";
import {
  createCompositeToolHost,
  registryOf,
  type ToolHost,
  toolFailure,
} from "../core/ports/tool-host.js";
import { fail, ok, type Result, WarrantError } from "../core/result.js";
import { targetOf } from "../core/turn/model-target.js";
import type { TypedMessage } from "../core/turn/payloads.js";
import type { ToolRegistry } from "../core/turn/tool-registry.js";
import type { MessageType, ValidMessage } from "../core/turn/types.js";
import { type AgentSite, rootSite } from "./agent-site.js";
import type { PassageOutcome, PassageRequest, PassageRunner } from "./context.js";
import { bindDeclaredTools, declaredToolHost } from "./declared-tools.js";
import type { DefinitionFiles, PreparedParts } from "./definition-parts.js";
import type { Emit, ToolKind } from "./events.js";
import {
  MEMORY_WRITE,
  type MemoryReads,
  memoryPrompt,
  memorySeen,
  memoryTools,
  readWritable,
  type WritableMemory,
} from "./memory-tools.js";
import { type Notes, withMiddleware } from "./model-middleware.js";
import { type PassageDefinition, type PassageEvent, runPassage } from "./passage.js";
import { transcriptRecord } from "./passage-transcript.js";
import { SKILL_READ, skillsPrompt, skillTools } from "./skill-tools.js";
import { SUB_AGENT_MESSAGE_TYPES, SUB_AGENT_PREFIX, subAgentTools } from "./sub-agent-tools.js";
import type { LoadedPack } from "./task-pack.js";

/**
 * The models of passages. `priorCalls` is how many model calls this agent's earlier, ended passages
 * made: a scripted model starts after them, so a passage redone after a crash replays exactly the
 * answers the interrupted one was given.
 */
export interface PassageModels {
  /** The role's model when the run names one instead of the definition's, with what is recorded. */
  override(
    role: Role,
    priorCalls: number,
    query: string,
  ): { readonly provider: ModelProvider; readonly uri: string } | undefined;
  /** Model `index` of an agent's definition (throws a WarrantError when it cannot be made). */
  definition(site: AgentSite, index: number, priorCalls: number, pack: LoadedPack): ModelProvider;
}

const DEFAULT_LIMITS = { maxTurns: 8, maxTokens: 32_000 };

function systemPrompt(role: Role, site: AgentSite, parts: readonly string[]): string {
  const own = (site.definition.prompts ?? [])
    .filter((p) => p.role === "system" && typeof p.content === "string")
    .map((p) => p.content as string);
  const head =
    site.pointer === ""
      ? `You are the ${role} of a Warrant loop. Answer with exactly one typed message.`
      : `You are ${site.definition.name}, a sub-agent the ${role} of a Warrant loop calls. Answer with exactly one typed message: a Result, or a Finding.`;
  return [head, ...own, ...parts.filter((p) => p !== "")].join("\n\n");
}

/**
 * The observation tools the composition offers an agent's passages (workspace reads of the pack's
 * baseline, its profiles, code tools, the MCP tools its definition declares), or why it cannot
 * have them (`tool/…`: an MCP server that cannot be reached): the passage then fails with that code
 * before its first model call.
 */
export type ToolsForPassage = (
  request: PassageRequest,
  site: AgentSite,
) => Promise<Result<ToolHost>>;

const noTools: ToolHost = {
  specs: () => [],
  call: async () => toolFailure("tool/unknown", "no tools"),
};

export interface AgentPassagesOptions {
  readonly models: PassageModels;
  /** The passages' tools (default: none). */
  readonly tools?: ToolsForPassage;
  /**
   * Reads skills and read-only memory (absent: an agent that has either fails
   * `definition/files-unavailable`), finding skills also under `skillDirs`.
   */
  readonly files?: { readonly files: DefinitionFiles; readonly skillDirs: readonly string[] };
  /** The namespace of namespace-scoped writable memory (before the pack's `memoryNamespace`). */
  readonly namespace?: string;
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

/** Tools of the definition itself, kept when a definition declares tools. */
function definitionTool(name: string): boolean {
  return name === SKILL_READ || name === MEMORY_WRITE || name.startsWith(SUB_AGENT_PREFIX);
}

const builtIn = (name: string) => name.startsWith("workspace.") || definitionTool(name);

interface Passage {
  readonly request: PassageRequest;
  readonly site: AgentSite;
  readonly passageRef: string;
  readonly evidence: string;
  readonly priorCalls: number;
}

type Failed = Extract<PassageOutcome, { ok: false }>;

function failed(code: string, message: string): Failed {
  return { ok: false, code, message, modelCalls: 0 };
}

function firstProblem(r: { readonly errors: readonly { code: string; message: string }[] }) {
  const p = r.errors[0];
  return failed(p?.code ?? "definition/invalid", r.errors.map((e) => e.message).join("; "));
}

/** What a runner keeps across its passages: its options and what it has verified or compiled. */
interface Runner {
  readonly options: AgentPassagesOptions;
  readonly models: PassageModels;
  readonly toolsFor: ToolsForPassage;
  readonly emit: Emit;
  readonly toolKind: (name: string) => ToolKind;
  /** Verified parts per agent (a CID is recomputed once per runner, not once per passage). */
  readonly parts: Map<string, Promise<Result<PreparedParts>>>;
  /** Input schemas compile once per (tool host, agent, with or without a ledger), not per passage. */
  readonly registries: WeakMap<ToolHost, Map<string, ToolRegistry>>;
}

export function createAgentPassages(options: AgentPassagesOptions): PassageRunner {
  const runner: Runner = {
    options,
    models: options.models,
    toolsFor: options.tools ?? (async () => ok(noTools)),
    emit: options.emit ?? (() => undefined),
    toolKind: (name: string): ToolKind =>
      definitionTool(name) ? "definition" : (options.toolKind?.(name) ?? "workspace"),
    parts: new Map(),
    registries: new WeakMap(),
  };
  return {
    async run(request: PassageRequest): Promise<PassageOutcome> {
      const agent = request.pack.agents[request.role];
      if (agent === undefined)
        return failed("runtime/agent-missing", `the task pack names no ${request.role}`);
      return runAgent(runner, {
        request,
        site: rootSite(agent),
        passageRef: request.passageRef,
        evidence: request.evidence,
        priorCalls: request.priorCalls,
      });
    },
  };
}

/** An agent's verified skills and read-only memory, prepared once per runner. */
function partsOf(runner: Runner, site: AgentSite): Promise<Result<PreparedParts>> {
  const d = site.definition;
  const needed = (d.skills?.length ?? 0) > 0 || (d.memory ?? []).some((m) => !m.writable);
  if (!needed) return Promise.resolve(ok({ skills: [], memory: [] }));
  const files = runner.options.files;
  if (files === undefined) {
    const message = "this host reads no skills or memory files";
    return Promise.resolve(fail([{ code: "definition/files-unavailable", path: "", message }]));
  }
  let known = runner.parts.get(site.id);
  if (known === undefined) {
    known = files.files.prepare(site, files.skillDirs);
    runner.parts.set(site.id, known);
  }
  return known;
}

/** The observation tools of a passage's host as a registry, compiled once per base, agent and ledger. */
function registryFor(
  runner: Runner,
  base: ToolHost,
  site: AgentSite,
  host: ToolHost,
  ledger: boolean,
): ToolRegistry {
  let bySite = runner.registries.get(base);
  if (bySite === undefined) {
    bySite = new Map();
    runner.registries.set(base, bySite);
  }
  const key = `${site.id}${ledger ? "" : " (no ledger)"}`;
  const known = bySite.get(key);
  if (known !== undefined) return known;
  const made = registryOf(host);
  if (!made.ok) {
    const p = made.errors[0];
    throw new WarrantError(p?.code ?? "tool/registry", p?.message ?? "the tools do not register");
  }
  // Participants' passages get observation tools only (docs/spec/turns.md).
  const observation = made.value.withEffect("observation");
  bySite.set(key, observation);
  return observation;
}

/** The writable memory slots of a passage's agent, keyed by their scope. */
function writableOf(runner: Runner, p: Passage): Result<WritableMemory[]> {
  const namespace = runner.options.namespace ?? p.request.pack.pack.memoryNamespace;
  const slots: WritableMemory[] = [];
  for (const [i, m] of (p.site.definition.memory ?? []).entries()) {
    if (!m.writable) continue;
    const scope = m.scope?.kind ?? "shared";
    if (scope === "namespace" && namespace === undefined) {
      return fail([
        {
          code: "definition/memory-namespace-missing",
          path: `${p.site.pointer}/memory/${i}/scope`,
          message: `memory ${m.path} is kept per namespace: name one with --namespace or the task pack's "memoryNamespace"`,
        },
      ]);
    }
    const ns =
      scope === "shared" ? "" : scope === "thread" ? p.request.query : (namespace as string);
    slots.push({ path: m.path, key: { agent: p.site.id, path: m.path, scope, namespace: ns } });
  }
  return ok(slots);
}

/** What a passage is given before its first model call: its tools, parts, middleware and memory. */
interface Prepared {
  /** The composition's tools for the passage, before the declared ones are bound. */
  readonly offered: ToolHost;
  readonly host: ToolHost;
  readonly parts: PreparedParts;
  readonly specs: readonly MiddlewareSpec[];
  readonly slots: readonly WritableMemory[];
  readonly reads: MemoryReads;
}

/** A value a passage goes on with, or the outcome of a passage that fails before its first turn. */
type Ready<T> = { readonly ok: true; readonly value: T } | Failed;

/** A passage's tools, parts, middleware and memory, or why it fails before its first model call. */
async function prepare(runner: Runner, p: Passage): Promise<Ready<Prepared>> {
  const { request, site } = p;
  const d = site.definition;
  const tools = await runner.toolsFor(request, site);
  if (!tools.ok) return firstProblem(tools);
  const prepared = await partsOf(runner, site);
  if (!prepared.ok) return firstProblem(prepared);
  const specs = middlewareSpecs(d.middleware, d.models.length, site.pointer);
  if (!specs.ok) return firstProblem(specs);
  let base = tools.value;
  if (d.tools !== undefined && d.tools.length > 0) {
    const bound = bindDeclaredTools(d.tools, base.specs(), site.pointer);
    if (!bound.ok) return firstProblem(bound);
    base = declaredToolHost(base, bound.value, builtIn);
  }
  const slots = writableOf(runner, p);
  if (!slots.ok) return firstProblem(slots);
  const { ledger } = request;
  const needsLedger = slots.value.length > 0 || (d.subAgents?.length ?? 0) > 0;
  if (needsLedger && ledger === undefined) {
    return failed("runtime/no-ledger", "memory writes and sub-agents need the drive's ledger");
  }
  const reads: MemoryReads =
    ledger === undefined ? new Map() : await readWritable(ledger.store, slots.value, p.passageRef);
  const files = runner.options.files?.files;
  const hosts: ToolHost[] = [base];
  if (files !== undefined) hosts.push(skillTools(prepared.value.skills, files));
  if (ledger !== undefined) {
    hosts.push(
      memoryTools(slots.value, reads, {
        store: ledger.store,
        query: request.query,
        passageRef: p.passageRef,
        now: ledger.now,
      }),
      subAgentTools({
        query: request.query,
        role: request.role,
        parent: site,
        parentRef: p.passageRef,
        ledger,
        emit: runner.emit,
        run: (nested) => runAgent(runner, { request, ...nested }),
      }),
    );
  }
  const composite = createCompositeToolHost(hosts);
  if (!composite.ok) return firstProblem(composite);
  const host = composite.value;
  const value = { offered: tools.value, host, parts: prepared.value, specs: specs.value };
  return { ok: true, value: { ...value, slots: slots.value, reads } };
}

/** The run's override of the root agent's model, recorded as such. */
type Override = ReturnType<PassageModels["override"]>;

/** A passage's model: the override or the definition's first, in the definition's middleware. */
function providerOf(
  runner: Runner,
  p: Passage,
  override: Override,
  specs: readonly MiddlewareSpec[],
  notes: Notes,
): Ready<ModelProvider> {
  try {
    const modelAt = (n: number) =>
      runner.models.definition(p.site, n, p.priorCalls, p.request.pack);
    return {
      ok: true,
      value: withMiddleware(override?.provider ?? modelAt(0), specs, modelAt, notes),
    };
  } catch (e) {
    if (!(e instanceof WarrantError)) throw e;
    return failed(e.code, e.message);
  }
}

async function runAgent(runner: Runner, p: Passage): Promise<PassageOutcome> {
  const { request, site } = p;
  const limits = request.pack.pack.passage;
  const ready = await prepare(runner, p);
  if (!ready.ok) return ready;
  const { offered, host, parts, specs, slots, reads } = ready.value;
  const notes: Notes = [];
  const override =
    site.pointer === ""
      ? runner.models.override(request.role, p.priorCalls, request.query)
      : undefined;
  const model = providerOf(runner, p, override, specs, notes);
  if (!model.ok) return model;
  const provider = model.value;
  const system = systemPrompt(request.role, site, [
    skillsPrompt(parts.skills),
    memoryPrompt(parts.memory, slots, reads),
  ]);
  const nested = site.pointer !== "";
  const messageTypes: readonly MessageType[] | undefined = nested
    ? SUB_AGENT_MESSAGE_TYPES
    : undefined;
  const outcome = await runPassage({
    role: request.role,
    agentId: site.id,
    ...(messageTypes === undefined ? {} : { messageTypes }),
    definition: site.definition as PassageDefinition,
    system,
    evidence: p.evidence,
    registry: registryFor(runner, offered, site, host, request.ledger !== undefined),
    toolHost: host,
    provider,
    // With no one listening, no event is built: four a turn.
    ...(runner.options.emit === undefined ? {} : { onEvent: passageEvents(runner, p, provider) }),
    content: runner.options.captureContent === true,
    limits: {
      maxTurns: limits?.maxTurns ?? DEFAULT_LIMITS.maxTurns,
      maxTokens: limits?.maxTokens ?? DEFAULT_LIMITS.maxTokens,
    },
    ...(limits?.repairs === undefined ? {} : { repairs: limits.repairs }),
    // The host's check (a Plan against the pack) is the pack agent's, not a sub-agent's.
    ...(request.checkMessage === undefined || nested
      ? {}
      : { checkMessage: hostCheck(request.checkMessage) }),
  });
  const transcript = transcriptRecord(request.query, outcome.transcript, p.passageRef, {
    ...(override === undefined ? {} : { "model/override": override.uri }),
    ...(nested ? { "parent/ref": request.passageRef } : {}),
    ...definitionNotes(site, parts, slots, reads, specs, notes),
  });
  const usage = outcome.transcript.usage;
  const { modelCalls } = usage;
  const overridden = override === undefined ? {} : { modelOverride: override.uri };
  if (!outcome.ok) {
    const { code, message } = outcome;
    return { ok: false, code, message, transcript, modelCalls, usage, ...overridden };
  }
  const message = {
    type: outcome.message.type,
    payload: outcome.message.payload,
  } as TypedMessage;
  return { ok: true, message, transcript, modelCalls, usage, ...overridden };
}

/**
 * The passage's events as the runner tells them, with the query, role and passage they belong to.
 * Made once per passage. Each event is built as a literal, or copied with Object.assign and added
 * to: an object spread followed by more properties costs several microseconds in V8, and these run
 * on every turn. The keys come in the same order as the spreads would give them.
 */
function passageEvents(
  runner: Runner,
  p: Passage,
  provider: ModelProvider,
): (e: PassageEvent) => void {
  const { emit, toolKind } = runner;
  const target = targetOf(provider);
  const where = { query: p.request.query, role: p.request.role, passageRef: p.passageRef };
  const callId = (turn: number, call: number) => `${p.passageRef}#${turn}.${call}`;
  return (e: PassageEvent): void => {
    switch (e.kind) {
      case "model-call-start": {
        emit(
          e.request === undefined
            ? {
                kind: "model-call-start",
                query: where.query,
                role: where.role,
                passageRef: where.passageRef,
                index: e.index,
                provider: provider.id,
                target,
              }
            : {
                kind: "model-call-start",
                query: where.query,
                role: where.role,
                passageRef: where.passageRef,
                index: e.index,
                provider: provider.id,
                target,
                request: e.request,
              },
        );
        break;
      }
      case "model-call-end": {
        const end = Object.assign({}, e) as Record<string, unknown>;
        end.query = where.query;
        end.role = where.role;
        end.passageRef = where.passageRef;
        end.provider = provider.id;
        emit(end as never);
        break;
      }
      case "repair": {
        const repair = Object.assign({}, e) as Record<string, unknown>;
        repair.query = where.query;
        repair.role = where.role;
        repair.passageRef = where.passageRef;
        emit(repair as never);
        break;
      }
      case "tool-call-start":
        emit(
          e.args === undefined
            ? {
                kind: "tool-call-start",
                query: where.query,
                role: where.role,
                passageRef: where.passageRef,
                name: e.name,
                callId: callId(e.turn, e.call),
                tool: toolKind(e.name),
              }
            : {
                kind: "tool-call-start",
                query: where.query,
                role: where.role,
                passageRef: where.passageRef,
                name: e.name,
                callId: callId(e.turn, e.call),
                tool: toolKind(e.name),
                args: e.args,
              },
        );
        break;
      case "tool-call-end": {
        // Every key of the event but `turn` and `call`, in its order.
        const end: Record<string, unknown> = {};
        for (const key in e) {
          if (key !== "turn" && key !== "call") end[key] = e[key as keyof typeof e];
        }
        end.query = where.query;
        end.role = where.role;
        end.passageRef = where.passageRef;
        end.callId = callId(e.turn, e.call);
        end.tool = toolKind(e.name);
        emit(end as never);
        break;
      }
      default:
        e satisfies never;
    }
  };
}

/** What shaped a passage beyond its agent's content ID, for its transcript. */
function definitionNotes(
  site: AgentSite,
  parts: PreparedParts,
  slots: readonly WritableMemory[],
  reads: MemoryReads,
  specs: readonly MiddlewareSpec[],
  notes: Notes,
): Record<string, unknown> {
  const d = site.definition;
  return {
    ...(parts.skills.length === 0
      ? {}
      : { skills: parts.skills.map((s) => ({ name: s.name, cid: s.cid })) }),
    ...(parts.memory.length === 0 && slots.length === 0
      ? {}
      : {
          memory: {
            "read-only": parts.memory.map((m) => ({ path: m.path, cid: m.cid })),
            writable: memorySeen(slots, reads),
          },
        }),
    ...(specs.length === 0 ? {} : { middleware: { specs, notes } }),
    ...(d.permissions === undefined ? {} : { permissions: d.permissions }),
    ...(d.guardrails === undefined ? {} : { guardrails: d.guardrails }),
  };
}
