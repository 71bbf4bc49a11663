// The eval-set document (contracts/eval-set.v1.json): its validation (the schema, then the rules the
// schema cannot state), the `{task}` placeholder, and the identities of its cells: a cell's key is
// derived from its task pack's digest, its agent configuration's digest and its epoch, and its
// loop's query id from the key, so an unchanged cell keeps its loop across runs and edits of the set.
import evalSetSchema from "../../../contracts/eval-set.v1.json" with { type: "json" };
import { createAjv, type ErrorObject, type ValidateFunction } from "../contracts/ajv-factory.js";
import { ROLES, type Role } from "../loop/types.js";
import { digestOf } from "../records/canonical.js";
import { fail, ok, type Problem, pointer, type Result } from "../result.js";
import { didYouMean } from "../text/did-you-mean.js";
import { describeAjvError } from "../turn/ajv-messages.js";

export const EVAL_SET_SCHEMA = "warrant-eval-set.v1";
export const EVAL_SET_SCHEMA_ID = "urn:warrant:eval-set:v1";

export type EvalApproval = "auto" | "operator";

export interface EvalTask {
  readonly id: string;
  /** As written: relative to the set file unless absolute. */
  readonly pack: string;
  readonly oracle?: string;
}

export interface EvalAgent {
  readonly id: string;
  /** Model URIs per role, as written (`{task}` not yet substituted). */
  readonly models: Readonly<Partial<Record<Role, string>>>;
  /** Agent definition paths per role, as written. */
  readonly definitions: Readonly<Partial<Record<Role, string>>>;
}

export interface EvalSet {
  readonly name: string;
  readonly tasks: readonly EvalTask[];
  readonly agents: readonly EvalAgent[];
  readonly epochs: number;
  readonly limits: { readonly tokens?: number; readonly costUsd?: number };
  readonly pricing?: string;
  readonly approval: EvalApproval;
  readonly requireCertified: boolean;
  /** `sha256:…` over the document's JCS bytes. */
  readonly digest: string;
  /** The document as given. */
  readonly document: unknown;
}

/** The default number of epochs when the set states none. */
export const DEFAULT_EPOCHS = 1;

let validator: ValidateFunction | undefined;

function setValidator(): ValidateFunction {
  validator ??= createAjv().compile(evalSetSchema);
  return validator;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The properties the schema allows where an `additionalProperties` error was raised. */
function allowedProperties(schemaPath: string): string[] {
  if (!schemaPath.startsWith("#/") || !schemaPath.endsWith("/additionalProperties")) return [];
  let node: unknown = evalSetSchema;
  for (const raw of schemaPath.slice(2, -"/additionalProperties".length).split("/")) {
    if (raw === "") continue;
    node = isObject(node) ? node[raw.replaceAll("~1", "/").replaceAll("~0", "~")] : undefined;
  }
  const properties = isObject(node) ? node.properties : undefined;
  return isObject(properties) ? Object.keys(properties) : [];
}

function schemaProblems(
  errors: readonly ErrorObject[] | null | undefined,
  doc: unknown,
): Problem[] {
  return (errors ?? []).map((e) => {
    const extra = e.keyword === "additionalProperties" ? e.params.additionalProperty : undefined;
    const hint =
      typeof extra === "string" ? didYouMean(extra, allowedProperties(e.schemaPath)) : "";
    return {
      code: "eval/schema",
      path: e.instancePath,
      message: describeAjvError(e, doc) + hint,
      detail: { keyword: e.keyword, params: e.params },
    };
  });
}

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** The placeholders of `text` other than `{task}`. */
export function unknownPlaceholders(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) if (m[1] !== "task") found.push(`{${m[1]}}`);
  return found;
}

/** `text` with every `{task}` replaced by the task's id. */
export function substituteTask(text: string, task: string): string {
  return text.replaceAll("{task}", task);
}

