// The adapters behind the runtime's ports, chosen from createWarrant's options: the store, each
// drive's context (passages with their models and tools, the sandbox, the approver, the signer), and
// the emitter that stamps events and hands them to the drive's handle and every subscriber.
import { createDefinitionFiles } from "../adapters/fs/definition-files.js";
import { openStore } from "../adapters/store/open-store.js";
import { DEFAULT_STORE_URI } from "../adapters/store/store-uri.js";
import { ROLES, type Role } from "../core/loop/types.js";
import type { JobQueue } from "../core/ports/job-queue.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import type { Sandbox } from "../core/ports/sandbox.js";
import type { RecordSigner } from "../core/ports/signer.js";
import type { Clock, Time } from "../core/ports/time.js";
import { WarrantError } from "../core/result.js";
import type { PreflightReport } from "../runtime/definition-preflight.js";
import { type Emit, eventStamper, type WarrantEventBody } from "../runtime/events.js";
import { systemTime } from "../runtime/system-time.js";
import type { LoadedPack } from "../runtime/task-pack.js";
import { codeToolHost } from "./define-tool.js";
import { effectiveModelUris } from "./definition-models.js";
import { hostKeySigner, operatorBinding } from "./host.js";
import { type Model, providerOf } from "./model.js";
import { operatorBindingOf } from "./operators.js";
import type { ModelResolver, WarrantOptions, WarrantSubscriber } from "./options.js";
import type { EventLog } from "./run-handle.js";
import { createTelemetry, type Telemetry } from "./telemetry.js";
import { uriModels } from "./uri-models.js";

/** The drive-only half of the composition, loaded on first use (compose-drive.ts). */
const driveParts = () => import("./compose-drive.js");

import type { DriveContext, DriveSettings, OverrideOf, Parts } from "./compose-parts.js";

export type { DriveContext, DriveSettings } from "./compose-parts.js";

export interface Composition {
  readonly store: LedgerStore;
  readonly clock: Clock;
  /** The process's time: leases, renewals, heartbeats, polls. */
  readonly time: Time;
  readonly operator: string;
  /** A pack ready to drive: loaded from its file, or as given. */
  pack(pack: string | LoadedPack): Promise<LoadedPack>;
  /**
   * What a new loop's binding records for each role's model: `models`, the model each role runs on
   * (its definition's first, as a URI, unless overridden), and `overrides`, the roles whose model
   * the run names instead (`--model`, the library's `models`).
   */
  recordedModels(
    pack: LoadedPack,
    given: Readonly<Partial<Record<Role, string>>> | undefined,
  ): { models: Record<string, string>; overrides: Record<string, string> };
  /**
   * The context of one drive, its overridden models picked with what the binding recorded, its
   * namespace-scoped memory the one the binding recorded (else the options', else the pack's).
   */
  context(
    overrides: Readonly<Record<string, string>>,
    emit: Emit,
    namespace?: string,
    drive?: DriveSettings,
  ): Promise<DriveContext>;
  /** Every check of the pack's agent definitions before a loop opens or a drive starts. */
  preflight(
    pack: LoadedPack,
    overrides: Readonly<Record<string, string>>,
    namespace?: string,
  ): Promise<Partial<Record<Role, PreflightReport>>>;
  /** Stamps each event and hands it to `log` (when given) and to every subscriber. */
  emitter(log?: EventLog): Emit;
  readonly telemetry: Telemetry;
  queue(): JobQueue;
  /** Whether a job queue was given. */
  hasQueue(): boolean;
  /**
   * The store as an operator writes to it: every act signed and a head signed after it (the store
   * itself when the options say `signer: "none"`). The host key is resolved on first use.
   */
  actingStore(): Promise<LedgerStore>;
  close(): Promise<void>;
}

function resolverOf(models: WarrantOptions["models"]): ModelResolver {
  if (typeof models === "function") return models;
  const byRole: Partial<Record<Role, Model>> = models ?? {};
  return (role) => byRole[role];
}

