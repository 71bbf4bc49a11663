// Holds one drive to its lease. The drive writes through a fenced view of the store (every append
// and record write carries the lease's fencing token, checked by the store in the write's own
// transaction); the lease is renewed in the background; and the moment a renewal fails or the store
// refuses a write, the drive is stopped: its environments are destroyed (their processes killed),
// it writes nothing more, and the caller gets WarrantError `store/lease-lost` at once. A drive that
// fails otherwise leaves no environment behind either.
import { fencedStore } from "../core/loop/fenced-store.js";
import type { Environment } from "../core/ports/sandbox.js";
import { WarrantError } from "../core/result.js";
import type { RuntimeContext } from "./context.js";
import { LoopLedger } from "./loop-ledger.js";
import type { RunEnvironments } from "./run-environments.js";

export interface HeldLease {
  readonly query: string;
  readonly holder: string;
  readonly token: number;
  readonly ttlMs: number;
}

/** How a worker that is shutting down ends a drive it holds. */
export interface DriveStop {
  /**
   * Once aborted, the drive starts nothing more: its next passage, run or approval wait (one that
   * waits now included) is refused with `runtime/shutting-down`; a run in progress runs to its end.
   */
  readonly drain?: AbortSignal;
  /** Once aborted, the drive stops now as if its lease were lost (processes killed, environments destroyed). */
  readonly force?: AbortSignal;
}

/** The refusal of a drive whose worker is shutting down: its loop is released, not failed. */
export function shuttingDown(query: string, forced: boolean): WarrantError {
  return new WarrantError(
    "runtime/shutting-down",
    forced
      ? `loop ${query}: the worker is shutting down now; the drive was stopped`
      : `loop ${query}: the worker is shutting down; the drive was released at a step boundary`,
  );
}

/**
 * Run `body` with a context fenced by `lease`, renewing the lease every third of its ttl. Settles
 * with `body`'s result, or rejects with `store/lease-lost` as soon as the lease is lost (the
 * abandoned body runs on only until its next write or wait, which is refused).
 */
export async function underLease<T>(
  ctx: RuntimeContext,
  lease: HeldLease,
  body: (fenced: RuntimeContext) => Promise<T>,
  stop: DriveStop = {},
): Promise<T> {
  const { query, token, ttlMs } = lease;
  const environments = new Set<Environment>();
  let fail: (reason: WarrantError) => void = () => {};
  const lost = new Promise<never>((_, reject) => {
    fail = reject;
  });
  lost.catch(() => undefined);
  // Destructions chain: a later call (the drive's end) settles only after one already under way (the
  // moment the lease was lost), so the caller never moves on with an environment half destroyed.
  let destroying: Promise<void> = Promise.resolve();
  const destroyAll = (): Promise<void> => {
    destroying = destroying.then(async () => {
      const envs = [...environments];
      environments.clear();
      await Promise.allSettled(envs.map((env) => env.destroy()));
    });
    return destroying;
  };
  const store = fencedStore(ctx.store, { query, token }, (reason) => {
    if (reason.code === "store/lease-lost")
      ctx.emit({ kind: "lease-lost", query, code: reason.code, message: reason.message });
    void destroyAll();
    fail(reason);
  });
  // A drain refuses what has not started yet, and ends a wait (for an approval) at once.
  const draining = drained(stop, query);
  // How a drain treats the work: "start" refuses it unless begun (a passage runs to its end), "wait"
  // also ends it while it waits (an approval before a run), "none" lets it be (a mutation's approval
  // in the middle of a run, whose run would otherwise conclude unknown: it waits until forced).
  const refuseOnceLost = <R>(
    work: () => Promise<R>,
    drain: "start" | "wait" | "none" = "start",
  ): Promise<R> => {
    if (store.lost !== undefined) return Promise.reject(store.lost);
    if (drain !== "none" && stop.drain?.aborted === true)
      return Promise.reject(shuttingDown(query, false));
    const racers: Promise<R>[] = [work(), lost];
    if (drain === "wait" && draining !== undefined) racers.push(draining);
    return Promise.race(racers);
  };
  const onForce = () => store.revoke(shuttingDown(query, true));
  if (stop.force?.aborted === true) onForce();
  else stop.force?.addEventListener("abort", onForce, { once: true });
  const fenced: RuntimeContext = {
    ...ctx,
    store,
    loop: new LoopLedger(store, ctx.time.sleep, ctx.random),
    sandbox: tracked(
      ctx.sandbox,
      environments,
      () => store.lost ?? (stop.drain?.aborted === true ? shuttingDown(query, false) : undefined),
      async () => {
        // Renewed now: whoever takes the loop over next waits a whole ttl from here.
        const refused = await renewalRefused(ctx, lease);
        if (refused === undefined) return;
        store.revoke(refused);
        throw refused;
      },
    ),
    passages: { run: (request) => refuseOnceLost(() => ctx.passages.run(request)) },
    approver: {
      approve: (request) =>
        refuseOnceLost(
          () => ctx.approver.approve(request),
          request.kind === "mutation" ? "none" : "wait",
        ),
    },
    ...(ctx.sealHead === undefined
      ? {}
      : {
          sealHead: (q, reason) =>
            refuseOnceLost(() => ctx.sealHead?.(q, reason) as Promise<void>, "none"),
        }),
    // An abandoned drive says nothing more either.
    emit: (event) => {
      if (store.lost === undefined) ctx.emit(event);
    },
  };

  // One renewal at a time; the last one settles before the caller releases the lease.
  let renewal: Promise<void> | undefined;
  let stopped = false;
  const renew = async (): Promise<void> => {
    const reason = await renewalRefused(ctx, lease);
    if (reason !== undefined && !stopped) store.revoke(reason);
  };
  const timer = ctx.time.every(ttlMs / 3, () => {
    if (renewal !== undefined || stopped || store.lost !== undefined) return;
    renewal = renew().finally(() => {
      renewal = undefined;
    });
  });

  const work = body(fenced);
  // Once the lease is lost the abandoned drive ends in a refused write or wait: expected, not news.
  work.catch(() => undefined);
  try {
    return await Promise.race([work, lost]);
  } catch (e) {
    // A drive that failed (its store gone past the retry window, say) leaves no environment
    // running: a resume would discard it anyway, and a run with a step started concludes unknown.
    // A drive that fails while another holds its loop (a process frozen past its lease wakes to
    // find its environment discarded by the new holder) lost its lease: that is what it reports.
    const failure = store.lost === undefined ? await lostMeanwhile(ctx, lease, e) : undefined;
    if (failure !== undefined) store.revoke(failure);
    await destroyAll();
    throw store.lost ?? e;
  } finally {
    stopped = true;
    stop.force?.removeEventListener("abort", onForce);
    timer.cancel();
    await renewal;
  }
}

