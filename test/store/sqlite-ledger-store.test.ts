// The SQLite store against the shared LedgerStore contract, plus what only SQLite has: its pragmas.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteLedgerStore } from "../../src/adapters/store/sqlite-ledger-store.js";
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
        value: "2",
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
