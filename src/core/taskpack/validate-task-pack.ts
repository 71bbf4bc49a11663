// Task pack validation: the contract schema, then the semantic rules the schema cannot state.
import taskPackSchema from "../../../contracts/task-pack.v1.json" with { type: "json" };
import { createAjv, type ErrorObject, type ValidateFunction } from "../contracts/ajv-factory.js";
import { operatorTaskCommonSchema } from "../contracts/schemas.js";
import type { TaskPackV1 } from "../contracts/types/task-pack.v1.js";
import { DEFAULT_CHANGE_BOUNDS, DEFAULT_RESOURCES } from "../ports/sandbox.js";
import { fail, ok, type Problem, pointer, type Result } from "../result.js";
import { didYouMean, suggestName } from "../text/did-you-mean.js";
import { describeAjvError } from "../turn/ajv-messages.js";
import { placeholderName } from "./argv.js";
import { envNameProblems } from "./command-env.js";
import { checkPackPaths, dependencyGlob } from "./dependencies.js";
import { compileGlob, type Glob } from "./glob.js";
import { defaultIgnore } from "./ignore.js";
import { type NetworkPolicy, parseNetworkAllow } from "./network.js";
import type {
  CommandEffect,
  CommandProfile,
  PackLimitKey,
  PackResources,
  TaskPack,
  TaskPackAgents,
  VerifierCheck,
} from "./task-pack.js";

export const TASK_PACK_SCHEMA_ID = "urn:warrant:task-pack:v1";

/** A document the pack schema accepted: its contract type, and a JSON object the rules read by name. */
type PackDocument = TaskPackV1 & Json;

let packValidator: ValidateFunction<PackDocument> | undefined;

function taskPackValidator(): ValidateFunction<PackDocument> {
  if (packValidator !== undefined) return packValidator;
  const ajv = createAjv();
  ajv.addSchema(operatorTaskCommonSchema);
  packValidator = ajv.compile<PackDocument>(taskPackSchema);
  return packValidator;
}

type ArgsCompiled = { readonly validate: ValidateFunction } | { readonly error: string };

/** Packs whose argument schemas were compiled lately, by the schemas' JSON text (most recent last). */
const argsCache = new Map<string, readonly ArgsCompiled[]>();
const ARGS_CACHE_SIZE = 64;

/**
 * A pack's argument schemas compiled in order, in one fresh Ajv (argument schemas may carry `$id`s
 * that must not collide across packs, and do collide within one). Compiling is a function of the
 * schemas alone: a pack loaded again (every loop a set or a dispatcher opens, every resume) reuses
 * the validators its identical schemas compiled to, instead of paying for Ajv's meta-schema and
 * code generation each time.
 */