/**
 * Why a drive that failed with `e` lost its lease meanwhile, asked of the store by one more renewal
 * (the caller releases the lease next either way); undefined when the lease is still held, when the
 * store cannot answer (then `e` is the news), or when `e` is already a refusal of the lease or a
 * shutdown.
 */
async function lostMeanwhile(
  ctx: RuntimeContext,
  lease: HeldLease,
  e: unknown,
): Promise<WarrantError | undefined> {
  if (
    e instanceof WarrantError &&
    (e.code === "store/lease-lost" || e.code === "runtime/shutting-down")
  )
    return undefined;
  const { query, holder, token, ttlMs } = lease;
  const held = await ctx.store.renewLease(query, holder, token, ttlMs, ctx.time.now()).then(
    (renewed) => renewed,
    () => true,
  );
  return held
    ? undefined
    : new WarrantError(
        "store/lease-lost",
        `loop ${query}: the drive failed after its lease was taken over or released: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
}

/** What rejects once `stop.drain` is aborted (a worker draining); undefined without a drain. */
function drained(stop: DriveStop, query: string): Promise<never> | undefined {
  const signal = stop.drain;
  if (signal === undefined) return undefined;
  const draining = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(shuttingDown(query, false));
    else signal.addEventListener("abort", () => reject(shuttingDown(query, false)), { once: true });
  });
  draining.catch(() => undefined);
  return draining;
}

/** Renews the lease once: undefined when renewed, else why it is lost (`store/lease-lost`). */
async function renewalRefused(
  ctx: RuntimeContext,
  lease: HeldLease,
): Promise<WarrantError | undefined> {
  const { query, holder, token, ttlMs } = lease;
  try {
    if (await ctx.store.renewLease(query, holder, token, ttlMs, ctx.time.now())) return undefined;
    return new WarrantError(
      "store/lease-lost",
      `loop ${query}: the lease renewal was refused: the loop was taken over or released`,
    );
  } catch (e) {
    return new WarrantError(
      "store/lease-lost",
      `loop ${query}: the lease could not be renewed: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
}

/**
 * The drive's environments, remembering those made until they are destroyed. An environment's name
 * is the run's, whoever drives it: making one replaces what is there, and discarding one removes
 * it. So each is done only once `held()` has renewed the lease: a drive that was frozen past its
 * lease, and woke to act on what the ledger says the new holder is running, never removes the new
 * holder's environment.
 */
function tracked(
  sandbox: RunEnvironments,
  live: Set<Environment>,
  lost: () => WarrantError | undefined,
  held: () => Promise<void>,
): RunEnvironments {
  return {
    backend: sandbox.backend,
    async create(baselineDir, name, options) {
      const before = lost();
      if (before !== undefined) throw before;
      await held();
      const env = await sandbox.create(baselineDir, name, options);
      const reason = lost();
      if (reason !== undefined) {
        await env.destroy();
        throw reason;
      }
      live.add(env);
      // Every member of the environment as it is (whatever object implements it), but a destroy
      // forgets it.
      const destroy = () => {
        live.delete(env);
        return env.destroy();
      };
      return new Proxy(env, {
        get(target, key) {
          if (key === "destroy") return destroy;
          const value: unknown = Reflect.get(target, key, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    },
    async discard(name, root) {
      const before = lost();
      if (before !== undefined) throw before;
      await held();
      return sandbox.discard(name, root);
    },
    close: () => sandbox.close(),
  };
}
