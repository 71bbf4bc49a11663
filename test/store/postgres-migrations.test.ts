// PostgreSQL schema migrations: from every earlier version (versions 1 and 2 as frozen SQL scripts
// of what they wrote), in one transaction, and a store written by a newer version refused.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { openPostgresLedgerStore } from "../../src/adapters/store/postgres-ledger-store.js";
import { LATEST_SCHEMA_VERSION } from "../../src/adapters/store/schema-version.js";
import { chainHash, GENESIS_HASH } from "../../src/core/loop/chain.js";
import { opened, passage, proposal } from "../../src/testing/contracts/facts.js";
import { repoRoot } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";

const FIXTURE_V1 = readFileSync(path.join(repoRoot, "test/fixtures/store/v1.postgres.sql"), "utf8");
const FIXTURE_V2 = readFileSync(path.join(repoRoot, "test/fixtures/store/v2.postgres.sql"), "utf8");
const Q = "query:fixture-v1";
const pg = await postgresForTests();
const schemas = new TestSchemas(pg.url, "migrate");
afterAll(() => (pg.enabled ? schemas.dropAll() : undefined));

/** A fresh schema holding what a version wrote (its fixture script); returns its store URI. */
async function fixtureStore(script: string): Promise<string> {
  const uri = schemas.uri();
  const name = TestSchemas.schemaOf(uri);
  await schemas.sql(`CREATE SCHEMA "${name}"; SET search_path TO "${name}"; ${script}`);
  return uri;
}

const v1Store = () => fixtureStore(FIXTURE_V1);

/** A fresh schema migrated by this code up to `target` only. */
async function migratedTo(target: number): Promise<string> {
  const uri = schemas.uri();
  const store = await openPostgresLedgerStore(new URL(pg.url).toString(), {
    uri,
    schema: TestSchemas.schemaOf(uri),
    targetVersion: target,
  });
  await store.close();
  return uri;
}

async function version(uri: string): Promise<string | undefined> {
  const rows = await schemas.sql<{ value: string }>(
    `SELECT value FROM "${TestSchemas.schemaOf(uri)}".warrant_meta WHERE key = 'schema_version'`,
  );
  return rows[0]?.value;
}

async function tables(uri: string): Promise<string[]> {
  const rows = await schemas.sql<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
    [TestSchemas.schemaOf(uri)],
  );
  return rows.map((r) => r.table_name);
}

/** Columns, constraints and indexes of a schema, with the schema's own name taken out. */
async function shape(
  uri: string,
): Promise<{ columns: unknown[]; indexes: string[]; checks: unknown[] }> {
  const name = TestSchemas.schemaOf(uri);
  const columns = await schemas.sql(
    "SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity " +
      "FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position",
    [name],
  );
  const indexes = await schemas.sql<{ indexdef: string }>(
    "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname",
    [name],
  );
  const checks = await schemas.sql(
    "SELECT conname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c " +
      "JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1 ORDER BY conname",
    [name],
  );
  return { columns, indexes: indexes.map((i) => i.indexdef.replaceAll(name, "S")), checks };
}

