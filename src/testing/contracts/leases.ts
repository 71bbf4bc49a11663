// The lease part of the LedgerStore contract: leases and their fencing tokens, fenced appends and
// record writes, lease visibility and the worker registry. Run by ledgerStoreContract for every store.

import type { LedgerStore } from "../../core/ports/ledger-store.js";
import { cycle, opened, passage, proposal, proposalRef, review } from "./facts.js";
import type { ContractSubject, ContractTestApi } from "./test-api.js";

const Q = "query:contract-1";
const Q2 = "query:contract-2";
const t0 = new Date("2026-12-01T10:00:00.000Z");
const plus = (ms: number) => new Date(t0.getTime() + ms);

/** The token of a lease that must be granted. */
async function tokenOf(
  store: LedgerStore,
  query: string,
  holder: string,
  ttlMs: number,
  now: Date,
): Promise<number> {
  const grant = await store.acquireLease(query, holder, ttlMs, now);
  if (grant === undefined) throw new Error(`no lease on ${query} for ${holder}`);
  return grant.token;
}

export function leaseContract(fresh: () => Promise<ContractSubject>, test: ContractTestApi): void {
  const { describe } = test;
  describe("leases", () => leaseCases(fresh, test));
  describe("fencing", () => {
    fencedWriteCases(fresh, test);
    staleTokenCases(fresh, test);
  });
  describe("worker registry", () => workerRegistryCases(fresh, test));
}

