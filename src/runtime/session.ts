// A driving session over one store: opens a task pack's loop or resumes one from its ledger, under
// the store's lease so that no two processes drive the same loop at once.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { WarrantError } from "../core/result.js";
import { type DriveResult, drive } from "./driver.js";
import { underLease } from "./fenced-drive.js";
import { loadTaskPack } from "./load-pack.js";
import { openLoop } from "./open-loop.js";
import type { RuntimeContext } from "./ports.js";
import type { BindingBody } from "./records.js";
import type { LoadedPack } from "./task-pack.js";

/**
 * How long a driver's lease lasts unless extended (extended every third of it). A driver that dies
 * holds its loop this long at most; `WARRANT_LEASE_TTL_MS` overrides it.
 */
export function leaseTtlMs(
  env: Readonly<Record<string, string | undefined>> = process.env,
): number {
  const n = Number(env.WARRANT_LEASE_TTL_MS);
  return Number.isSafeInteger(n) && n > 0 ? n : 10_000;
}

export function newQueryId(pack: LoadedPack, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  return `query:${pack.pack.name}-${stamp}-${randomBytes(3).toString("hex")}`;
}

export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
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
  holder: string,
  opts: { readonly waitMs?: number; readonly onLeased?: () => void } = {},
): Promise<DriveResult | "leased-elsewhere"> {
  const ttl = leaseTtlMs();
  // Leases are wall-clock: they bind processes, not the loop's (possibly injected) clock.
  const giveUpAt = Date.now() + (opts.waitMs ?? 0);
  let grant = await ctx.store.acquireLease(query, holder, ttl, new Date());
  while (grant === undefined) {
    if (Date.now() >= giveUpAt) return "leased-elsewhere";
    await ctx.sleep(Math.min(500, ttl / 4));
    grant = await ctx.store.acquireLease(query, holder, ttl, new Date());
  }
  opts.onLeased?.();
  try {
    // Every write carries the lease's fencing token; a lost lease stops the drive (store/lease-lost).
    const lease = { query, holder, token: grant.token, ttlMs: ttl };
    return await underLease(ctx, lease, (fenced) => drive(fenced, { query, pack }));
  } finally {
    await ctx.store.releaseLease(query, holder).catch(() => undefined);
  }
}

export async function startLoop(
  ctx: RuntimeContext,
  pack: LoadedPack,
  models: Readonly<Record<string, string>>,
  query: string = newQueryId(pack, ctx.clock.now()),
): Promise<string> {
  await openLoop(ctx, { query, pack, models });
  return query;
}

/** The binding record a loop was opened with: which task pack, which models. */
export async function bindingOf(ctx: RuntimeContext, query: string): Promise<BindingBody> {
  const records = await ctx.store.listRecords(query);
  const binding = records.find((r) => r.kind === "binding")?.body as BindingBody | undefined;
  if (binding === undefined)
    throw new WarrantError("runtime/binding-missing", `${query} has no binding record`);
  return binding;
}

/** Reloads the task pack of a loop, refusing one whose content changed since the loop opened. */
export async function packOf(binding: BindingBody): Promise<LoadedPack> {
  const loaded = await loadTaskPack(binding["task-pack/file"]);
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