describe.skipIf(!pg.enabled)("PostgreSQL migrations", () => {
  it("the version 1 fixture is what step 1 still creates (step 1 is frozen)", async () => {
    const fixture = await v1Store();
    const uri = await migratedTo(1);
    expect(await version(uri)).toBe("1");
    const frozen = await shape(fixture);
    expect(frozen.columns).toHaveLength(13);
    expect(frozen.indexes).toHaveLength(5);
    expect(await shape(uri)).toEqual(frozen);
  });

  it("the version 2 fixture is what steps 1 and 2 still create (step 2 is frozen)", async () => {
    const fixture = await fixtureStore(FIXTURE_V2);
    const uri = await migratedTo(2);
    expect(await version(uri)).toBe("2");
    const frozen = await shape(fixture);
    expect(frozen.columns).toHaveLength(23);
    expect(await shape(uri)).toEqual(frozen);
  });

  it("migrates a version 2 store to the latest: its lease gets token 1, later grants go above it", async () => {
    const uri = await fixtureStore(FIXTURE_V2);
    expect(await version(uri)).toBe("2");
    const store = await openStore(uri);
    expect(await version(uri)).toBe(String(LATEST_SCHEMA_VERSION));
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
    expect((await store.acquireLease(Q, "worker-v3", 1000, until))?.token).toBe(2);
    await expect(store.putRecords([proposal(Q, 2)], { query: Q, token: 1 })).rejects.toMatchObject({
      code: "store/lease-lost",
    });
    await store.registerWorker({ id: "worker-v3", host: "h", pid: 1, started: until });
    expect((await store.listWorkers())[0]?.loops).toEqual([Q]);
    await store.close();
  });

  it("applies step 3 in one transaction: a failing statement leaves a version 2 store as it was", async () => {
    const uri = await fixtureStore(FIXTURE_V2);
    await schemas.sql(`CREATE TABLE "${TestSchemas.schemaOf(uri)}".warrant_workers (x INTEGER)`);
    const before = await shape(uri);
    await expect(openStore(uri)).rejects.toMatchObject({ code: "store/io" });
    expect(await version(uri)).toBe("2");
    expect(await shape(uri)).toEqual(before);
    expect(await tables(uri)).not.toContain("warrant_lease_tokens");
  });

  it("migrates a version 1 store to the latest, keeping its facts, chain and records", async () => {
    const uri = await v1Store();
    expect(await version(uri)).toBe("1");
    const store = await openStore(uri);
    expect(await version(uri)).toBe(String(LATEST_SCHEMA_VERSION));
    const facts = await store.readFacts(Q);
    expect(facts.map((s) => s.fact.sequence)).toEqual([1, 2, 3]);
    let prev = GENESIS_HASH;
    for (const s of facts) {
      expect(s.hash).toBe(chainHash(prev, s.fact));
      prev = s.hash;
    }
    expect(await store.readRecord(proposal(Q, 1).ref)).toEqual(proposal(Q, 1));
    await store.postOperatorAct({
      query: Q,
      kind: "approve",
      target: "run:1 step:1",
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
    await store.putRecords([proposal(Q, 2)]);
    expect((await store.listRecords(Q)).map((r) => r.ref)).toEqual([
      proposal(Q, 1).ref,
      proposal(Q, 2).ref,
    ]);
    await store.close();
  });

  it("migrates a version 5 store to the latest: its facts get positions in time order, new ones above", async () => {
    const uri = await migratedTo(5);
    const old = await openPostgresLedgerStore(new URL(pg.url).toString(), {
      uri,
      schema: TestSchemas.schemaOf(uri),
      targetVersion: 5,
    });
    // Both loops open at the same recorded time: the query breaks the tie, whatever the insert order.
    for (const f of [opened("query:mb"), opened("query:ma"), passage("query:ma", 2, 1)])
      expect(
        await old.append({
          query: f["query/id"],
          expectedLastSequence: f.sequence - 1,
          facts: [f],
        }),
      ).toMatchObject({ ok: true });
    await old.close();
    expect(await version(uri)).toBe("5");
    const store = await openStore(uri);
    expect(await version(uri)).toBe(String(LATEST_SCHEMA_VERSION));
    const feed = store.changeFeed?.();
    const before = (await feed?.factsAfter(0, 10)) ?? [];
    // Ordered by recorded-at, then query, then sequence.
    expect(before.map((e) => [e.position, e.query, e.fact.sequence])).toEqual([
      [1, "query:ma", 1],
      [2, "query:mb", 1],
      [3, "query:ma", 2],
    ]);
    expect(
      await store.append({
        query: "query:mb",
        expectedLastSequence: 1,
        facts: [passage("query:mb", 2, 2)],
      }),
    ).toMatchObject({ ok: true });
    expect((await feed?.factsAfter(3, 10))?.map((e) => [e.position, e.query])).toEqual([
      [4, "query:mb"],
    ]);
    await store.close();
  });

  it("migrates an empty schema (version 0) straight to the latest", async () => {
    const uri = schemas.uri();
    await (await openStore(uri)).close();
    expect(await version(uri)).toBe(String(LATEST_SCHEMA_VERSION));
    expect(await tables(uri)).toHaveLength(8);
    expect(await tables(uri)).toContain("warrant_memory");
  });

  it("applies a version's steps in one transaction: a failing step leaves the store as it was", async () => {
    const uri = await v1Store();
    await schemas.sql(`CREATE TABLE "${TestSchemas.schemaOf(uri)}".warrant_leases (x INTEGER)`);
    await expect(openStore(uri)).rejects.toMatchObject({ code: "store/io" });
    expect(await version(uri)).toBe("1");
    expect(await tables(uri)).not.toContain("warrant_operator_acts");
  });

  it("refuses a store written by a newer version with store/version-too-new, untouched", async () => {
    const uri = await v1Store();
    const newer = String(LATEST_SCHEMA_VERSION + 1);
    await schemas.sql(
      `UPDATE "${TestSchemas.schemaOf(uri)}".warrant_meta SET value = $1 WHERE key = 'schema_version'`,
      [newer],
    );
    const error = await openStore(uri).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "store/version-too-new" });
    const message = (error as Error).message;
    expect(message).toContain(`schema version ${newer}`);
    expect(message).toContain(`up to ${LATEST_SCHEMA_VERSION}`);
    expect(message).toMatch(/Upgrade warrant/);
    expect(await version(uri)).toBe(newer);
    expect(await tables(uri)).not.toContain("warrant_leases");
  });
});