/** Leases: granted, extended, taken over, released, contested, their tokens, renewal, listing. */
function leaseCases(fresh: () => Promise<ContractSubject>, test: ContractTestApi): void {
  const { expect, it } = test;
  it("grants a free lease and refuses another holder while it is live", async () => {
    const { store } = await fresh();
    expect(await store.acquireLease(Q, "worker-a", 1000, t0)).toBeDefined();
    expect(await store.acquireLease(Q, "worker-b", 1000, plus(1))).toBeUndefined();
    expect(await store.acquireLease(Q, "worker-b", 1000, plus(999))).toBeUndefined();
    // Leases are per loop.
    expect(await store.acquireLease(Q2, "worker-b", 1000, plus(1))).toBeDefined();
  });

  it("extends its holder's lease from now", async () => {
    const { store } = await fresh();
    expect(await store.acquireLease(Q, "worker-a", 1000, t0)).toBeDefined();
    expect(await store.acquireLease(Q, "worker-a", 1000, plus(800))).toBeDefined();
    // Live until 1800 now, not 1000.
    expect(await store.acquireLease(Q, "worker-b", 1000, plus(1500))).toBeUndefined();
    expect(await store.acquireLease(Q, "worker-b", 1000, plus(1799))).toBeUndefined();
  });

  it("lets another holder take over once the lease has expired", async () => {
    const { store } = await fresh();
    expect(await store.acquireLease(Q, "worker-a", 1000, t0)).toBeDefined();
    // Expired at exactly its expiry instant.
    expect(await store.acquireLease(Q, "worker-b", 500, plus(1000))).toBeDefined();
    expect(await store.acquireLease(Q, "worker-a", 1000, plus(1001))).toBeUndefined();
    expect(await store.acquireLease(Q, "worker-a", 1000, plus(1500))).toBeDefined();
  });

  it("releases only its holder's lease", async () => {
    const { store } = await fresh();
    expect(await store.acquireLease(Q, "worker-a", 60_000, t0)).toBeDefined();
    await store.releaseLease(Q, "worker-b");
    expect(await store.acquireLease(Q, "worker-b", 1000, plus(1))).toBeUndefined();
    await store.releaseLease(Q, "worker-a");
    expect(await store.acquireLease(Q, "worker-b", 1000, plus(2))).toBeDefined();
    await store.releaseLease(Q, "worker-a");
    expect(await store.acquireLease(Q, "worker-a", 1000, plus(3))).toBeUndefined();
  });

  it("grants a contested free lease to exactly one of many concurrent holders", async () => {
    const { store } = await fresh();
    const holders = Array.from({ length: 8 }, (_, i) => `worker-${i}`);
    const got = await Promise.all(holders.map((h) => store.acquireLease(Q, h, 1000, t0)));
    expect(got.filter(Boolean)).toHaveLength(1);
    const leases = await store.leases();
    expect(leases).toHaveLength(1);
    expect(got.find(Boolean)?.token).toBe(leases[0]?.token);
  });

  it("grants increasing fencing tokens: every new lease gets a greater one, an extension keeps it", async () => {
    const { store } = await fresh();
    const a1 = await tokenOf(store, Q, "worker-a", 1000, t0);
    expect(a1).toBeGreaterThanOrEqual(1);
    // Extending, even after expiry with no one in between, keeps the holder's token.
    expect(await tokenOf(store, Q, "worker-a", 1000, plus(500))).toBe(a1);
    expect(await tokenOf(store, Q, "worker-a", 1000, plus(5000))).toBe(a1);
    const b = await tokenOf(store, Q, "worker-b", 1000, plus(6000));
    expect(b).toBeGreaterThan(a1);
    const a2 = await tokenOf(store, Q, "worker-a", 1000, plus(7000));
    expect(a2).toBeGreaterThan(b);
    // A release does not make a token reusable: the next lease gets a greater one.
    await store.releaseLease(Q, "worker-a");
    const a3 = await tokenOf(store, Q, "worker-a", 1000, plus(7001));
    expect(a3).toBeGreaterThan(a2);
    // Another loop's tokens are its own.
    const other = await tokenOf(store, Q2, "worker-a", 1000, t0);
    expect(other).toBeGreaterThanOrEqual(1);
    expect(await tokenOf(store, Q, "worker-a", 1000, plus(7002))).toBe(a3);
  });

  it("renews a lease only while its holder still holds it under the same token", async () => {
    const { store } = await fresh();
    const a = await tokenOf(store, Q, "worker-a", 1000, t0);
    expect(await store.renewLease(Q, "worker-a", a, 1000, plus(800))).toBe(true);
    // Expired at 1800 with no one in between: still renewable.
    expect(await store.renewLease(Q, "worker-a", a, 1000, plus(2500))).toBe(true);
    expect((await store.leases())[0]?.until).toEqual(plus(3500));
    // Not another holder's, not another token.
    expect(await store.renewLease(Q, "worker-b", a, 1000, plus(2600))).toBe(false);
    expect(await store.renewLease(Q, "worker-a", a + 1, 1000, plus(2600))).toBe(false);
    const b = await tokenOf(store, Q, "worker-b", 1000, plus(3500));
    expect(await store.renewLease(Q, "worker-a", a, 60_000, plus(3600))).toBe(false);
    expect(await store.leases()).toEqual([
      { query: Q, holder: "worker-b", token: b, until: plus(4500) },
    ]);
    // A released lease is not renewed, and renewing does not take the loop.
    await store.releaseLease(Q, "worker-b");
    expect(await store.renewLease(Q, "worker-b", b, 1000, plus(3700))).toBe(false);
    expect(await store.renewLease(Q2, "worker-a", 1, 1000, t0)).toBe(false);
    expect(await store.leases()).toEqual([]);
    expect(await tokenOf(store, Q, "worker-a", 1000, plus(3800))).toBeGreaterThan(b);
  });

  it("lists every lease held, live or expired, with its holder, token and expiry", async () => {
    const { store } = await fresh();
    expect(await store.leases()).toEqual([]);
    const a = await tokenOf(store, Q2, "worker-a", 1000, t0);
    const b = await tokenOf(store, Q, "worker-b", 60_000, plus(10));
    const c = await tokenOf(store, "query:contract-3", "worker-a", 1000, t0);
    await store.releaseLease("query:contract-3", "worker-a");
    // Q2's lease has expired by plus(5000) but no one took it: it is still listed.
    expect(await store.leases()).toEqual([
      { query: Q, holder: "worker-b", token: b, until: plus(60_010) },
      { query: Q2, holder: "worker-a", token: a, until: plus(1000) },
    ]);
    expect(c).toBeGreaterThanOrEqual(1);
  });
}