const subscribersOf = (given: WarrantOptions["onEvent"]): readonly WarrantSubscriber[] =>
  given === undefined ? [] : typeof given === "function" ? [given] : given;

/**
 * The subscribers (`onEvent`'s, then those of its deprecated alias `telemetry`), each shielded: one
 * that throws never reaches the drive or the others.
 */
function fanOut(o: Pick<WarrantOptions, "onEvent" | "telemetry">): WarrantSubscriber {
  const subscribers = [...subscribersOf(o.onEvent), ...subscribersOf(o.telemetry)];
  return (event) => {
    for (const s of subscribers) {
      try {
        s(event);
      } catch {
        // An observer's failure is its own.
      }
    }
  };
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    return made;
  };
}

export async function compose(o: WarrantOptions): Promise<Composition> {
  // A named backend is proven now: one that does not work here is an error, not a fallback.
  const named = await namedSandbox(o);
  const given = o.store ?? DEFAULT_STORE_URI;
  const owned = typeof given === "string";
  const store = owned
    ? await openStore(given, {
        ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
        ...(o.createStore === undefined ? {} : { create: o.createStore }),
      })
    : given;
  const time = o.time ?? systemTime;
  const clock: Clock = o.clock ?? time;
  const operatorNow = operatorOf(o);
  const telemetry = createTelemetry(o.openTelemetry);
  const code = o.tools === undefined || o.tools.length === 0 ? undefined : codeToolHost(o.tools);
  const sandbox = once(async (): Promise<Sandbox | undefined> => {
    const s = o.sandbox;
    if (s === "none") return undefined;
    if (named !== undefined) return named;
    if (typeof s === "function") return s();
    if (s !== undefined && s !== "auto" && typeof s !== "string") return s;
    const { detectSandbox } = await import("../adapters/sandbox/detect-sandbox.js");
    const detected = await detectSandbox();
    return detected.ok ? detected.value : undefined;
  });
  const signer = once(async (): Promise<RecordSigner | undefined> => {
    const s = o.signer;
    if (s === "none") return undefined;
    if (typeof s === "function") return s();
    return s ?? hostKeySigner(store, o.cwd === undefined ? {} : { cwd: o.cwd });
  });
  const env = process.env;
  const parts: Parts = {
    o,
    store,
    clock,
    time,
    env,
    operatorNow,
    sandbox,
    signer,
    telemetry,
    files: createDefinitionFiles(),
    skillDirs: o.skills ?? [],
    overrideOf: overridesOf(resolverOf(o.models), uriModels(env)),
    code,
    codeNames: new Set(o.tools?.map((t) => t.spec.name)),
  };
  return {
    store,
    clock,
    time,
    get operator() {
      return operatorNow();
    },
    async pack(pack) {
      if (typeof pack !== "string") return pack;
      const { loadPack } = await import("../adapters/fs/pack-loader.js");
      const loaded = await loadPack(pack);
      if (loaded.ok) return loaded.value;
      const first = loaded.errors[0];
      const all = loaded.errors.map((p) => `${p.path || "(root)"}: ${p.code}: ${p.message}`);
      throw new WarrantError(first?.code ?? "taskpack/invalid", all.join("\n"));
    },
    recordedModels: (pack, givenRefs) => recordedModels(parts, pack, givenRefs),
    preflight: async (pack, overrides, recordedNamespace) =>
      (await driveParts()).preflight(parts, pack, overrides, recordedNamespace),
    context: async (overrides, emit, recordedNamespace, drive) =>
      (await driveParts()).driveContext(parts, overrides, emit, recordedNamespace, drive),
    actingStore: once(async (): Promise<LedgerStore> => {
      const sign = await signer();
      if (sign === undefined) return store;
      const { signingStore } = await import("../runtime/signing-store.js");
      return signingStore(store, sign, clock);
    }),
    emitter: emitterOf(clock, fanOut(o), telemetry),
    queue() {
      if (o.queue === undefined)
        throw new WarrantError("runtime/no-queue", "dispatching and workers need a job queue");
      return o.queue;
    },
    hasQueue: () => o.queue !== undefined,
    telemetry,
    close: async () => {
      await telemetry.close();
      // The queue's pool, reused by every dispatch, closes with the runtime.
      await o.queue?.close();
      if (owned) await store.close();
    },
  };
}

