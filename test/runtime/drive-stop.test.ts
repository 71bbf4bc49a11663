// How a worker's shutdown ends a drive held under a lease (fenced-drive.ts): a drain lets the work in
// progress finish and refuses the next passage, run or approval wait (one that waits now ends at
// once) with runtime/shutting-down; a mutation's approval in the middle of a run is not ended by a
// drain; a forced stop ends the drive now and destroys its environments.
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import type { ApprovalRequest } from "../../src/core/ports/approver.js";
import type { Environment } from "../../src/core/ports/sandbox.js";
import type { RuntimeContext } from "../../src/runtime/context.js";
import { underLease } from "../../src/runtime/fenced-drive.js";
import type { RunEnvironments } from "../../src/runtime/run-environments.js";
import { manualClock } from "../../src/testing.js";

const QUERY = "query:drive-stop";

interface Stub {
  readonly ctx: RuntimeContext;
  readonly destroyed: string[];
  /** Resolves the pending approval or passage. */
  release: () => void;
  /** Settles once a passage or an approval waits (is pending). */
  readonly waiting: Promise<void>;
}

async function stub(): Promise<{ stub: Stub; token: number }> {
  const store = new MemoryLedgerStore();
  // Time stands still: the lease is never renewed while these drives run.
  const time = manualClock();
  const grant = await store.acquireLease(QUERY, "worker-a", 60_000, time.now());
  if (grant === undefined) throw new Error("no lease");
  const destroyed: string[] = [];
  let waits: () => void = () => {};
  const s: Stub = {
    destroyed,
    release: () => {},
    waiting: new Promise<void>((resolve) => {
      waits = resolve;
    }),
    ctx: undefined as unknown as RuntimeContext,
  };
  const pending = () =>
    new Promise<void>((resolve) => {
      s.release = resolve;
      waits();
    });
  const sandbox: RunEnvironments = {
    backend: "stub",
    create: async (_baseline: string, name: string) => {
      const env: Partial<Environment> = {
        root: `/nowhere/${name}`,
        destroy: async () => {
          destroyed.push(name);
          return { confirmed: true };
        },
      };
      return env as Environment;
    },
    discard: async () => true,
    close: async () => undefined,
  };
  (s as { ctx: RuntimeContext }).ctx = {
    store,
    sandbox,
    passages: {
      run: async () => {
        await pending();
        return { ok: true } as never;
      },
    },
    approver: {
      approve: async (_r: ApprovalRequest) => {
        await pending();
        return "approved";
      },
    },
    emit: () => {},
    clock: time,
    time,
  } as unknown as RuntimeContext;
  return { stub: s, token: grant.token };
}

const lease = (token: number) => ({ query: QUERY, holder: "worker-a", token, ttlMs: 60_000 });
/** Lets every promise chain started so far run its course (a turn of the event loop, not a delay). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("a drive under a worker's shutdown", () => {
  it("a drain lets the passage in progress end and refuses the next one", async () => {
    const { stub: s, token } = await stub();
    const drain = new AbortController();
    let first: unknown;
    const drive = underLease(
      s.ctx,
      lease(token),
      async (f) => {
        first = await f.passages.run({} as never);
        await f.passages.run({} as never);
        return "ended";
      },
      { drain: drain.signal },
    );
    await s.waiting;
    drain.abort();
    s.release(); // the first passage ends: its result is kept
    await expect(drive).rejects.toMatchObject({ code: "runtime/shutting-down" });
    expect(first).toEqual({ ok: true });
  });

  it("a drain ends a wait for an admission at once, and refuses a run not yet made", async () => {
    const { stub: s, token } = await stub();
    const drain = new AbortController();
    const drive = underLease(
      s.ctx,
      lease(token),
      (f) =>
        f.approver.approve({
          query: QUERY,
          run: "r",
          step: "admission",
          kind: "admission",
          description: "",
        }),
      { drain: drain.signal },
    );
    await s.waiting;
    drain.abort();
    await expect(drive).rejects.toMatchObject({ code: "runtime/shutting-down" });

    const after = underLease(s.ctx, lease(token), (f) => f.sandbox.create("/baseline", "env-1"), {
      drain: drain.signal,
    });
    await expect(after).rejects.toMatchObject({ code: "runtime/shutting-down" });
    expect(s.destroyed).toEqual([]);
  });

  it("a drain does not end a mutation's approval in the middle of a run", async () => {
    const { stub: s, token } = await stub();
    const drain = new AbortController();
    const drive = underLease(
      s.ctx,
      lease(token),
      (f) =>
        f.approver.approve({
          query: QUERY,
          run: "r",
          step: "s2",
          kind: "mutation",
          description: "",
        }),
      { drain: drain.signal },
    );
    await s.waiting;
    drain.abort();
    // The drain ends nothing by itself: the approval still waits.
    await settled();
    expect(await Promise.race([drive, Promise.resolve("waits")])).toBe("waits");
    s.release();
    await expect(drive).resolves.toBe("approved");
  });

  it("a forced stop ends the drive now and destroys its environments", async () => {
    const { stub: s, token } = await stub();
    const force = new AbortController();
    const drive = underLease(
      s.ctx,
      lease(token),
      async (f) => {
        await f.sandbox.create("/baseline", "env-1");
        await f.passages.run({} as never); // never released
        return "ended";
      },
      { force: force.signal },
    );
    await s.waiting;
    expect(s.destroyed).toEqual([]);
    force.abort();
    await expect(drive).rejects.toMatchObject({ code: "runtime/shutting-down" });
    expect(s.destroyed).toEqual(["env-1"]);
  });
});
