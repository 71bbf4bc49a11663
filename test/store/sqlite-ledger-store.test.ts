// The SQLite store against the shared LedgerStore contract, plus what only SQLite has: its pragmas,
// group commit, and the lock another connection holds past the busy timeout.

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import * as vitest from "vitest";
import { afterAll, describe, expect, it } from "vitest";
import { LATEST_SCHEMA_VERSION } from "../../src/adapters/store/schema-version.js";
import { openSqliteLedgerStore } from "../../src/adapters/store/sqlite-ledger-store.js";
import { opened, passage, review } from "../../src/testing/contracts/facts.js";
import { ledgerStoreContract } from "../../src/testing.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-sqlite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

ledgerStoreContract(
  "sqlite",
  async () => {
    const file = path.join(dir, `contract-${++n}.db`);
    return {
      store: openSqliteLedgerStore(file),
      reopen: async () => openSqliteLedgerStore(file),
    };
  },
  vitest,
);

describe("SQLite group commit", () => {
  it("applies appends issued together in the order they were issued", async () => {
    const store = openSqliteLedgerStore(path.join(dir, "group-order.db"));
    const q = "query:order";
    const outcomes = await Promise.all([
      store.append({ query: q, expectedLastSequence: 0, facts: [opened(q)] }),
      store.append({ query: q, expectedLastSequence: 1, facts: [passage(q, 2, 1)] }),
      store.append({ query: q, expectedLastSequence: 2, facts: [passage(q, 3, 2)] }),
    ]);
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, true]);
    expect((await store.readFacts(q)).map((s) => s.fact.sequence)).toEqual([1, 2, 3]);
    await store.close();
  });

  it("commits appends still waiting when the store is closed", async () => {
    const file = path.join(dir, "group-close.db");
    const store = openSqliteLedgerStore(file);
    const pending = store.append({
      query: "query:c",
      expectedLastSequence: 0,
      facts: [opened("query:c")],
    });
    await store.close();
    expect(await pending).toMatchObject({ ok: true });
    const again = openSqliteLedgerStore(file);
    expect(await again.readFacts("query:c")).toHaveLength(1);
    await again.close();
  });

  it("rejects every append of a group whose lock stays busy past the retry window, storing none", async () => {
    const file = path.join(dir, "group-busy.db");
    const retries: string[] = [];
    const store = openSqliteLedgerStore(file, {
      busyTimeoutMs: 20,
      retry: { windowMs: 300, onRetry: (e) => retries.push(e.operation) },
    });
    const blocker = new Database(file);
    blocker.exec("BEGIN IMMEDIATE");
    const results = await Promise.allSettled([
      store.append({ query: "query:b1", expectedLastSequence: 0, facts: [opened("query:b1")] }),
      store.append({ query: "query:b2", expectedLastSequence: 0, facts: [opened("query:b2")] }),
    ]);
    expect(results).toMatchObject([
      { status: "rejected", reason: { code: "store/busy" } },
      { status: "rejected", reason: { code: "store/busy" } },
    ]);
    // It was tried again before giving up.
    expect(retries.length).toBeGreaterThan(0);
    expect(new Set(retries)).toEqual(new Set(["append"]));
    blocker.exec("ROLLBACK");
    blocker.close();
    expect(await store.listLoops()).toEqual([]);
    await store.close();
  });

  it("retries appends, record writes and leases whose lock is busy until it is free, in order", async () => {
    const file = path.join(dir, "busy-then-free.db");
    const retried = new Set<string>();
    const store = openSqliteLedgerStore(file, {
      busyTimeoutMs: 20,
      retry: { windowMs: 30_000, onRetry: (e) => retried.add(e.operation) },
    });
    const blocker = new Database(file);
    blocker.exec("BEGIN IMMEDIATE");
    const q = "query:busy";
    const writes = Promise.all([
      store.append({ query: q, expectedLastSequence: 0, facts: [opened(q)] }),
      store.append({ query: q, expectedLastSequence: 1, facts: [passage(q, 2, 1)] }),
      store.putRecords([review(q, 1)]),
      store.acquireLease(q, "worker-a", 60_000, new Date()),
    ]);
    // The other connection holds the write lock well past the busy timeout, then lets go (real
    // time: SQLite's busy handler sleeps in native code, out of reach of fake timers).
    await new Promise((resolve) => setTimeout(resolve, 400));
    blocker.exec("ROLLBACK");
    blocker.close();
    const [first, second, , lease] = await writes;
    expect(first).toMatchObject({ ok: true });
    expect(second).toMatchObject({ ok: true });
    expect(lease).toBeDefined();
    expect((await store.readFacts(q)).map((s) => s.fact.sequence)).toEqual([1, 2]);
    expect(await store.listRecords(q)).toEqual([review(q, 1)]);
    expect(retried).toEqual(new Set(["append", "putRecords", "acquireLease"]));
    await store.close();
  });
});

describe("SQLite store settings", () => {
  it("opens in WAL mode with synchronous=FULL and the busy timeout asked for", async () => {
    const file = path.join(dir, "pragmas.db");
    const store = openSqliteLedgerStore(file, { busyTimeoutMs: 1234 });
    expect(store.uri).toBe(`sqlite:${file}`);
    expect(store.settings()).toEqual({
      journalMode: "wal",
      synchronous: "full",
      busyTimeoutMs: 1234,
    });
    await store.close();
    const db = new Database(file, { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.prepare("SELECT value FROM warrant_meta WHERE key = 'schema_version'").get()).toEqual(
      { value: String(LATEST_SCHEMA_VERSION) },
    );
    db.close();
  });

  it("waits 10 s for another writer's lock by default", async () => {
    const store = openSqliteLedgerStore(path.join(dir, "default-timeout.db"));
    expect(store.settings().busyTimeoutMs).toBe(10_000);
    await store.close();
  });
});
