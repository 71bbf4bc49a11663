// Loading an eval set from its file: the document validated (pointer-precise problems, with
// line:column for malformed JSON), each task pack loaded, each agent configuration resolved per task
// (`{task}` substituted, paths against the set's folder, scripts and definitions read), the pricing
// table read, and every cell planned with its key and its loop's query id.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { loadPack } from "../../adapters/fs/pack-loader.js";
import { parseModelUri } from "../../adapters/models/model-uri.js";
import { agentIdOf } from "../../core/definition/id.js";
import { SourcePositions } from "../../core/definition/source-positions.js";
import { validateDefinition } from "../../core/definition/validate.js";
import {
  type AgentConfiguration,
  agentConfigurationDigest,
  cellKey,
  cellQuery,
  type EvalSet,
  evalId,
  type ModelPrice,
  type PricingTable,
  substituteTask,
  validateEvalSet,
  validatePricing,
} from "../../core/eval/eval-set.js";
import { ROLES, type Role } from "../../core/loop/types.js";
import { digestOfBytes } from "../../core/records/canonical.js";
import { fail, ok, type Problem, pointer, type Result } from "../../core/result.js";
import { jsonSyntaxError } from "../../core/text/json-position.js";
import type { LoadedAgent, LoadedPack } from "../../runtime/task-pack.js";

export interface LoadedEvalTask {
  readonly id: string;
  readonly pack: LoadedPack;
  /** Absolute path of the oracle diff, when the task names one. */
  readonly oracle?: string;
}

/** One (task, agent) pair resolved: what its cells run on. */
export interface CellConfiguration {
  /** The model URI per overridden role, paths absolute, as the loop's binding records them. */
  readonly models: Readonly<Partial<Record<Role, string>>>;
  /** The agents that replace the pack's, by role. */
  readonly agents: Readonly<Partial<Record<Role, LoadedAgent>>>;
  /** What each role's model is priced as (`scripted` ones cost nothing). */
  readonly priced: Readonly<Partial<Record<Role, string>>>;
  readonly digest: string;
}

export interface PlannedCell {
  readonly task: string;
  readonly agent: string;
  readonly epoch: number;
  readonly key: string;
  readonly query: string;
  readonly config: CellConfiguration;
}

export interface LoadedEvalSet {
  readonly file: string;
  readonly dir: string;
  readonly set: EvalSet;
  /** The eval's id: `eval:<name>-<16 characters of the set's digest>`. */
  readonly id: string;
  readonly tasks: readonly LoadedEvalTask[];
  readonly agents: readonly string[];
  readonly cells: readonly PlannedCell[];
  readonly pricing?: PricingTable;
}

/** The price of a priced model, `"free"` for a scripted one, undefined when the table lacks it. */
export function priceOf(
  pricing: PricingTable | undefined,
  model: string,
): ModelPrice | "free" | undefined {
  if (model.startsWith("scripted:")) return "free";
  return pricing?.[model];
}

async function readJson(
  file: string,
  codes: { readonly read: string; readonly json: string },
): Promise<Result<unknown>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    return fail([{ code: codes.read, path: "", message: `${file}: ${(e as Error).message}` }]);
  }
  try {
    return ok(JSON.parse(text));
  } catch (e) {
    const at = jsonSyntaxError(text, e);
    return fail([
      {
        code: codes.json,
        path: "",
        message: `${at.line === undefined ? file : `${file}:${at.line}:${at.column ?? 1}`}: ${at.message}`,
        ...(at.line === undefined ? {} : { line: at.line, column: at.column ?? 1 }),
      },
    ]);
  }
}

/** A problem of the set file, with the line and column of its pointer in the set's text. */
function locator(text: string, doc: unknown): (p: Problem) => Problem {
  const positions = new SourcePositions(text);
  return (p) => {
    if (p.line !== undefined) return p;
    const where = positions.locate(doc, p.path);
    return where.line === undefined ? p : { ...p, line: where.line, column: where.column ?? 1 };
  };
}

