// The lease rules every store applies (src/adapters/store/lease-rules.ts): who gets a lease and
// under which token, at the expiry instant exactly; which tokens a fenced write may carry; which
// holders belong to a worker; and what a refused write says.
import { describe, expect, it } from "vitest";
import {
  assertToken,
  decideLease,
  heldBy,
  leaseLost,
} from "../../src/adapters/store/lease-rules.js";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { WarrantError } from "../../src/core/result.js";

const NOW = 1_000_000;

describe("decideLease", () => {
  it("a free loop is taken under the token after the last one granted", () => {
    expect(decideLease(undefined, 0, "w1", NOW)).toEqual({ kind: "take", token: 1 });
    expect(decideLease(undefined, 5, "w1", NOW)).toEqual({ kind: "take", token: 6 });
  });
  it("its holder extends it under the same token, live or expired", () => {
    const held = { holder: "w1", token: 4, expiresAt: NOW + 10 };
    expect(decideLease(held, 4, "w1", NOW)).toEqual({ kind: "extend", token: 4 });
    expect(decideLease({ ...held, expiresAt: NOW - 10 }, 9, "w1", NOW)).toEqual({
      kind: "extend",
      token: 4,
    });
  });
  it("another holder is refused while the lease is live, up to its last millisecond", () => {
    const held = { holder: "w1", token: 4, expiresAt: NOW + 1 };
    expect(decideLease(held, 4, "w2", NOW)).toEqual({ kind: "refused" });
  });
  it("another holder takes it from the expiry instant on, under a new token", () => {
    const held = { holder: "w1", token: 4, expiresAt: NOW };
    expect(decideLease(held, 4, "w2", NOW)).toEqual({ kind: "take", token: 5 });
    expect(decideLease({ ...held, expiresAt: NOW - 1 }, 4, "w2", NOW)).toEqual({
      kind: "take",
      token: 5,
    });
  });
  it("the new token is past both the last granted and the expired lease's", () => {
    const held = { holder: "w1", token: 7, expiresAt: NOW - 1 };
    expect(decideLease(held, 3, "w2", NOW)).toEqual({ kind: "take", token: 8 });
    expect(decideLease(held, 11, "w2", NOW)).toEqual({ kind: "take", token: 12 });
  });
});

describe("assertToken", () => {
  it("accepts a positive safe integer, from 1 to the largest", () => {
    expect(() => assertToken(1)).not.toThrow();
    expect(() => assertToken(42)).not.toThrow();
    expect(() => assertToken(Number.MAX_SAFE_INTEGER)).not.toThrow();
  });
  it.each<unknown>([
    0,
    -1,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    2 ** 53,
    "1",
    undefined,
    null,
  ])("refuses %s as a caller bug: store/batch-invalid", (token) => {
    let thrown: unknown;
    try {
      assertToken(token);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(WarrantError);
    expect((thrown as WarrantError).code).toBe("store/batch-invalid");
  });
});

describe("heldBy", () => {
  it("is the worker's id or one of its drives", () => {
    expect(heldBy("worker-1", "worker-1")).toBe(true);
    expect(heldBy("worker-1/drive-2", "worker-1")).toBe(true);
  });
  it("is not another worker whose id extends this one's, nor a prefix of it", () => {
    expect(heldBy("worker-10", "worker-1")).toBe(false);
    expect(heldBy("worker-10/drive-2", "worker-1")).toBe(false);
    expect(heldBy("worker-1drive", "worker-1")).toBe(false);
    expect(heldBy("worker", "worker-1")).toBe(false);
    expect(heldBy("worker-1", "worker-1/drive-2")).toBe(false);
  });
});

describe("leaseLost", () => {
  it("is store/lease-lost and says who holds the lease now, if anyone", () => {
    const taken = leaseLost("query:q", 3, { holder: "worker-b", token: 4 });
    expect(taken).toBeInstanceOf(WarrantError);
    expect(taken.code).toBe("store/lease-lost");
    expect(taken.message).toContain("worker-b");
    expect(taken.message).toContain("token 4");
    const free = leaseLost("query:q", 3, undefined);
    expect(free.code).toBe("store/lease-lost");
    expect(free.message).toContain("no lease is held");
    expect(free.message).not.toContain("undefined");
  });
});

describe("releasing in the memory store", () => {
  it("a loop no one holds is released without error; another holder's lease is kept", async () => {
    const store = new MemoryLedgerStore();
    await expect(store.releaseLease("query:free", "worker-a")).resolves.toBeUndefined();
    await store.acquireLease("query:held", "worker-b", 1000, new Date(NOW));
    await store.releaseLease("query:held", "worker-a");
    expect((await store.leases()).map((l) => l.holder)).toEqual(["worker-b"]);
  });
});
