// The drives of a runtime, one facet of `createWarrant`: open a loop and drive it, drive one on from
// its ledger, open one without driving it, check a pack's definitions as a run would first, and
// hand an opened loop to the workers. Each drive gets its own context (its passages' tools are
// closed when it ends) and its own events.
import { type QueryId, toQueryId } from "../core/ids.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import { WarrantError } from "../core/result.js";
import type { DriveResult } from "../runtime/driver.js";
import type { WarrantEventBody } from "../runtime/events.js";
import { LoopLedger } from "../runtime/loop-ledger.js";
import type { LoadedPack } from "../runtime/task-pack.js";
import type { Composition, DriveSettings } from "./compose.js";
import { type DefinitionCheck, definitionCheckOf, refuseProblems } from "./definition-checks.js";
import { leaseHolder } from "./host.js";
import type { WarrantOptions } from "./options.js";
import { toolchainHoldings } from "./preflight-commands.js";
import { EventLog, type LoopOutcome, type RunHandle, startHandle } from "./run-handle.js";
import type { ResumeOptions, RunOptions } from "./warrant-types.js";

/** The drive machinery, loaded by the first drive (a runtime that only reads never loads it). */
const session = () => import("../runtime/session.js");

export interface WarrantDrives {
  /** Opens a loop for a task pack (a file, or a pack loaded with loadPack) and drives it. */
  run(pack: string | LoadedPack, options?: RunOptions): RunHandle;
  /** Drives a loop on from where its ledger stands (after a crash, a renewal, an answer). */
  resume(query: QueryId, options?: ResumeOptions): RunHandle;
  /** Opens a loop without driving it; its query id. */
  open(pack: string | LoadedPack, options?: RunOptions): Promise<QueryId>;
  /**
   * Checks the pack's agent definitions as a run would before opening its loop (providers, skill and
   * memory CIDs, declared tools, middleware, sub-agents): what each role runs on, the problems that
   * refuse the run, and the warnings.
   */
  checkDefinitions(pack: string | LoadedPack, options?: RunOptions): Promise<DefinitionCheck>;
  /** Opens a loop and hands it to the workers of the queue. */
  dispatch(pack: string | LoadedPack, options?: RunOptions): Promise<QueryId>;
}

/** A run or a resume with a drive's own settings (an approver and model URIs): an eval's. */
export interface DrivesWith {
  runWith(pack: string | LoadedPack, o: RunOptions, drive?: DriveSettings): RunHandle;
  resumeWith(query: QueryId, o: ResumeOptions, drive?: DriveSettings): RunHandle;
}

/** What every drive of a runtime shares. */
interface DriveEnv {
  readonly c: Composition;
  readonly options: WarrantOptions;
  readonly ttlMs: number;
}

const holder = (env: DriveEnv) => env.options.lease?.holder ?? leaseHolder();

function outcomeOf(text: string, result: DriveResult | "leased-elsewhere"): LoopOutcome {
  const query = toQueryId(text);
  if (result === "leased-elsewhere") return { status: "leased-elsewhere", query };
  if (result.status === "blocked") return { ...result, query };
  const stop = result.document.stop;
  if (stop === undefined)
    throw new WarrantError("internal/unreachable", `${query} stopped without a stop`);
  return { status: "stopped", query, stop, document: result.document };
}

/** Runs that were admitted and never concluded: a stopped loop still owes them a conclusion. */
async function unconcludedRuns(store: LedgerStore, query: string): Promise<number> {
  const steps = (await store.readFacts(query)).map((s) => s.fact.step);
  const admitted = steps.filter((s) => s.kind === "run-admitted").length;
  return admitted - steps.filter((s) => s.kind === "concluded").length;
}

/** The definitions' check, and a toolchain bound into every environment holding the store or its key. */
async function checked(
  env: DriveEnv,
  loaded: LoadedPack,
  overrides: Readonly<Record<string, string>>,
  namespace?: string,
): Promise<DefinitionCheck> {
  const check = definitionCheckOf(await env.c.preflight(loaded, overrides, namespace));
  // A toolchain is bound into every environment: one holding the store or its key is refused.
  const held = await toolchainHoldings(loaded, env.c.store.uri, env.options.cwd);
  return held.length === 0 ? check : { ...check, problems: [...held, ...check.problems] };
}