/** Q opened (by an unfenced first append), leased by worker-a, then taken over by worker-b. */
async function takenOver(store: LedgerStore): Promise<{ stale: number; current: number }> {
  await store.append({ query: Q, expectedLastSequence: 0, facts: [opened(Q)] });
  const stale = await tokenOf(store, Q, "worker-a", 1000, t0);
  const current = await tokenOf(store, Q, "worker-b", 1000, plus(1000));
  return { stale, current };
}

/** Fenced writes under the current token, and stale tokens refused after a takeover. */
function fencedWriteCases(fresh: () => Promise<ContractSubject>, test: ContractTestApi): void {
  const { expect, it } = test;
  it("stores a fenced append and record write made under the loop's current token", async () => {
    const { store } = await fresh();
    await store.append({ query: Q, expectedLastSequence: 0, facts: [opened(Q)] });
    const token = await tokenOf(store, Q, "worker-a", 60_000, t0);
    const outcome = await store.append({
      query: Q,
      expectedLastSequence: 1,
      facts: [cycle(Q, 2, 1)],
      records: [proposal(Q, 1)],
      fencingToken: token,
    });
    expect(outcome).toMatchObject({ ok: true });
    await store.putRecords([review(Q, 1)], { query: Q, token });
    expect((await store.listRecords(Q)).map((r) => r.ref)).toEqual([
      proposalRef(1),
      review(Q, 1).ref,
    ]);
    // Conflicts between writers are still values under a fence.
    expect(
      await store.append({
        query: Q,
        expectedLastSequence: 1,
        facts: [passage(Q, 2, 1)],
        fencingToken: token,
      }),
    ).toMatchObject({ ok: false, conflict: "sequence" });
  });

  it("refuses an append under a token from before a takeover with store/lease-lost, storing nothing of it", async () => {
    const { store } = await fresh();
    const { stale, current } = await takenOver(store);
    await expect(
      store.append({
        query: Q,
        expectedLastSequence: 1,
        facts: [cycle(Q, 2, 1)],
        records: [proposal(Q, 1)],
        fencingToken: stale,
      }),
    ).rejects.toMatchObject({ code: "store/lease-lost" });
    // A single fact with nothing else, as most charges are.
    await expect(
      store.append({
        query: Q,
        expectedLastSequence: 1,
        facts: [passage(Q, 2, 1)],
        fencingToken: stale,
      }),
    ).rejects.toMatchObject({ code: "store/lease-lost" });
    expect((await store.readFacts(Q)).map((s) => s.fact)).toEqual([opened(Q)]);
    expect(await store.readRecord(proposalRef(1))).toBeUndefined();
    expect(await store.listRecords(Q)).toEqual([]);
    // The new holder goes on at the same sequence.
    expect(
      await store.append({
        query: Q,
        expectedLastSequence: 1,
        facts: [passage(Q, 2, 1)],
        fencingToken: current,
      }),
    ).toMatchObject({ ok: true });
  });

  it("refuses a record write under a stale token with store/lease-lost, storing none of it", async () => {
    const { store } = await fresh();
    const { stale, current } = await takenOver(store);
    await expect(
      store.putRecords([review(Q, 1), review(Q, 2)], { query: Q, token: stale }),
    ).rejects.toMatchObject({ code: "store/lease-lost" });
    expect(await store.listRecords(Q)).toEqual([]);
    await store.putRecords([review(Q, 1)], { query: Q, token: current });
    expect(await store.listRecords(Q)).toEqual([review(Q, 1)]);
  });
}

