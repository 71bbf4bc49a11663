// SQLite schema migrations: from every earlier version (versions 1 and 2 as frozen files written by
// them), in one transaction, and a store written by a newer version refused.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { LATEST_SCHEMA_VERSION } from "../../src/adapters/store/schema-version.js";
import {
  migrateSqlite,
  openSqliteLedgerStore,
} from "../../src/adapters/store/sqlite-ledger-store.js";
import { chainHash, GENESIS_HASH } from "../../src/core/loop/chain.js";
import { passage, proposal } from "../../src/testing/contracts/facts.js";
import { memoryRecord, memoryVersion } from "../../src/testing/contracts/memory.js";
import { repoRoot } from "../helpers/cli.js";

const FIXTURE_V1 = path.join(repoRoot, "test/fixtures/store/v1.sqlite");
const FIXTURE_V2 = path.join(repoRoot, "test/fixtures/store/v2.sqlite");
const Q = "query:fixture-v1";
const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-migrate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

function copyOf(fixture: string): string {
  const file = path.join(dir, `fixture-${++n}.db`);
  copyFileSync(fixture, file);
  return file;
}

function copyOfV1(): string {
  return copyOf(FIXTURE_V1);
}

function version(file: string): string | undefined {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db.prepare("SELECT value FROM warrant_meta WHERE key = 'schema_version'").get() as
        | { value: string }
        | undefined
    )?.value;
  } finally {
    db.close();
  }
}

function tables(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    ).map((r) => r.name);
  } finally {
    db.close();
  }
}

function schemaSql(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db
        .prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name")
        .all() as { sql: string }[]
    ).map((r) => r.sql.replace(/\s+/g, " ").trim());
  } finally {
    db.close();
  }
}

function setVersion(file: string, value: string): void {
  const db = new Database(file);
  db.prepare("UPDATE warrant_meta SET value = ? WHERE key = 'schema_version'").run(value);
  db.close();
}

