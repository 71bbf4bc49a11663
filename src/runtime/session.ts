// A driving session over one store: opens a task pack's loop or resumes one from its ledger, under
// the store's lease so that no two processes drive the same loop at once.
import type { Random } from "../core/ports/random.js";
import { WarrantError } from "../core/result.js";
import type { RuntimeContext } from "./context.js";
import { DEFAULT_LEASE_TTL_MS } from "./drive-defaults.js";
import { type DriveResult, drive } from "./driver.js";
import { type DriveStop, underLease } from "./fenced-drive.js";
import { bindingRefOf, openLoop } from "./open-loop.js";
import { type BindingBody, type DriveTraceBody, makeRecord } from "./records.js";
import { randomHex, systemRandom } from "./system-random.js";
import type { LoadedPack } from "./task-pack.js";

/** A new loop's query id: the pack's name, the instant, and six random hex digits. */
export function newQueryId(pack: LoadedPack, now: Date, random: Random = systemRandom): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  return `query:${pack.pack.name}-${stamp}-${randomHex(random, 3)}`;
}

export interface LeaseOptions {
  /** Who drives (`host:pid:random`): the lease's holder. */
  readonly holder: string;
  /** The lease's time to live; a driver that dies holds its loop this long at most. */
  readonly ttlMs?: number;
  /** Wait this long for a lease another driver holds (one that died frees it within its ttl). */
  readonly waitMs?: number;
  readonly onLeased?: () => void;
  /** A worker's shutdown: drain at the next step boundary, or stop now. */
  readonly stop?: DriveStop;
}

/**
 * Drives `query` while holding its lease, extended in the background until the drive ends. With
 * `waitMs`, waits that long for a lease another driver holds (one that died frees it within its ttl).
 * Throws WarrantError `store/lease-lost` as soon as the lease is lost (a failed renewal, a write
 * the store refused): the drive is stopped then, its environment destroyed.
 */
export async function driveUnderLease(
  ctx: RuntimeContext,
  query: string,
  pack: LoadedPack,
  opts: LeaseOptions,
): Promise<DriveResult | "leased-elsewhere"> {
  const { holder } = opts;
  const ttl = opts.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  // Leases are wall-clock: they bind processes, not the loop's (possibly injected) clock.
  const { time } = ctx;
  const giveUpAt = time.now().getTime() + (opts.waitMs ?? 0);
  let grant = await ctx.store.acquireLease(query, holder, ttl, time.now());
  while (grant === undefined) {
    if (time.now().getTime() >= giveUpAt) {
      ctx.emit({ kind: "drive-end", query, status: "leased-elsewhere" });
      return "leased-elsewhere";
    }
    await time.sleep(Math.min(500, ttl / 4));
    grant = await ctx.store.acquireLease(query, holder, ttl, time.now());
  }
  opts.onLeased?.();
  try {
    const earlier = ctx.traceparent === undefined ? undefined : await earlierTraces(ctx, query);
    ctx.emit({
      kind: "drive-start",
      query,
      pack: pack.pack.name,
      binding: bindingRefOf(pack),
      holder,
      store: schemeOf(ctx.store.uri),
      ...(earlier === undefined ? {} : { earlierTraces: earlier }),
    });
    // Every write carries the lease's fencing token; a lost lease stops the drive (store/lease-lost).
    const lease = { query, holder, token: grant.token, ttlMs: ttl };
    const result = await underLease(
      ctx,
      lease,
      async (fenced) => {
        await journalTrace(fenced, query, holder);
        return drive(fenced, { query, pack });
      },
      opts.stop,
    );
    ctx.emit({
      kind: "drive-end",
      query,
      status: result.status,
      ...(result.status === "stopped"
        ? result.document.stop === undefined
          ? {}
          : { stop: result.document.stop.reason }
        : { blocked: result.reason }),
    });
    return result;
  } catch (e) {
    const error = e instanceof WarrantError ? e.code : "runtime/failed";
    ctx.emit({ kind: "drive-end", query, status: "failed", error });
    throw e;
  } finally {
    await ctx.store.releaseLease(query, holder).catch(() => undefined);
  }
}

/** The URI scheme of a store (`sqlite`, `postgres`, `memory`): nothing after it, so no password. */
function schemeOf(uri: string): string {
  const colon = uri.indexOf(":");
  return colon < 0 ? uri : uri.slice(0, colon);
}

/** The trace contexts earlier traced drives of the loop journaled, oldest first. */
async function earlierTraces(ctx: RuntimeContext, query: string): Promise<string[]> {
  return (await ctx.store.listRecords(query))
    .filter((r) => r.kind === "driveTrace")
    .map((r) => (r.body as DriveTraceBody).traceparent);
}

/** Journals the trace context of this drive, when something traces it. */
async function journalTrace(ctx: RuntimeContext, query: string, holder: string): Promise<void> {
  const traceparent = ctx.traceparent?.(query);
  if (traceparent === undefined) return;
  const body: DriveTraceBody = {
    "query/id": query,
    traceparent,
    holder,
    "started-at": ctx.clock.now().toISOString(),
  };
  await ctx.store.putRecords([makeRecord("driveTrace", query, body)]);
}

export async function startLoop(
  ctx: RuntimeContext,
  pack: LoadedPack,
  models: Readonly<Record<string, string>>,
  query: string = newQueryId(pack, ctx.clock.now(), ctx.random),
  overrides?: Readonly<Record<string, string>>,
  namespace?: string,
): Promise<string> {
  await openLoop(ctx, {
    query,
    pack,
    models,
    ...(overrides === undefined ? {} : { overrides }),
    ...(namespace === undefined ? {} : { namespace }),
  });
  return query;
}

/** The models a loop's run named instead of its definitions' (every one, in an older binding). */
export function modelOverridesOf(binding: BindingBody): Readonly<Record<string, string>> {
  return binding["model/override"] ?? binding.models;
}

/** The binding record a loop was opened with: which task pack, which models. */
export async function bindingOf(
  ctx: Pick<RuntimeContext, "store">,
  query: string,
): Promise<BindingBody> {
  const records = await ctx.store.listRecords(query);
  const binding = records.find((r) => r.kind === "binding")?.body as BindingBody | undefined;
  if (binding === undefined)
    throw new WarrantError("runtime/binding-missing", `${query} has no binding record`);
  return binding;
}

/** Reloads the task pack of a loop, refusing one whose content changed since the loop opened. */
export async function packOf(
  ctx: Pick<RuntimeContext, "loadPack">,
  binding: BindingBody,
): Promise<LoadedPack> {
  const loaded = await ctx.loadPack(binding["task-pack/file"]);
  if (!loaded.ok) {
    const p = loaded.errors[0];
    throw new WarrantError(p?.code ?? "taskpack/invalid", p?.message ?? "invalid task pack");
  }
  if (loaded.value.digest !== binding["task-pack/digest"]) {
    throw new WarrantError(
      "plan/changed-replay",
      `${binding["task-pack/file"]} changed since ${binding["query/id"]} opened; resume refuses a changed pack`,
    );
  }
  return loaded.value;
}