/**
 * Validates an eval-set document (already parsed). Codes: `eval/schema` (one per schema violation,
 * with a close name offered for an unknown property), `eval/duplicate-id` (a task or agent id
 * given twice), `eval/placeholder-unknown` (a `{…}` other than `{task}` in a model URI or a
 * definition path), `eval/pricing-required` (`limits.costUsd` without a `pricing` table). Every
 * problem's `path` is a JSON Pointer into the document.
 */
export function validateEvalSet(doc: unknown): Result<EvalSet> {
  const validate = setValidator();
  if (!validate(doc)) return fail(schemaProblems(validate.errors, doc));
  const d = doc as Json;
  const problems: Problem[] = [];
  const tasks: EvalTask[] = [];
  const agents: EvalAgent[] = [];
  const seenTasks = new Map<string, number>();
  for (const [i, t] of (d.tasks as Json[]).entries()) {
    const id = t.id as string;
    const earlier = seenTasks.get(id);
    if (earlier !== undefined)
      problems.push({
        code: "eval/duplicate-id",
        path: pointer("tasks", i, "id"),
        message: `the task id ${JSON.stringify(id)} is given already at /tasks/${earlier}/id`,
      });
    else seenTasks.set(id, i);
    tasks.push({
      id,
      pack: t.pack as string,
      ...(typeof t.oracle === "string" ? { oracle: t.oracle } : {}),
    });
  }
  const seenAgents = new Map<string, number>();
  for (const [i, a] of (d.agents as Json[]).entries()) {
    const id = a.id as string;
    const earlier = seenAgents.get(id);
    if (earlier !== undefined)
      problems.push({
        code: "eval/duplicate-id",
        path: pointer("agents", i, "id"),
        message: `the agent id ${JSON.stringify(id)} is given already at /agents/${earlier}/id`,
      });
    else seenAgents.set(id, i);
    const models = (isObject(a.models) ? a.models : {}) as Partial<Record<Role, string>>;
    const definitions = (isObject(a.definitions) ? a.definitions : {}) as Partial<
      Record<Role, string>
    >;
    for (const [field, map] of [
      ["models", models],
      ["definitions", definitions],
    ] as const)
      for (const role of ROLES) {
        const text = map[role];
        if (text === undefined) continue;
        const unknown = unknownPlaceholders(text);
        if (unknown.length > 0)
          problems.push({
            code: "eval/placeholder-unknown",
            path: pointer("agents", i, field, role),
            message: `${unknown.join(", ")} is not a placeholder: only {task} (the task's id) is`,
          });
      }
    agents.push({ id, models, definitions });
  }
  const limits = (isObject(d.limits) ? d.limits : {}) as EvalSet["limits"];
  if (limits.costUsd !== undefined && typeof d.pricing !== "string")
    problems.push({
      code: "eval/pricing-required",
      path: "/limits/costUsd",
      message: "a cost limit needs a pricing table: name one with `pricing`",
    });
  if (problems.length > 0) return fail(problems);
  return ok({
    name: d.name as string,
    tasks,
    agents,
    epochs: typeof d.epochs === "number" ? d.epochs : DEFAULT_EPOCHS,
    limits,
    ...(typeof d.pricing === "string" ? { pricing: d.pricing } : {}),
    approval: d.approval === "auto" ? "auto" : "operator",
    requireCertified: d.requireCertified === true,
    digest: digestOf(doc),
    document: doc,
  });
}

/**
 * What identifies an agent configuration in one cell: each overridden role's model (a scripted
 * model by its script's digest, never its path) and each replaced role's agent id.
 */
export interface AgentConfiguration {
  readonly models: Readonly<Partial<Record<Role, string>>>;
  readonly definitions: Readonly<Partial<Record<Role, string>>>;
}

export function agentConfigurationDigest(config: AgentConfiguration): string {
  return digestOf({ models: config.models, definitions: config.definitions });
}

/** A cell's key: the digest of its task pack's digest, its agent configuration's and its epoch. */
export function cellKey(packDigest: string, agentDigest: string, epoch: number): string {
  return digestOf({ schema: "warrant-eval-cell.v1", pack: packDigest, agent: agentDigest, epoch });
}