async function readAgent(file: string): Promise<Result<LoadedAgent>> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined)
    return fail([{ code: "eval/definition-missing", path: "", message: `cannot read ${file}` }]);
  const def = validateDefinition(text);
  if (!def.ok)
    return fail(
      def.errors.map((e) => ({
        ...e,
        code: "eval/definition-invalid",
        message: `${file}: ${e.message}`,
      })),
    );
  return ok({ id: agentIdOf(def.value.id), path: file, definition: def.value.definition });
}

/** The default model of a role's definition as a URI (`provider:model`), for pricing. */
function definitionModel(agent: LoadedAgent | undefined): string | undefined {
  const models = (agent?.definition as { models?: { provider: string; model: string }[] })?.models;
  const first = models?.[0];
  return first === undefined ? undefined : `${first.provider}:${first.model}`;
}

/**
 * Loads an eval set. Codes: `eval/read`, `eval/json` (with line:column), validateEvalSet's
 * (`eval/schema`, `eval/duplicate-id`, `eval/placeholder-unknown`, `eval/pricing-required`),
 * `eval/pack-invalid` (at `/tasks/N/pack`, the pack's own problem in the message),
 * `eval/oracle-missing`, `eval/model-invalid` and `eval/script-missing` (at
 * `/agents/N/models/ROLE`, naming the task whose substitution failed), `eval/definition-missing`,
 * `eval/definition-invalid` (at `/agents/N/definitions/ROLE`), `eval/role-unknown` (a role the
 * task's pack names no agent for), `eval/pricing-read`, `eval/pricing-json`,
 * `eval/pricing-invalid` (at `/pricing`, the table's pointer in the message), and
 * `eval/price-missing` (with `limits.costUsd`, a model the table does not price).
 */
export async function loadEvalSet(file: string): Promise<Result<LoadedEvalSet>> {
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  const read = readSetFile(file, abs);
  if (!read.ok) return read;
  const { text, doc } = read.value;
  const located = locator(text, doc);
  const validated = validateEvalSet(doc);
  if (!validated.ok) return fail(validated.errors.map(located));
  const set = validated.value;
  const problems: Problem[] = [];
  const cx: Loading = { set, dir, at: (p) => problems.push(located(p)) };
  const pricing = await loadPricing(cx);
  const tasks = await loadTasks(cx);
  const configs = new Map<string, CellConfiguration>();
  for (const [i, a] of set.agents.entries()) {
    for (const task of tasks)
      configs.set(configKey(task, a), await configurationOf(cx, i, a, task));
    if (set.limits.costUsd !== undefined && pricing !== undefined)
      unpricedModels(cx, i, a, tasks, configs, pricing);
  }
  if (problems.length > 0) return fail(problems);
  return ok({
    file: abs,
    dir,
    set,
    id: evalId(set.name, set.digest),
    tasks,
    agents: set.agents.map((a) => a.id),
    cells: planCells(set, tasks, configs),
    ...(pricing === undefined ? {} : { pricing }),
  });
}

/** An eval set being loaded: the validated document, its folder, and where problems are said. */
interface Loading {
  readonly set: EvalSet;
  readonly dir: string;
  /** Adds a problem, located in the set's text. */
  readonly at: (p: Problem) => void;
}

type AgentEntry = EvalSet["agents"][number];

const configKey = (task: LoadedEvalTask, a: AgentEntry) => `${task.id}\u0000${a.id}`;

/** The set file's text and its JSON (`eval/read`, `eval/json` with line:column). */
function readSetFile(file: string, abs: string): Result<{ text: string; doc: unknown }> {
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (e) {
    return fail([{ code: "eval/read", path: "", message: `${file}: ${(e as Error).message}` }]);
  }
  try {
    return ok({ text, doc: JSON.parse(text) as unknown });
  } catch (e) {
    const at = jsonSyntaxError(text, e);
    return fail([
      {
        code: "eval/json",
        path: "",
        message: at.message,
        ...(at.line === undefined ? {} : { line: at.line, column: at.column ?? 1 }),
      },
    ]);
  }
}

