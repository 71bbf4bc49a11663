// The fenced view a drive writes through: its appends and record writes carry the lease's token;
// the first refusal (or a revoke) is reported once and every later write is refused without
// reaching the store; a write to another loop is a caller bug; everything else passes through.
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { fencedStore } from "../../src/core/loop/fenced-store.js";
import { WarrantError } from "../../src/core/result.js";
import { opened, passage, review } from "../../src/testing/contracts/facts.js";
import { memoryRecord, memoryVersion } from "../../src/testing/contracts/memory.js";

const Q = "query:fenced";
const t0 = new Date("2026-12-01T10:00:00.000Z");

/** A memory store with Q opened and leased by worker-a, counting the writes (and closes) that reach it. */
async function leased() {
  const store = new MemoryLedgerStore();
  await store.append({ query: Q, expectedLastSequence: 0, facts: [opened(Q)] });
  const token = (await store.acquireLease(Q, "worker-a", 1000, t0))?.token ?? 0;
  const reached: string[] = [];
  const counting = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (prop === "append" || prop === "putRecords" || prop === "close") reached.push(prop);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const losses: WarrantError[] = [];
  const view = fencedStore(counting, { query: Q, token }, (e) => losses.push(e));
  return { store, view, token, reached, losses };
}

describe("fencedStore", () => {
  it("writes under the lease's token while it holds", async () => {
    const { store, view, token } = await leased();
    expect(view.fence).toEqual({ query: Q, token });
    expect(
      await view.append({ query: Q, expectedLastSequence: 1, facts: [passage(Q, 2, 1)] }),
    ).toMatchObject({ ok: true });
    await view.putRecords([review(Q, 1)]);
    expect(await store.readFacts(Q)).toHaveLength(2);
    expect(await view.listRecords(Q)).toEqual([review(Q, 1)]);
    expect(view.lost).toBeUndefined();
  });

  it("reports the store's refusal once, then refuses every write without reaching the store", async () => {
    const { store, view, reached, losses } = await leased();
    await store.acquireLease(Q, "worker-b", 1000, new Date(t0.getTime() + 1000));
    await expect(
      view.append({ query: Q, expectedLastSequence: 1, facts: [passage(Q, 2, 1)] }),
    ).rejects.toMatchObject({ code: "store/lease-lost" });
    expect(losses.map((e) => e.code)).toEqual(["store/lease-lost"]);
    expect(view.lost?.code).toBe("store/lease-lost");
    const before = reached.length;
    await expect(view.putRecords([review(Q, 1)])).rejects.toMatchObject({
      code: "store/lease-lost",
    });
    await expect(
      view.append({ query: Q, expectedLastSequence: 1, facts: [passage(Q, 2, 1)] }),
    ).rejects.toMatchObject({ code: "store/lease-lost" });
    expect(reached).toHaveLength(before);
    expect(losses).toHaveLength(1);
    expect(await store.readFacts(Q)).toHaveLength(1);
  });

  it("refuses every write once revoked, keeping the first reason", async () => {
    const { store, view, reached, losses } = await leased();
    const why = new WarrantError("store/lease-lost", "the renewal failed");
    view.revoke(why);
    view.revoke(new WarrantError("store/lease-lost", "a second reason"));
    expect(losses).toEqual([why]);
    await expect(view.putRecords([review(Q, 1)])).rejects.toMatchObject({
      code: "store/lease-lost",
      message: "the renewal failed",
    });
    expect(reached).toEqual([]);
    expect(await store.listRecords(Q)).toEqual([]);
    // Reads and operator acts still pass.
    expect(await view.readFacts(Q)).toHaveLength(1);
    await view.postOperatorAct({
      query: Q,
      kind: "deny",
      target: "run:1 step:1",
      operator: "node-operator-binding:alice",
      at: "2026-12-01T10:00:09Z",
    });
    expect(await store.readOperatorActs(Q)).toHaveLength(1);
  });

  it("refuses a write to another loop as a caller bug, without revoking", async () => {
    const { view, reached, losses } = await leased();
    const other = "query:other";
    await expect(
      view.append({ query: other, expectedLastSequence: 0, facts: [opened(other)] }),
    ).rejects.toMatchObject({ code: "store/batch-invalid" });
    await expect(view.putRecords([review(other, 1)])).rejects.toMatchObject({
      code: "store/batch-invalid",
    });
    expect(reached).toEqual([]);
    expect(losses).toEqual([]);
    expect(view.lost).toBeUndefined();
  });

  it("does not close the store it views", async () => {
    const { view, reached } = await leased();
    await view.close();
    expect(reached).toEqual([]);
    expect(await view.leases()).toHaveLength(1);
  });
});