describe("SQLite migrations", () => {
  it("the version 1 fixture is what step 1 still creates (step 1 is frozen)", () => {
    const file = path.join(dir, "fresh-v1.db");
    const db = new Database(file);
    migrateSqlite(db, "sqlite:fresh-v1", 1);
    db.close();
    expect(version(file)).toBe("1");
    expect(schemaSql(file)).toEqual(schemaSql(FIXTURE_V1));
  });

  it("the version 2 fixture is what steps 1 and 2 still create (step 2 is frozen)", () => {
    const file = path.join(dir, "fresh-v2.db");
    const db = new Database(file);
    migrateSqlite(db, "sqlite:fresh-v2", 2);
    db.close();
    expect(version(file)).toBe("2");
    expect(schemaSql(file)).toEqual(schemaSql(FIXTURE_V2));
  });

  it("migrates a version 2 store to the latest: its lease gets token 1, later grants go above it", async () => {
    const file = copyOf(FIXTURE_V2);
    expect(version(file)).toBe("2");
    const store = openSqliteLedgerStore(file);
    expect(version(file)).toBe(String(LATEST_SCHEMA_VERSION));
    expect((await store.readFacts(Q)).map((s) => s.fact.sequence)).toEqual([1, 2, 3]);
    expect(await store.readOperatorActs(Q)).toHaveLength(1);
    const until = new Date("2026-12-01T10:01:10.000Z");
    expect(await store.leases()).toEqual([{ query: Q, holder: "worker-v2", token: 1, until }]);
    // The holder from before the upgrade writes under token 1 until another takes the loop.
    expect(
      await store.append({
        query: Q,
        expectedLastSequence: 3,
        facts: [passage(Q, 4, 2)],
        fencingToken: 1,
      }),
    ).toMatchObject({ ok: true });
    const taken = await store.acquireLease(Q, "worker-v3", 1000, until);
    expect(taken?.token).toBe(2);
    await expect(store.putRecords([proposal(Q, 2)], { query: Q, token: 1 })).rejects.toMatchObject({
      code: "store/lease-lost",
    });
    await store.registerWorker({ id: "worker-v3", host: "h", pid: 1, started: until });
    expect((await store.listWorkers())[0]?.loops).toEqual([Q]);
    await store.close();
  });

  it("migrates a version 1 store to the latest, keeping its facts, chain and records", async () => {
    const file = copyOfV1();
    expect(version(file)).toBe("1");
    const store = openSqliteLedgerStore(file);
    expect(version(file)).toBe(String(LATEST_SCHEMA_VERSION));
    const facts = await store.readFacts(Q);
    expect(facts.map((s) => s.fact.sequence)).toEqual([1, 2, 3]);
    let prev = GENESIS_HASH;
    for (const s of facts) {
      expect(s.hash).toBe(chainHash(prev, s.fact));
      prev = s.hash;
    }
    expect(await store.readRecord(proposal(Q, 1).ref)).toEqual(proposal(Q, 1));
    // What version 2 added works on the migrated store, and the chain goes on.
    await store.postOperatorAct({
      query: Q,
      kind: "answer",
      target: "question:1",
      text: "yes",
      operator: "node-operator-binding:alice",
      at: "2026-12-01T10:00:09Z",
    });
    expect(await store.readOperatorActs(Q)).toHaveLength(1);
    expect((await store.acquireLease(Q, "w", 1000, new Date()))?.token).toBe(1);
    const next = await store.append({
      query: Q,
      expectedLastSequence: 3,
      facts: [passage(Q, 4, 2)],
    });
    expect(next.ok && next.stored[0]?.hash).toBe(chainHash(prev, passage(Q, 4, 2)));
    await store.close();
  });

  it("migrates an empty file (version 0) straight to the latest", async () => {
    const file = path.join(dir, "empty.db");
    new Database(file).close();
    const store = openSqliteLedgerStore(file);
    await store.close();
    expect(version(file)).toBe(String(LATEST_SCHEMA_VERSION));
    expect(tables(file)).toEqual([
      "sqlite_sequence",
      "warrant_facts",
      "warrant_lease_tokens",
      "warrant_leases",
      "warrant_memory",
      "warrant_meta",
      "warrant_operator_acts",
      "warrant_records",
      "warrant_workers",
    ]);
  });

  it("reopening a store at the latest version changes nothing", async () => {
    const file = copyOf(FIXTURE_V2);
    await openSqliteLedgerStore(file).close();
    const before = schemaSql(file);
    await openSqliteLedgerStore(file).close();
    expect(schemaSql(file)).toEqual(before);
  });

  it("migrates a version 4 store to the latest: its loops stay, and writable memory works", async () => {
    const file = path.join(dir, "v4.db");
    const db = new Database(file);
    migrateSqlite(db, `sqlite:${file}`, 4);
    db.close();
    expect(version(file)).toBe("4");
    expect(tables(file)).not.toContain("warrant_memory");
    const store = openSqliteLedgerStore(file);
    expect(version(file)).toBe(String(LATEST_SCHEMA_VERSION));
    const v1 = memoryVersion(1, "remembered", "passage:p1");
    expect(await store.appendMemory(v1, memoryRecord(v1))).toBe(true);
    expect((await store.readMemory(v1.key, "passage:p2")).latest?.content).toBe("remembered");
    await store.close();
  });

  it("applies step 3 in one transaction: a failing statement leaves a version 2 store as it was", () => {
    const file = copyOf(FIXTURE_V2);
    const before = schemaSql(file);
    const db = new Database(file);
    // Something in the way of step 3's last table: its earlier statements are undone too.
    db.exec("CREATE TABLE warrant_workers (x INTEGER)");
    db.close();
    const withBlocker = schemaSql(file);
    expect(() => openSqliteLedgerStore(file)).toThrow();
    expect(version(file)).toBe("2");
    expect(schemaSql(file)).toEqual(withBlocker);
    expect(withBlocker.filter((sql) => !before.includes(sql))).toHaveLength(1);
    expect(tables(file)).not.toContain("warrant_lease_tokens");
  });

  it("applies a version's steps in one transaction: a failing step leaves the store as it was", () => {
    const file = copyOfV1();
    const db = new Database(file);
    // Something in the way of step 2's second table: step 2 fails after creating its first one.
    db.exec("CREATE TABLE warrant_leases (x INTEGER)");
    db.close();
    expect(() => openSqliteLedgerStore(file)).toThrow();
    expect(version(file)).toBe("1");
    expect(tables(file)).not.toContain("warrant_operator_acts");
  });

  it("refuses a store written by a newer version with store/version-too-new, untouched", () => {
    const file = copyOfV1();
    setVersion(file, String(LATEST_SCHEMA_VERSION + 1));
    const before = schemaSql(file);
    let error: unknown;
    try {
      openSqliteLedgerStore(file, { uri: "sqlite:newer.db" });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "store/version-too-new" });
    const message = (error as Error).message;
    expect(message).toContain(`schema version ${LATEST_SCHEMA_VERSION + 1}`);
    expect(message).toContain(`up to ${LATEST_SCHEMA_VERSION}`);
    expect(message).toContain("sqlite:newer.db");
    expect(message).toMatch(/Upgrade warrant/);
    expect(version(file)).toBe(String(LATEST_SCHEMA_VERSION + 1));
    expect(schemaSql(file)).toEqual(before);
  });

  it("refuses a schema version that is not a number with store/version-invalid", () => {
    const file = copyOfV1();
    setVersion(file, "two");
    expect(() => openSqliteLedgerStore(file)).toThrow(
      expect.objectContaining({ code: "store/version-invalid" }),
    );
  });

  it("refuses a file that is not a SQLite database with store/unreadable", () => {
    const file = path.join(dir, "not-a-db.db");
    writeFileSync(
      file,
      "this is not a database, just text long enough to fill a header ".repeat(4),
    );
    expect(() => openSqliteLedgerStore(file)).toThrow(
      expect.objectContaining({ code: "store/unreadable" }),
    );
  });
});