/** The set's pricing table, read and validated, when it names one. */
async function loadPricing({ set, dir, at }: Loading): Promise<PricingTable | undefined> {
  if (set.pricing === undefined) return undefined;
  const pricingFile = path.resolve(dir, set.pricing);
  const read = await readJson(pricingFile, {
    read: "eval/pricing-read",
    json: "eval/pricing-json",
  });
  if (!read.ok) {
    for (const p of read.errors) at({ ...p, path: "/pricing" });
    return undefined;
  }
  const table = validatePricing(read.value);
  if (table.ok) return table.value;
  for (const p of table.errors)
    at({
      ...p,
      path: "/pricing",
      message: `${set.pricing} ${p.path || "(root)"}: ${p.message}`,
    });
  return undefined;
}

/** Each task's pack loaded and its oracle diff found; a task whose pack fails is left out. */
async function loadTasks({ set, dir, at }: Loading): Promise<LoadedEvalTask[]> {
  const tasks: LoadedEvalTask[] = [];
  for (const [i, t] of set.tasks.entries()) {
    const packFile = path.resolve(dir, t.pack);
    const loaded = await loadPack(packFile);
    if (!loaded.ok) {
      const first = loaded.errors[0];
      at({
        code: "eval/pack-invalid",
        path: pointer("tasks", i, "pack"),
        message: `${t.pack}: ${first?.code ?? "taskpack/invalid"} ${first?.path || "(root)"}: ${first?.message ?? ""}`,
        detail: { problems: loaded.errors },
      });
      continue;
    }
    let oracle: string | undefined;
    if (t.oracle !== undefined) {
      oracle = path.resolve(dir, t.oracle);
      const there = await readFile(oracle).then(
        () => true,
        () => false,
      );
      if (!there)
        at({
          code: "eval/oracle-missing",
          path: pointer("tasks", i, "oracle"),
          message: `cannot read the oracle diff ${t.oracle}`,
        });
    }
    tasks.push({ id: t.id, pack: loaded.value, ...(oracle === undefined ? {} : { oracle }) });
  }
  return tasks;
}

/** Agent configuration `i` resolved for one task: its definitions read, its models resolved. */
async function configurationOf(
  cx: Loading,
  i: number,
  a: AgentEntry,
  task: LoadedEvalTask,
): Promise<CellConfiguration> {
  const agents = await replacedAgents(cx, i, a, task);
  const definitionIds: Partial<Record<Role, string>> = {};
  for (const role of ROLES) {
    const agent = agents[role];
    if (agent !== undefined) definitionIds[role] = agent.id;
  }
  const { models, identity, priced } = roleModels(cx, i, a, task, agents);
  const configuration: AgentConfiguration = { models: identity, definitions: definitionIds };
  return { models, agents, priced, digest: agentConfigurationDigest(configuration) };
}

/** The definitions a configuration puts in place of the task pack's agents, by role. */
async function replacedAgents(
  { dir, at }: Loading,
  i: number,
  a: AgentEntry,
  task: LoadedEvalTask,
): Promise<Partial<Record<Role, LoadedAgent>>> {
  const agents: Partial<Record<Role, LoadedAgent>> = {};
  for (const role of ROLES) {
    const defText = a.definitions[role];
    if (defText === undefined) continue;
    const where = pointer("agents", i, "definitions", role);
    if (task.pack.agents[role] === undefined) {
      at({
        code: "eval/role-unknown",
        path: where,
        message: `the task ${task.id}'s pack names no ${role} agent to replace`,
      });
      continue;
    }
    const file = path.resolve(dir, substituteTask(defText, task.id));
    const agent = await readAgent(file);
    if (!agent.ok) {
      for (const p of agent.errors)
        at({ ...p, path: where, message: `task ${task.id}: ${p.message}` });
      continue;
    }
    agents[role] = agent.value;
  }
  return agents;
}

