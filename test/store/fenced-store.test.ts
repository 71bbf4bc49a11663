// The fenced view a drive writes through: its appends and record writes carry the lease's token;
// the first refusal (or a revoke) is reported once and every later write is refused without
// reaching the store; a write to another loop is a caller bug; everything else passes through.
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { fencedStore } from "../../src/core/loop/fenced-store.js";
import { WarrantError } from "../../src/core/result.js";
import { opened, passage, review } from "../../src/testing/contracts/facts.js";

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