async function openWith(
  env: DriveEnv,
  pack: string | LoadedPack,
  o: RunOptions,
  emit: (e: WarrantEventBody) => void,
): Promise<{ query: QueryId; pack: LoadedPack }> {
  const { c } = env;
  const loaded = await c.pack(pack);
  const { models, overrides } = c.recordedModels(loaded, o.models);
  refuseProblems(await checked(env, loaded, overrides));
  const ctx = await c.context(overrides, emit);
  try {
    const { startLoop } = await session();
    const query = await startLoop(ctx, loaded, models, o.query, overrides, env.options.namespace);
    return { query: toQueryId(query), pack: loaded };
  } finally {
    await ctx.close();
  }
}

/** Opens a loop and drives it; `drive` sets an approver and model URIs for this drive (an eval's). */
function runWith(
  env: DriveEnv,
  pack: string | LoadedPack,
  o: RunOptions,
  drive?: DriveSettings,
): RunHandle {
  const { c } = env;
  const log = new EventLog();
  const emit = c.emitter(log);
  return startHandle(log, async (opened) => {
    const loaded = await c.pack(pack);
    const { models, overrides } = c.recordedModels(loaded, o.models);
    refuseProblems(await checked(env, loaded, overrides));
    const ctx = await c.context(overrides, emit, undefined, drive);
    try {
      const { startLoop, driveUnderLease } = await session();
      const query = await startLoop(ctx, loaded, models, o.query, overrides, env.options.namespace);
      opened(toQueryId(query));
      const result = await driveUnderLease(ctx, query, loaded, {
        holder: holder(env),
        ttlMs: env.ttlMs,
      });
      return outcomeOf(query, result);
    } finally {
      await ctx.close();
    }
  });
}

/** Drives a loop on from its ledger, with `drive`'s settings. */
function resumeWith(
  env: DriveEnv,
  query: QueryId,
  o: ResumeOptions,
  drive?: DriveSettings,
): RunHandle {
  const { c } = env;
  const { store } = c;
  const log = new EventLog();
  const emit = c.emitter(log);
  return startHandle(log, async (opened) => {
    const probe = await new LoopLedger(store).document(query, c.clock.now());
    if (probe === undefined)
      throw new WarrantError("loop/not-opened", `no loop ${query} in ${store.uri}`);
    opened(query);
    if (probe.state === "stopped" && (await unconcludedRuns(store, query)) === 0) {
      const stop = probe.stop;
      if (stop !== undefined) emit({ kind: "stop", query, reason: stop.reason, document: probe });
      return outcomeOf(query, { status: "stopped", document: probe });
    }
    const { bindingOf, driveUnderLease, modelOverridesOf, packOf } = await session();
    const binding = await bindingOf(c, query);
    const overrides = modelOverridesOf(binding);
    const namespace = binding["memory/namespace"];
    const ctx = await c.context(overrides, emit, namespace, drive);
    try {
      const pack = await packOf(ctx, binding);
      // A skill or memory edited since the loop opened is refused before any further charge.
      refuseProblems(await checked(env, pack, overrides, namespace));
      const result = await driveUnderLease(ctx, query, pack, {
        holder: holder(env),
        ttlMs: env.ttlMs,
        waitMs: o.waitMs ?? env.ttlMs + 1000,
      });
      return outcomeOf(query, result);
    } finally {
      await ctx.close();
    }
  });
}

export function createDrives(
  c: Composition,
  options: WarrantOptions,
  ttlMs: number,
): WarrantDrives & DrivesWith {
  const env: DriveEnv = { c, options, ttlMs };
  return {
    runWith: (pack, o, drive) => runWith(env, pack, o, drive),
    resumeWith: (query, o, drive) => resumeWith(env, query, o, drive),
    run: (pack, o = {}) => runWith(env, pack, o),
    resume: (query, o = {}) => resumeWith(env, query, o),
    async open(pack, o = {}) {
      return (await openWith(env, pack, o, c.emitter())).query;
    },
    async checkDefinitions(pack, o = {}) {
      const loaded = await c.pack(pack);
      return checked(env, loaded, c.recordedModels(loaded, o.models).overrides);
    },
    async dispatch(pack, o = {}) {
      const queue = c.queue();
      const { query } = await openWith(env, pack, o, c.emitter());
      await queue.dispatch(query);
      return query;
    },
  };
}
