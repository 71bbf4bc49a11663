// The SQLite store against the shared LedgerStore contract, plus what only SQLite has: its pragmas.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { LATEST_SCHEMA_VERSION } from "../../src/adapters/store/schema-version.js";
import { openSqliteLedgerStore } from "../../src/adapters/store/sqlite-ledger-store.js";
import { opened, passage } from "./facts.js";
import { ledgerStoreContract } from "./ledger-store-contract.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-sqlite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

ledgerStoreContract("sqlite", async () => {
  const file = path.join(dir, `contract-${++n}.db`);
  return {
    store: openSqliteLedgerStore(file),
    reopen: async () => openSqliteLedgerStore(file),
  };
});

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

  it("rejects every append of a group whose transaction cannot start, storing none", async () => {
    const file = path.join(dir, "group-busy.db");
    const store = openSqliteLedgerStore(file, { busyTimeoutMs: 50 });
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
    blocker.exec("ROLLBACK");
    blocker.close();
    expect(await store.listLoops()).toEqual([]);
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
      {
        value: String(LATEST_SCHEMA_VERSION),
      },
    );
    db.close();
  });

  it("waits 10 s for another writer's lock by default", async () => {
    const store = openSqliteLedgerStore(path.join(dir, "default-timeout.db"));
    expect(store.settings().busyTimeoutMs).toBe(10_000);
    await store.close();
  });
});