/** Tokens kept stale after a release, per-loop fencing, unfenced writes, invalid tokens, races. */
function staleTokenCases(fresh: () => Promise<ContractSubject>, test: ContractTestApi): void {
  const { expect, it } = test;
  it("keeps a token stale after the taker releases, and refuses a token never granted", async () => {
    const { store } = await fresh();
    const { stale, current } = await takenOver(store);
    await store.releaseLease(Q, "worker-b");
    for (const token of [stale, current, current + 1]) {
      await expect(
        store.append({
          query: Q,
          expectedLastSequence: 1,
          facts: [passage(Q, 2, 1)],
          fencingToken: token,
        }),
      ).rejects.toMatchObject({ code: "store/lease-lost" });
      await expect(store.putRecords([review(Q, 1)], { query: Q, token })).rejects.toMatchObject({
        code: "store/lease-lost",
      });
    }
    // worker-a leases the loop again: a new token, and its old one is still stale.
    const again = await tokenOf(store, Q, "worker-a", 1000, plus(3000));
    expect(again).toBeGreaterThan(current);
    await expect(
      store.append({
        query: Q,
        expectedLastSequence: 1,
        facts: [passage(Q, 2, 1)],
        fencingToken: stale,
      }),
    ).rejects.toMatchObject({ code: "store/lease-lost" });
    expect(await store.readFacts(Q)).toHaveLength(1);
    expect(await store.listRecords(Q)).toEqual([]);
  });

  it("fences per loop: a token of one loop does not admit a write to another", async () => {
    const { store } = await fresh();
    await store.append({ query: Q2, expectedLastSequence: 0, facts: [opened(Q2)] });
    const token = await tokenOf(store, Q, "worker-a", 60_000, t0);
    await expect(
      store.append({
        query: Q2,
        expectedLastSequence: 1,
        facts: [passage(Q2, 2, 1)],
        fencingToken: token,
      }),
    ).rejects.toMatchObject({ code: "store/lease-lost" });
    // A fenced record write names one loop: a record of another is a caller bug.
    await expect(store.putRecords([review(Q2, 1)], { query: Q, token })).rejects.toMatchObject({
      code: "store/batch-invalid",
    });
    expect(await store.listRecords(Q2)).toEqual([]);
  });

  it("still takes unfenced writes (an operator's, a first open) while another holds the lease", async () => {
    const { store } = await fresh();
    await takenOver(store);
    expect(
      await store.append({ query: Q, expectedLastSequence: 1, facts: [passage(Q, 2, 1)] }),
    ).toMatchObject({ ok: true });
    await store.putRecords([review(Q, 1)]);
    expect(await store.readFacts(Q)).toHaveLength(2);
  });

  it("throws store/batch-invalid for a fencing token that is not a positive integer", async () => {
    const { store } = await fresh();
    await store.append({ query: Q, expectedLastSequence: 0, facts: [opened(Q)] });
    for (const token of [0, -1, 1.5, Number.NaN]) {
      await expect(
        store.append({
          query: Q,
          expectedLastSequence: 1,
          facts: [passage(Q, 2, 1)],
          fencingToken: token,
        }),
      ).rejects.toMatchObject({ code: "store/batch-invalid" });
      await expect(store.putRecords([review(Q, 1)], { query: Q, token })).rejects.toMatchObject({
        code: "store/batch-invalid",
      });
    }
    expect(await store.readFacts(Q)).toHaveLength(1);
  });

  it("refuses every write under the old token once a takeover has landed, among writes in flight", async () => {
    const { store } = await fresh();
    await store.append({ query: Q, expectedLastSequence: 0, facts: [opened(Q)] });
    const stale = await tokenOf(store, Q, "worker-a", 1000, t0);
    // worker-a writes 20 records while worker-b takes the loop over.
    const writes = Array.from({ length: 20 }, (_, i) =>
      store.putRecords([review(Q, 100 + i)], { query: Q, token: stale }).then(
        () => "stored" as const,
        (e: { code?: string }) => e.code,
      ),
    );
    const taken = store.acquireLease(Q, "worker-b", 1000, plus(1000));
    const results = await Promise.all(writes);
    expect(await taken).toBeDefined();
    expect(results.every((r) => r === "stored" || r === "store/lease-lost")).toBe(true);
    // What was refused is not there; what was stored is; nothing under the old token lands now.
    const refs = new Set((await store.listRecords(Q)).map((r) => r.ref));
    results.forEach((r, i) => {
      expect(refs.has(review(Q, 100 + i).ref)).toBe(r === "stored");
    });
    await expect(
      store.putRecords([review(Q, 999)], { query: Q, token: stale }),
    ).rejects.toMatchObject({ code: "store/lease-lost" });
  });
}