/** The backend the options name (`bwrap`, `unshare`), proven to work here; else undefined. */
async function namedSandbox(o: WarrantOptions): Promise<Sandbox | undefined> {
  if (o.sandbox !== "bwrap" && o.sandbox !== "unshare") return undefined;
  const { chooseSandbox } = await import("../adapters/sandbox/detect-sandbox.js");
  const chosen = await chooseSandbox(o.sandbox, {
    ...(o.allowWeakerSandbox === undefined ? {} : { allowWeakerSandbox: o.allowWeakerSandbox }),
  });
  if (!chosen.ok) {
    const e = chosen.errors[0];
    throw new WarrantError(e?.code ?? "sandbox/unavailable", e?.message ?? o.sandbox);
  }
  return chosen.value;
}

/**
 * The operator: a given one is checked now; the default ($WARRANT_OPERATOR, else the login name)
 * when it is first needed, so that a command that never acts is not refused for it.
 */
function operatorOf(o: WarrantOptions): () => string {
  const namedOperator =
    o.operator === undefined ? undefined : operatorBindingOf(o.operator, "the operator");
  let defaulted: string | undefined;
  return (): string => {
    if (namedOperator !== undefined) return namedOperator;
    defaulted ??= operatorBinding();
    return defaulted;
  };
}

/** A role's override: the options' models, else (when asked) the recorded URI's model. */
function overridesOf(resolve: ModelResolver, byUri: ReturnType<typeof uriModels>): OverrideOf {
  return (role, priorCalls, query, recorded, modelUris = false) => {
    const asked = { query, priorCalls, recorded };
    const model = resolve(role, asked) ?? (modelUris ? byUri(role, asked) : undefined);
    if (model === undefined) return undefined;
    const provider = providerOf(model, role);
    return { provider, uri: recorded ?? provider.id };
  };
}

/** See Composition.recordedModels. */
function recordedModels(
  parts: Parts,
  pack: LoadedPack,
  givenRefs: Readonly<Partial<Record<Role, string>>> | undefined,
): { models: Record<string, string>; overrides: Record<string, string> } {
  const roles = ROLES.filter((r) => pack.agents[r] !== undefined);
  // A role is overridden when the run names its model, or when the resolver answers for it.
  const overrides: Record<string, string> = {};
  for (const r of roles) {
    const given = givenRefs?.[r] ?? parts.overrideOf(r, 0, "")?.uri;
    if (given !== undefined) overrides[r] = given;
  }
  const uris = effectiveModelUris(pack, overrides, parts.env);
  const models: Record<string, string> = {};
  for (const r of roles) {
    const first = pack.agents[r]?.definition as {
      models?: { provider: string; model: string }[];
    };
    const own = first?.models?.[0];
    models[r] = uris[r] ?? (own === undefined ? "none" : `${own.provider}:${own.model}`);
  }
  return { models, overrides };
}

/** See Composition.emitter. */
function emitterOf(
  clock: Clock,
  publish: WarrantSubscriber,
  telemetry: Telemetry,
): (log?: EventLog) => Emit {
  // Untraced, the emitter does not even call into telemetry.
  const traced = telemetry.enabled ? telemetry : undefined;
  const stamp = eventStamper(clock);
  return (log) => (body: WarrantEventBody) => {
    const event = stamp(body);
    log?.push(event);
    publish(event);
    traced?.observe(event);
  };
}