function compiledArgs(schemas: readonly Json[]): readonly ArgsCompiled[] {
  const key = JSON.stringify(schemas);
  const cached = argsCache.get(key);
  if (cached !== undefined) {
    argsCache.delete(key);
    argsCache.set(key, cached);
    return cached;
  }
  const ajv = createAjv();
  const out = schemas.map((schema): ArgsCompiled => {
    try {
      return { validate: ajv.compile(schema) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  });
  argsCache.set(key, out);
  if (argsCache.size > ARGS_CACHE_SIZE) argsCache.delete(argsCache.keys().next().value as string);
  return out;
}

/** The properties the task-pack schema allows where an `additionalProperties` error was raised. */
function allowedProperties(schemaPath: string): string[] {
  if (!schemaPath.startsWith("#/") || !schemaPath.endsWith("/additionalProperties")) return [];
  let node: unknown = taskPackSchema;
  for (const raw of schemaPath.slice(2, -"/additionalProperties".length).split("/")) {
    if (raw === "") continue;
    const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    node = isObject(node) ? node[token] : undefined;
  }
  const properties = isObject(node) ? node.properties : undefined;
  return isObject(properties) ? Object.keys(properties) : [];
}

/**
 * One problem per schema error, worded by describeAjvError (the unknown property named, an enum's
 * allowed values listed, a close name offered for an unknown property).
 */
function schemaProblems(
  errors: readonly ErrorObject[] | null | undefined,
  doc: unknown,
): Problem[] {
  return (errors ?? []).map((e) => {
    const extra = e.keyword === "additionalProperties" ? e.params.additionalProperty : undefined;
    const known = typeof extra === "string" ? allowedProperties(e.schemaPath) : [];
    const hint = typeof extra === "string" ? didYouMean(extra, known) : "";
    return {
      code: "taskpack/schema",
      path: e.instancePath,
      message: describeAjvError(e, doc) + hint,
      detail: { keyword: e.keyword, params: e.params },
    };
  });
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

interface ProfileDraft {
  readonly name: string;
  readonly doc: Json;
}

/** Where a problem is added, its message labelled with the pack's path. */
type Push = (code: string, path: string, message: string) => void;

/**
 * Validate a task pack document (already parsed JSON). `packPath` only labels messages. Codes:
 * `taskpack/schema` (one per schema violation), `taskpack/args-schema` (an argument schema does not
 * compile), `taskpack/args-not-object`, `taskpack/placeholder-unknown` (an argv `{name}` that is
 * not a property of the argument schema), `taskpack/placeholder-type` (its property is not a
 * required string), `taskpack/glob-invalid`, `taskpack/duplicate-check`,
 * `taskpack/unknown-command` (a verifier check names no command), `taskpack/check-not-observation`
 * (it names a mutation command), `taskpack/check-args-invalid`, `taskpack/guidance-without-agent`
 * (guidance for a role the pack names no agent for: it would reach no passage),
 * `taskpack/network-entry` (a `network.allow` entry that is not `host:port`),
 * `taskpack/network-host` (its host is not a DNS name or an IP address), `taskpack/network-port`
 * (its port is not 1–65535), `taskpack/network-duplicate` (the same destination twice), and
 * checkPackPaths' codes for `dependencies` and `toolchains` (dependencies.ts).
 */
export function validateTaskPack(doc: unknown, opts: { packPath?: string } = {}): Result<TaskPack> {
  const label = opts.packPath === undefined ? "" : `${opts.packPath}: `;
  const validate = taskPackValidator();
  if (!validate(doc)) {
    return fail(
      schemaProblems(validate.errors, doc).map((p) => ({ ...p, message: label + p.message })),
    );
  }
  const pack: Json = doc;
  const problems: Problem[] = [];
  const push = (code: string, path: string, message: string) =>
    problems.push({ code, path, message: label + message });

  const commandDocs = pack.commands as Json;
  const commands = commandProfiles(commandDocs, push);

  const policy = pack.patchPolicy as Json;
  const allow = compileGlobs(policy.allow as string[], "/patchPolicy/allow", push);
  const ignored = Array.isArray(pack.ignore)
    ? compileGlobs(pack.ignore as string[], "/ignore", push)
    : defaultIgnore();
  const paths = checkPackPaths(
    Array.isArray(pack.dependencies) ? (pack.dependencies as string[]) : [],
    Array.isArray(pack.toolchains) ? (pack.toolchains as string[]) : [],
  );
  for (const p of paths.problems) push(p.code, p.path, p.message);
  // Whatever commands write under a dependency is never a change the run made.
  const ignore = [...ignored, ...paths.dependencies.map(dependencyGlob)];

  const verifier = pack.verifier as Json;
  const checks = verifierChecks(verifier.checks as Json[], commands, commandDocs, push);
  const agents: TaskPackAgents = doc.agents;
  const guidance = (isObject(pack.guidance) ? pack.guidance : {}) as TaskPack["guidance"];
  guidanceProblems(agents, guidance, push);
  const network = isObject(pack.network) ? networkOf(pack.network, push) : undefined;
  if (problems.length > 0) return fail(problems);

  const passage = isObject(pack.passage) ? pack.passage : {};
  return ok({
    name: pack.name as string,
    task: pack.task as string,
    workspace: pack.workspace as string,
    agents,
    guidance,
    commands,
    ignore,
    patchPolicy: { allow, maxBytes: policy.maxBytes as number },
    verifier: { timeoutMs: verifier.timeoutMs as number, checks },
    hil: pack.hil as TaskPack["hil"],
    admission: pack.admission as TaskPack["admission"],
    limits: pack.limits as Partial<Record<PackLimitKey, number>>,
    ...(typeof pack.memoryNamespace === "string" ? { memoryNamespace: pack.memoryNamespace } : {}),
    ...(typeof pack.openaiCompatibleBaseUrl === "string"
      ? { openaiCompatibleBaseUrl: pack.openaiCompatibleBaseUrl }
      : {}),
    resources: resourcesOf(isObject(pack.resources) ? pack.resources : {}),
    ...(network === undefined ? {} : { network }),
    dependencies: paths.dependencies,
    toolchains: paths.toolchains,
    passage: {
      ...(typeof passage.maxTurns === "number" ? { maxTurns: passage.maxTurns } : {}),
      ...(typeof passage.maxTokens === "number" ? { maxTokens: passage.maxTokens } : {}),
      repairs: typeof passage.repairs === "number" ? passage.repairs : 2,
    },
    document: pack,
  });
}

/** The pack's command profiles that compile, each one's problems added (in the pack's order). */
function commandProfiles(commandDocs: Json, push: Push): Map<string, CommandProfile> {
  const commands = new Map<string, CommandProfile>();
  const drafts: ProfileDraft[] = Object.entries(commandDocs).map(([name, d]) => ({
    name,
    doc: d as Json,
  }));
  const argsCompiled = compiledArgs(drafts.map((d) => d.doc.args as Json));
  for (const [i, { name, doc: profile }] of drafts.entries()) {
    const at = pointer("commands", name);
    const argsSchema = profile.args as Json;
    let compiled: ValidateFunction | undefined;
    const outcome = argsCompiled[i] as ArgsCompiled;
    if ("error" in outcome)
      push(
        "taskpack/args-schema",
        `${at}/args`,
        `the argument schema does not compile: ${outcome.error}`,
      );
    else compiled = outcome.validate;
    if (argsSchema.type !== "object") {
      compiled = undefined;
      push("taskpack/args-not-object", `${at}/args`, "an argument schema has type: object");
    }
    placeholderProblems(profile.argv as string[], argsSchema, at, push);
    for (const p of envNameProblems(isObject(profile.env) ? profile.env : {}, at))
      push(p.code, p.path, p.message);
    if (compiled === undefined) continue;
    commands.set(name, commandProfile(name, profile, argsSchema, compiled));
  }
  return commands;
}

/** An argv `{name}` must name a required string property of the argument schema. */
function placeholderProblems(
  argv: readonly string[],
  argsSchema: Json,
  at: string,
  push: Push,
): void {
  const properties = isObject(argsSchema.properties) ? argsSchema.properties : {};
  const required = Array.isArray(argsSchema.required) ? argsSchema.required : [];
  for (const [i, element] of argv.entries()) {
    const ph = placeholderName(element);
    if (ph === undefined) continue;
    const prop = properties[ph];
    if (!Object.hasOwn(properties, ph) || !isObject(prop)) {
      push(
        "taskpack/placeholder-unknown",
        `${at}/argv/${i}`,
        `{${ph}} is not a property of the argument schema`,
      );
    } else if (prop.type !== "string" || !required.includes(ph)) {
      push(
        "taskpack/placeholder-type",
        `${at}/argv/${i}`,
        `{${ph}} must name a required string property`,
      );
    }
  }
}

/** A command profile whose argument schema compiled to `check`. */
function commandProfile(
  name: string,
  profile: Json,
  argsSchema: Json,
  check: ValidateFunction,
): CommandProfile {
  return {
    name,
    effect: profile.effect as CommandEffect,
    argv: profile.argv as string[],
    argsSchema,
    timeoutMs: profile.timeoutMs as number,
    maxOutputBytes: profile.maxOutputBytes as number,
    ...(typeof profile.maxProcesses === "number" ? { maxProcesses: profile.maxProcesses } : {}),
    ...(isObject(profile.env) ? { env: profile.env as Record<string, string> } : {}),
    validateArgs: (args: unknown) =>
      check(args)
        ? ok(args as Json)
        : fail(
            (check.errors ?? []).map((e) => ({
              code: "plan/outside-profile",
              path: e.instancePath,
              message: `arguments of ${name}: ${e.instancePath || "/"} ${e.message ?? "invalid"}`,
              detail: { keyword: e.keyword },
            })),
          ),
  };
}

/** The verifier's checks, each one's problems added. */
function verifierChecks(
  given: readonly Json[],
  commands: ReadonlyMap<string, CommandProfile>,
  commandDocs: Json,
  push: Push,
): VerifierCheck[] {
  const checks: VerifierCheck[] = [];
  const seen = new Set<string>();
  for (const [i, c] of given.entries()) {
    const at = `/verifier/checks/${i}`;
    const name = c.name as string;
    if (seen.has(name))
      push("taskpack/duplicate-check", `${at}/name`, `check ${name} appears twice`);
    seen.add(name);
    if (typeof c.command === "string") {
      const profile = commands.get(c.command);
      const args = isObject(c.args) ? c.args : {};
      if (!Object.hasOwn(commandDocs, c.command)) {
        push(
          "taskpack/unknown-command",
          `${at}/command`,
          `no command profile named ${c.command}${suggestName(c.command, Object.keys(commandDocs))}`,
        );
      } else if ((commandDocs[c.command] as Json).effect !== "observation") {
        push(
          "taskpack/check-not-observation",
          `${at}/command`,
          `verifier check ${name} names the mutation command ${c.command}`,
        );
      } else if (profile !== undefined) {
        const valid = profile.validateArgs(args);
        if (!valid.ok) {
          for (const e of valid.errors) {
            push("taskpack/check-args-invalid", `${at}/args${e.path}`, e.message);
          }
        }
      }
      checks.push({ kind: "command", name, command: c.command, args });
    } else if (Array.isArray(c.unchanged)) {
      const globs = compileGlobs(c.unchanged as string[], `${at}/unchanged`, push);
      checks.push({ kind: "unchanged", name, globs });
    } else {
      checks.push({ kind: "only-allowed-changed", name });
    }
  }
  return checks;
}

/** Guidance for a role the pack names no agent for would reach no passage. */
function guidanceProblems(
  agents: TaskPackAgents,
  guidance: TaskPack["guidance"],
  push: Push,
): void {
  for (const role of Object.keys(guidance)) {
    if (!Object.hasOwn(agents, role)) {
      push(
        "taskpack/guidance-without-agent",
        pointer("guidance", role),
        `guidance for the ${role}, but the pack names no ${role} agent`,
      );
    }
  }
}

/** The pack's `network`: its allow-list parsed (each bad entry's problem added), its cap. */
function networkOf(network: Json, push: Push): NetworkPolicy {
  const parsed = parseNetworkAllow(network.allow as string[], "/network/allow");
  for (const p of parsed.problems) push(p.code, p.path, p.message);
  return {
    allow: parsed.targets,
    ...(typeof network.maxConnections === "number"
      ? { maxConnections: network.maxConnections }
      : {}),
  };
}

function compileGlobs(sources: readonly string[], at: string, push: Push): Glob[] {
  const globs: Glob[] = [];
  for (const [i, source] of sources.entries()) {
    const g = compileGlob(source);
    if (g.ok) globs.push(g.value);
    else for (const e of g.errors) push(e.code, `${at}/${i}`, e.message);
  }
  return globs;
}

/** The pack's `resources`: the commands' limits, and the bounds of the host's change capture. */
function resourcesOf(given: Readonly<Record<string, unknown>>): PackResources {
  const num = (key: string, fallback: number) =>
    typeof given[key] === "number" ? (given[key] as number) : fallback;
  return {
    memoryBytes: num("memoryBytes", DEFAULT_RESOURCES.memoryBytes),
    tmpBytes: num("tmpBytes", DEFAULT_RESOURCES.tmpBytes),
    diskBytes: num("diskBytes", DEFAULT_RESOURCES.diskBytes),
    changedEntries: num("changedEntries", DEFAULT_CHANGE_BOUNDS.maxEntries),
    changeCaptureMs: num("changeCaptureMs", DEFAULT_CHANGE_BOUNDS.timeMs),
  };
}
