// An environment's name is its run's, whoever drives the loop: making one replaces what is at that
// name, discarding one removes it. A drive frozen past its lease (a stopped process, a long pause)
// wakes to a ledger that says the new holder's run started, and would discard that run's
// environment as its own leftover. So a drive under a lease renews it before it makes or discards
// an environment, and one whose lease is gone does neither: it stops with store/lease-lost.
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import type { Environment } from "../../src/core/ports/sandbox.js";
import { WarrantError } from "../../src/core/result.js";
import type { RuntimeContext } from "../../src/runtime/context.js";
import { underLease } from "../../src/runtime/fenced-drive.js";
import type { RunEnvironments } from "../../src/runtime/run-environments.js";
import { manualClock } from "../../src/testing.js";

const QUERY = "query:stale-drive";
const TTL_MS = 60_000;

async function setup() {
  const store = new MemoryLedgerStore();
  const time = manualClock();
  const grant = await store.acquireLease(QUERY, "worker-a", TTL_MS, time.now());
  if (grant === undefined) throw new Error("no lease");
  /** What reached the sandbox: the names made and discarded. */
  const calls: string[] = [];
  const sandbox: RunEnvironments = {
    backend: "stub",
    create: async (_baseline, name) => {
      calls.push(`create ${name}`);
      const env: Partial<Environment> = {
        root: `/nowhere/${name}`,
        destroy: async () => ({ confirmed: true }),
      };
      return env as Environment;
    },
    discard: async (name) => {
      calls.push(`discard ${name}`);
      return true;
    },
    close: async () => undefined,
  };
  const events: string[] = [];
  const ctx = {
    store,
    sandbox,
    emit: (e: { kind: string }) => events.push(e.kind),
    clock: time,
    time,
  } as unknown as RuntimeContext;
  const lease = { query: QUERY, holder: "worker-a", token: grant.token, ttlMs: TTL_MS };
  /**
   * worker-b takes the loop over, at a time past worker-a's lease: worker-a was frozen meanwhile
   * (its clock, and so its renewals, did not move).
   */
  const takeOver = async () => {
    const later = new Date(time.now().getTime() + 2 * TTL_MS);
    expect(await store.acquireLease(QUERY, "worker-b", TTL_MS, later)).toBeDefined();
  };
  return { store, time, calls, events, ctx, lease, takeOver };
}

describe("a drive that wakes after its lease was taken over", () => {
  it("does not discard the environment the ledger names: it stops with store/lease-lost", async () => {
    const s = await setup();
    const drive = underLease(s.ctx, s.lease, async (f) => {
      await s.takeOver();
      return f.sandbox.discard("run-abc", "/tmp/warrant-env-run-abc/workspace");
    });
    await expect(drive).rejects.toMatchObject({ code: "store/lease-lost" });
    expect(s.calls).toEqual([]);
    expect(s.events).toContain("lease-lost");
    expect((await s.store.leases()).map((l) => l.holder)).toEqual(["worker-b"]);
  });

  it("does not make (and so replace) the run's environment: it stops with store/lease-lost", async () => {
    const s = await setup();
    const drive = underLease(s.ctx, s.lease, async (f) => {
      await s.takeOver();
      return f.sandbox.create("/baseline", "run-abc");
    });
    await expect(drive).rejects.toMatchObject({ code: "store/lease-lost" });
    expect(s.calls).toEqual([]);
  });

  it("while it holds the lease, renews it and then discards and makes environments", async () => {
    const s = await setup();
    const drive = underLease(s.ctx, s.lease, async (f) => {
      await s.time.advance(TTL_MS / 2);
      const discarded = await f.sandbox.discard("run-abc");
      // Renewed just now: a whole ttl from this moment.
      const [lease] = await s.store.leases();
      expect(lease?.until.getTime()).toBe(s.time.now().getTime() + TTL_MS);
      await f.sandbox.create("/baseline", "run-abc");
      return discarded;
    });
    await expect(drive).resolves.toBe(true);
    expect(s.calls).toEqual(["discard run-abc", "create run-abc"]);
  });

  it.each(["discard", "create"] as const)(
    "does not %s an environment while the store cannot renew its lease: it stops with store/lease-lost",
    async (op) => {
      const s = await setup();
      const drive = underLease(s.ctx, s.lease, async (f) => {
        // The store goes away: the renewal before the environment cannot be made.
        s.store.renewLease = async () => {
          throw new WarrantError("store/unreachable", "cannot use the store: connection refused");
        };
        return op === "discard"
          ? f.sandbox.discard("run-abc")
          : f.sandbox.create("/baseline", "run-abc");
      });
      await expect(drive).rejects.toMatchObject({
        code: "store/lease-lost",
        message: expect.stringContaining("could not be renewed: cannot use the store"),
      });
      expect(s.calls).toEqual([]);
      expect(s.events).toContain("lease-lost");
    },
  );
});
