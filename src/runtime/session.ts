// A driving session over one store: opens a task pack's loop or resumes one from its ledger, under
// the store's lease so that no two processes drive the same loop at once.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { WarrantError } from "../core/result.js";
import { type DriveResult, drive } from "./driver.js";
import { loadTaskPack } from "./load-pack.js";
import { openLoop } from "./open-loop.js";
import type { RuntimeContext } from "./ports.js";
import type { BindingBody } from "./records.js";
import type { LoadedPack } from "./task-pack.js";

export const LEASE_TTL_MS = 30_000;

export function newQueryId(pack: LoadedPack, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  return `query:${pack.pack.name}-${stamp}-${randomBytes(3).toString("hex")}`;
}

export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
}

/** Drives `query` while holding its lease, extended in the background until the drive ends. */
export async function driveUnderLease(
  ctx: RuntimeContext,
  query: string,
  pack: LoadedPack,
  holder: string,
): Promise<DriveResult | "leased-elsewhere"> {
  if (!(await ctx.store.acquireLease(query, holder, LEASE_TTL_MS, ctx.clock.now())))
    return "leased-elsewhere";
  const timer = setInterval(() => {
    void ctx.store
      .acquireLease(query, holder, LEASE_TTL_MS, ctx.clock.now())
      .catch(() => undefined);
  }, LEASE_TTL_MS / 3);
  timer.unref();
  try {
    return await drive(ctx, { query, pack });
  } finally {
    clearInterval(timer);
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