/** The worker registry: listing with held loops, re-registering, heartbeats, pruning. */
function workerRegistryCases(fresh: () => Promise<ContractSubject>, test: ContractTestApi): void {
  const { expect, it } = test;
  const w = (id: string, pid: number, started: Date) => ({ id, host: "host-1", pid, started });

  it("lists registered workers by id with their heartbeat and the loops they hold", async () => {
    const { store } = await fresh();
    expect(await store.listWorkers()).toEqual([]);
    await store.registerWorker(w("worker-b", 202, t0));
    await store.registerWorker(w("worker-a", 101, plus(5)));
    await tokenOf(store, Q2, "worker-a", 1000, t0);
    await tokenOf(store, Q, "worker-a", 60_000, t0);
    await tokenOf(store, "query:contract-3", "someone-else", 60_000, t0);
    // A drive of worker-b's, by its holder name; worker-bb is someone else.
    await tokenOf(store, "query:contract-4", "worker-b/job-7", 60_000, t0);
    await tokenOf(store, "query:contract-5", "worker-bb", 60_000, t0);
    expect(await store.heartbeatWorker("worker-a", plus(2000))).toBe(true);
    expect(await store.listWorkers()).toEqual([
      {
        id: "worker-a",
        host: "host-1",
        pid: 101,
        started: plus(5),
        lastHeartbeat: plus(2000),
        // Q2's lease has expired, but no one took it: worker-a still holds it.
        loops: [Q, Q2],
      },
      {
        id: "worker-b",
        host: "host-1",
        pid: 202,
        started: t0,
        lastHeartbeat: t0,
        loops: ["query:contract-4"],
      },
    ]);
  });

  it("re-registers a worker in place, answers false to the heartbeat of an unknown one, deregisters", async () => {
    const { store } = await fresh();
    await store.registerWorker(w("worker-a", 101, t0));
    await store.heartbeatWorker("worker-a", plus(100));
    await store.registerWorker({ id: "worker-a", host: "host-2", pid: 303, started: plus(500) });
    expect(await store.listWorkers()).toEqual([
      {
        id: "worker-a",
        host: "host-2",
        pid: 303,
        started: plus(500),
        lastHeartbeat: plus(500),
        loops: [],
      },
    ]);
    expect(await store.heartbeatWorker("worker-x", plus(600))).toBe(false);
    await store.deregisterWorker("worker-a");
    await store.deregisterWorker("worker-a");
    expect(await store.listWorkers()).toEqual([]);
    expect(await store.heartbeatWorker("worker-a", plus(700))).toBe(false);
  });

  it("prunes the workers whose last heartbeat is older than a given time", async () => {
    const { store } = await fresh();
    await store.registerWorker(w("worker-c", 3, t0));
    await store.registerWorker(w("worker-a", 1, t0));
    await store.registerWorker(w("worker-b", 2, t0));
    await store.heartbeatWorker("worker-b", plus(10_000));
    expect(await store.pruneWorkers(plus(5000))).toEqual(["worker-a", "worker-c"]);
    expect((await store.listWorkers()).map((x) => x.id)).toEqual(["worker-b"]);
    // Exactly at the bound is not older.
    expect(await store.pruneWorkers(plus(10_000))).toEqual([]);
    expect(await store.heartbeatWorker("worker-a", plus(10_001))).toBe(false);
  });
}