/**
 * A configuration's models for one task, by role: as the binding records them (`models`), as the
 * configuration's identity counts them (a script by its digest), and as they are priced.
 */
function roleModels(
  { dir, at }: Loading,
  i: number,
  a: AgentEntry,
  task: LoadedEvalTask,
  agents: Partial<Record<Role, LoadedAgent>>,
): {
  models: Partial<Record<Role, string>>;
  identity: Partial<Record<Role, string>>;
  priced: Partial<Record<Role, string>>;
} {
  const models: Partial<Record<Role, string>> = {};
  const identity: Partial<Record<Role, string>> = {};
  const priced: Partial<Record<Role, string>> = {};
  for (const role of ROLES) {
    const uriText = a.models[role];
    const where = pointer("agents", i, "models", role);
    if (uriText === undefined) {
      const own = definitionModel(agents[role] ?? task.pack.agents[role]);
      if (own !== undefined) priced[role] = own;
      continue;
    }
    if (task.pack.agents[role] === undefined) {
      at({
        code: "eval/role-unknown",
        path: where,
        message: `the task ${task.id}'s pack names no ${role} agent whose model to override`,
      });
      continue;
    }
    const uri = substituteTask(uriText, task.id);
    const parsed = parseModelUri(uri);
    if (!parsed.ok) {
      at({
        code: "eval/model-invalid",
        path: where,
        message: `task ${task.id}: ${parsed.errors[0]?.message ?? uri}`,
      });
      continue;
    }
    if (parsed.value.kind === "scripted") {
      const script = path.resolve(dir, parsed.value.path);
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(readFileSync(script));
      } catch {
        at({
          code: "eval/script-missing",
          path: where,
          message: `task ${task.id}: cannot read the script ${path.relative(dir, script)}`,
        });
        continue;
      }
      models[role] = `scripted:${script}`;
      identity[role] = `scripted:${digestOfBytes(bytes)}`;
      priced[role] = models[role];
    } else {
      models[role] = uri;
      identity[role] = uri;
      priced[role] = uri;
    }
  }
  return { models, identity, priced };
}

/** With a cost limit: every model of configuration `i` the pricing table does not price. */
function unpricedModels(
  { set, at }: Loading,
  i: number,
  a: AgentEntry,
  tasks: readonly LoadedEvalTask[],
  configs: ReadonlyMap<string, CellConfiguration>,
  pricing: PricingTable,
): void {
  const missing = new Set<string>();
  for (const task of tasks) {
    const c = configs.get(configKey(task, a));
    for (const model of Object.values(c?.priced ?? {}))
      if (model !== undefined && priceOf(pricing, model) === undefined) missing.add(model);
  }
  for (const model of missing)
    at({
      code: "eval/price-missing",
      path: pointer("agents", i),
      message: `the agent ${a.id} runs on ${model}, which the pricing table ${set.pricing} does not price; a cost limit cannot count an unknown price`,
    });
}

/** Every cell: each task × agent configuration × epoch, with its key and its loop's query. */
function planCells(
  set: EvalSet,
  tasks: readonly LoadedEvalTask[],
  configs: ReadonlyMap<string, CellConfiguration>,
): PlannedCell[] {
  const cells: PlannedCell[] = [];
  for (const task of tasks)
    for (const a of set.agents) {
      const config = configs.get(configKey(task, a)) as CellConfiguration;
      for (let epoch = 1; epoch <= set.epochs; epoch++) {
        const key = cellKey(task.pack.digest, config.digest, epoch);
        cells.push({ task: task.id, agent: a.id, epoch, key, query: cellQuery(key), config });
      }
    }
  return cells;
}