/** The query id of a cell's loop, from its key alone. */
export function cellQuery(key: string): string {
  const b64 = key.startsWith("sha256:") ? key.slice("sha256:".length) : key;
  return `query:eval-${b64.slice(0, 32)}`;
}

/** The query id of a cell's loop opened again after `attempt` loops of it ended in an error. */
export function cellAttemptQuery(key: string, attempt: number): string {
  return attempt === 0 ? cellQuery(key) : `${cellQuery(key)}.${attempt}`;
}

/** An eval's id, from the set's name and digest. */
export function evalId(name: string, setDigest: string): string {
  const b64 = setDigest.startsWith("sha256:") ? setDigest.slice("sha256:".length) : setDigest;
  return `eval:${name}-${b64.slice(0, 16)}`;
}

const EVAL_ID = /^eval:[a-z0-9][a-z0-9-]{0,63}-[A-Za-z0-9_-]{16}$/;

export function isEvalId(text: string): boolean {
  return EVAL_ID.test(text);
}

/** A price per million tokens. */
export interface ModelPrice {
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
  readonly cachedInputPerMTok?: number;
}

export type PricingTable = Readonly<Record<string, ModelPrice>>;

/** A price: a finite number of US dollars, not negative. */
const isPrice = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

/**
 * Validates a pricing table `{"models": {URI: {inputPerMTok, outputPerMTok, cachedInputPerMTok?}}}`:
 * `eval/pricing-invalid` with the pointer of the value at fault.
 */
export function validatePricing(doc: unknown): Result<PricingTable> {
  const bad = (path: string, message: string) =>
    fail<PricingTable>([{ code: "eval/pricing-invalid", path, message }]);
  if (!isObject(doc)) return bad("", "a pricing table is an object {models: {...}}");
  for (const k of Object.keys(doc))
    if (k !== "models") return bad(pointer(k), `unknown property ${JSON.stringify(k)}`);
  if (!isObject(doc.models)) return bad("/models", "models is an object of model URI → price");
  const table: Record<string, ModelPrice> = {};
  for (const [uri, price] of Object.entries(doc.models)) {
    const at = pointer("models", uri);
    if (!isObject(price)) return bad(at, "a price is {inputPerMTok, outputPerMTok}");
    for (const k of Object.keys(price))
      if (k !== "inputPerMTok" && k !== "outputPerMTok" && k !== "cachedInputPerMTok")
        return bad(
          `${at}${pointer(k)}`,
          `unknown property ${JSON.stringify(k)}${didYouMean(k, ["inputPerMTok", "outputPerMTok", "cachedInputPerMTok"])}`,
        );
    const notPrice = (k: keyof ModelPrice) =>
      bad(`${at}${pointer(k)}`, `${k} must be a number ≥ 0 (US dollars per million tokens)`);
    const { inputPerMTok, outputPerMTok, cachedInputPerMTok } = price;
    if (!isPrice(inputPerMTok)) return notPrice("inputPerMTok");
    if (!isPrice(outputPerMTok)) return notPrice("outputPerMTok");
    if (cachedInputPerMTok !== undefined && !isPrice(cachedInputPerMTok))
      return notPrice("cachedInputPerMTok");
    table[uri] = {
      inputPerMTok,
      outputPerMTok,
      ...(cachedInputPerMTok === undefined ? {} : { cachedInputPerMTok }),
    };
  }
  return ok(table);
}

/** The counts a price applies to. */
export interface PricedUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens: number;
}

/** The cost in US dollars of `usage` at `price` (cached input at its own price when it has one). */
export function costOf(usage: PricedUsage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const fresh = usage.inputTokens - cached;
  const cachedPrice = price.cachedInputPerMTok ?? price.inputPerMTok;
  return (
    (fresh * price.inputPerMTok + cached * cachedPrice + usage.outputTokens * price.outputPerMTok) /
    1_000_000
  );
}
