// Holds one drive to its lease. The drive writes through a fenced view of the store (every append
// and record write carries the lease's fencing token, checked by the store in the write's own
// transaction); the lease is renewed in the background; and the moment a renewal fails or the store
// refuses a write, the drive is stopped: its environments are destroyed (their processes killed),
// it writes nothing more, and the caller gets WarrantError `store/lease-lost` at once. A drive that
// fails otherwise leaves no environment behind either.
import { fencedStore } from "../core/loop/fenced-store.js";
import { WarrantError } from "../core/result.js";
import { LoopLedger } from "./loop-ledger.js";
import type { RunEnvironment, RuntimeContext, SandboxPort } from "./ports.js";

export interface HeldLease {
  readonly query: string;
  readonly holder: string;
  readonly token: number;
  readonly ttlMs: number;
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
): Promise<T> {
  const { query, holder, token, ttlMs } = lease;
  const environments = new Set<RunEnvironment>();
  let fail: (reason: WarrantError) => void = () => {};
  const lost = new Promise<never>((_, reject) => {
    fail = reject;
  });
  lost.catch(() => undefined);
  const destroyAll = async (): Promise<void> => {
    const envs = [...environments];
    environments.clear();
    await Promise.allSettled(envs.map((env) => env.destroy()));
  };
  const store = fencedStore(ctx.store, { query, token }, (reason) => {
    ctx.emit({ kind: "lease-lost", query, code: reason.code, message: reason.message });
    void destroyAll();
    fail(reason);
  });
  const refuseOnceLost = <R>(work: () => Promise<R>): Promise<R> => {
    if (store.lost !== undefined) return Promise.reject(store.lost);
    return Promise.race([work(), lost]);
  };
  const fenced: RuntimeContext = {
    ...ctx,
    store,
    loop: new LoopLedger(store),
    sandbox: tracked(ctx.sandbox, environments, () => store.lost),
    passages: { run: (request) => refuseOnceLost(() => ctx.passages.run(request)) },
    approver: { approve: (request) => refuseOnceLost(() => ctx.approver.approve(request)) },
    ...(ctx.sealHead === undefined
      ? {}
      : {
          sealHead: (q, reason) => refuseOnceLost(() => ctx.sealHead?.(q, reason) as Promise<void>),
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
    let reason: WarrantError | undefined;
    try {
      if (!(await ctx.store.renewLease(query, holder, token, ttlMs, new Date()))) {
        reason = new WarrantError(
          "store/lease-lost",
          `loop ${query}: the lease renewal was refused: the loop was taken over or released`,
        );
      }
    } catch (e) {
      reason = new WarrantError(
        "store/lease-lost",
        `loop ${query}: the lease could not be renewed: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
    }
    if (reason !== undefined && !stopped) store.revoke(reason);
  };
  const timer = setInterval(() => {
    if (renewal !== undefined || stopped || store.lost !== undefined) return;
    renewal = renew().finally(() => {
      renewal = undefined;
    });
  }, ttlMs / 3);
  timer.unref();

  const work = body(fenced);
  // Once the lease is lost the abandoned drive ends in a refused write or wait: expected, not news.
  work.catch(() => undefined);
  try {
    return await Promise.race([work, lost]);
  } catch (e) {
    // A drive that failed (its store gone past the retry window, say) leaves no environment
    // running: a resume would discard it anyway, and a run with a step started concludes unknown.
    await destroyAll();
    throw e;
  } finally {
    stopped = true;
    clearInterval(timer);
    await renewal;
  }
}

/** The sandbox, remembering the environments it made until they are destroyed. */
function tracked(
  sandbox: SandboxPort,
  live: Set<RunEnvironment>,
  lost: () => WarrantError | undefined,
): SandboxPort {
  const port: SandboxPort = {
    backend: sandbox.backend,
    async create(baselineDir, ref, name, opts) {
      const env = await sandbox.create(baselineDir, ref, name, opts);
      const reason = lost();
      if (reason !== undefined) {
        await env.destroy();
        throw reason;
      }
      live.add(env);
      // Every method of the environment as it is, but a destroy forgets it.
      return {
        ...env,
        destroy: () => {
          live.delete(env);
          return env.destroy();
        },
      };
    },
    destroyDir: (dir) => sandbox.destroyDir(dir),
    discard: (name) => sandbox.discard(name),
    snapshotDir: (dir) => sandbox.snapshotDir(dir),
  };
  return sandbox.close === undefined
    ? port
    : { ...port, close: () => sandbox.close?.() as Promise<void> };
}