describe("fencedStore passes the rest through", () => {
  /** A view of "query:memory-1" (the loop of the memory fixtures) over a store that logs calls. */
  async function logged() {
    const MQ = "query:memory-1";
    const store = new MemoryLedgerStore();
    await store.append({ query: MQ, expectedLastSequence: 0, facts: [opened(MQ)] });
    const token = (await store.acquireLease(MQ, "worker-a", 1000, t0))?.token ?? 0;
    const calls: Array<[string, unknown[]]> = [];
    const counting = new Proxy(store, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== "function") return v;
        return (...args: unknown[]) => {
          calls.push([String(prop), args]);
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { MQ, store, token, calls, view: fencedStore(counting, { query: MQ, token }) };
  }

  it("reads facts, records, loops and raw rows from the store, with their arguments", async () => {
    const { MQ, view, store, calls } = await logged();
    await view.append({ query: MQ, expectedLastSequence: 1, facts: [passage(MQ, 2, 1)] });
    await view.putRecords([review(MQ, 1)]);
    expect(view.uri).toBe("memory:");
    expect(await view.readFacts(MQ, 1)).toEqual(await store.readFacts(MQ, 1));
    expect(await view.readFacts(MQ, 1)).toHaveLength(1);
    expect(calls).toContainEqual(["readFacts", [MQ, 1]]);
    const ref = review(MQ, 1).ref;
    expect(await view.readRecord(ref)).toEqual(review(MQ, 1));
    expect(await view.listRecords(MQ)).toEqual([review(MQ, 1)]);
    expect(await view.listLoops()).toEqual(await store.listLoops());
    expect((await view.listLoops()).map((l) => l.query)).toEqual([MQ]);
    expect(await view.readRawLoop(MQ)).toEqual(await store.readRawLoop(MQ));
    expect((await view.readRawLoop(MQ)).facts).toHaveLength(2);
  });

  it("posts and reads operator acts through the store", async () => {
    const { MQ, view, store } = await logged();
    const act = {
      query: MQ,
      kind: "approve" as const,
      target: "run:1 step:1",
      operator: "node-operator-binding:alice",
      at: "2026-12-01T10:00:09Z",
    };
    expect(await view.postOperatorAct(act)).toEqual({ posted: true });
    expect(await view.postOperatorAct({ ...act, kind: "deny" })).toEqual({
      posted: false,
      counting: act,
    });
    expect(await view.readOperatorActs(MQ)).toEqual([act]);
    expect(await store.readOperatorActs(MQ)).toEqual([act]);
  });

  it("acquires, renews, lists and releases leases in the store", async () => {
    const { MQ, view, store, token } = await logged();
    const Q2 = "query:memory-2";
    expect(await view.renewLease(MQ, "worker-a", token, 5000, t0)).toBe(true);
    expect(await view.renewLease(MQ, "worker-a", token + 1, 5000, t0)).toBe(false);
    expect(await view.acquireLease(Q2, "worker-b", 1000, t0)).toEqual({ token: 1 });
    expect(await view.acquireLease(Q2, "worker-c", 1000, t0)).toBeUndefined();
    expect(await view.leases()).toEqual(await store.leases());
    expect((await view.leases()).map((l) => [l.holder, l.until.getTime()])).toEqual([
      ["worker-a", t0.getTime() + 5000],
      ["worker-b", t0.getTime() + 1000],
    ]);
    await view.releaseLease(Q2, "worker-b");
    expect((await store.leases()).map((l) => l.query)).toEqual([MQ]);
  });

  it("registers, beats, lists, prunes and deregisters workers in the store", async () => {
    const { view, store } = await logged();
    const started = new Date(t0.getTime() - 1000);
    await view.registerWorker({ id: "worker-a", host: "h", pid: 1, started });
    await view.registerWorker({ id: "worker-z", host: "h", pid: 2, started });
    expect(await view.heartbeatWorker("worker-a", new Date(t0.getTime() + 500))).toBe(true);
    expect(await view.heartbeatWorker("worker-x", t0)).toBe(false);
    expect(await view.listWorkers()).toEqual(await store.listWorkers());
    expect((await view.listWorkers()).map((w) => w.id)).toEqual(["worker-a", "worker-z"]);
    expect(await view.pruneWorkers(new Date(t0.getTime() + 100))).toEqual(["worker-z"]);
    await view.deregisterWorker("worker-a");
    expect(await store.listWorkers()).toEqual([]);
  });

  it("writes memory under the lease's token and reads it back; refuses another loop's", async () => {
    const { MQ, view, store, calls, token } = await logged();
    const v1 = memoryVersion(1, "first", "passage:p1");
    expect(await view.appendMemory(v1, memoryRecord(v1))).toBe(true);
    expect(calls.find(([name]) => name === "appendMemory")?.[1][2]).toEqual({ query: MQ, token });
    expect(await view.readMemory(v1.key, "passage:p2")).toEqual(
      await store.readMemory(v1.key, "passage:p2"),
    );
    expect((await view.readMemory(v1.key, "passage:p2")).latest).toEqual(v1);
    const foreign = { ...memoryVersion(2, "other", "passage:p2"), query: "query:other" };
    await expect(view.appendMemory(foreign, memoryRecord(foreign, v1))).rejects.toMatchObject({
      code: "store/batch-invalid",
    });
    // A lost lease refuses memory writes too.
    await store.acquireLease(MQ, "worker-b", 1000, new Date(t0.getTime() + 1000));
    const v2 = memoryVersion(2, "second", "passage:p2");
    await expect(view.appendMemory(v2, memoryRecord(v2, v1))).rejects.toMatchObject({
      code: "store/lease-lost",
    });
    expect(view.lost?.code).toBe("store/lease-lost");
  });

  it("keeps the store's host key, and has none when the store has none", async () => {
    const { view, store } = await logged();
    expect(await view.recordHostKey?.("key-1")).toBe("key-1");
    expect(await view.recordHostKey?.("key-2")).toBe("key-1");
    expect(await view.hostKey?.()).toBe("key-1");
    expect(await store.hostKey()).toBe("key-1");
    const bare = fencedStore(
      new Proxy(store, {
        get: (target, prop, receiver) =>
          prop === "hostKey" || prop === "recordHostKey"
            ? undefined
            : Reflect.get(target, prop, receiver),
      }),
      { query: "query:memory-1", token: 1 },
    );
    expect(bare.hostKey).toBeUndefined();
    expect(bare.recordHostKey).toBeUndefined();
    expect("hostKey" in bare).toBe(false);
  });

  it("a refusal other than a lost lease is thrown as it is and revokes nothing", async () => {
    const { MQ, view, store } = await logged();
    await expect(
      view.append({ query: MQ, expectedLastSequence: 5, facts: [passage(MQ, 6, 1)] }),
    ).resolves.toMatchObject({ ok: false });
    await view.putRecords([review(MQ, 1)]);
    const changed = { ...review(MQ, 1), body: { other: true } };
    const thrown = await view.putRecords([changed]).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(WarrantError);
    expect((thrown as WarrantError).code).not.toBe("store/lease-lost");
    expect(view.lost).toBeUndefined();
    expect(await view.putRecords([review(MQ, 2)])).toBeUndefined();
    expect(await store.listRecords(MQ)).toHaveLength(2);
  });

  it("a write refused after a loss carries the loss as its cause", async () => {
    const { MQ, view } = await logged();
    const why = new WarrantError("store/lease-lost", "the renewal failed");
    view.revoke(why);
    const thrown = await view
      .append({ query: MQ, expectedLastSequence: 1, facts: [passage(MQ, 2, 1)] })
      .catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(WarrantError);
    expect((thrown as WarrantError).code).toBe("store/lease-lost");
    expect((thrown as WarrantError).cause).toBe(why);
  });
});
