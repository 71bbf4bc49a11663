// The PostgreSQL store against the shared LedgerStore contract, each test on a fresh schema, plus
// what only PostgreSQL has: schemas named in the URI and its connection errors.
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { LATEST_SCHEMA_VERSION } from "../../src/adapters/store/schema-version.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { opened } from "./facts.js";
import { ledgerStoreContract } from "./ledger-store-contract.js";

const pg = await postgresForTests();
const schemas = new TestSchemas(pg.url, "store");
afterAll(() => (pg.enabled ? schemas.dropAll() : undefined));

describe.skipIf(!pg.enabled)("PostgreSQL store", () => {
  ledgerStoreContract("postgres", async () => {
    const uri = schemas.uri();
    return { store: await openStore(uri), reopen: () => openStore(uri) };
  });

  it("creates the schema the URI names and keeps its tables there", async () => {
    const uri = schemas.uri();
    const store = await openStore(uri);
    await store.append({ query: "query:s", expectedLastSequence: 0, facts: [opened("query:s")] });
    await store.close();
    const rows = await schemas.sql<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
      [TestSchemas.schemaOf(uri)],
    );
    expect(rows.map((r) => r.table_name)).toEqual([
      "warrant_facts",
      "warrant_leases",
      "warrant_meta",
      "warrant_operator_acts",
      "warrant_records",
    ]);
  });

  it("opens concurrently on a fresh schema: one migration, no error", async () => {
    const uri = schemas.uri();
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => openStore(uri, { poolSize: 2 })),
    );
    for (const s of stores) await s.close();
    const rows = await schemas.sql<{ value: string }>(
      `SELECT value FROM "${TestSchemas.schemaOf(uri)}".warrant_meta WHERE key = 'schema_version'`,
    );
    expect(rows).toEqual([{ value: String(LATEST_SCHEMA_VERSION) }]);
  });

  it("refuses a schema name that is not a plain identifier", async () => {
    const u = new URL(pg.url);
    u.searchParams.set("schema", 'x"; DROP TABLE y; --');
    await expect(openStore(u.toString())).rejects.toMatchObject({ code: "store/uri-invalid" });
  });
});

describe("PostgreSQL store errors", () => {
  it("reports an unreachable server as store/unreachable, without the password", async () => {
    const err = await openStore("postgres://warrant:s3cret-pw@127.0.0.1:1/test").catch((e) => e);
    expect(err).toMatchObject({ code: "store/unreachable" });
    expect(String(err.message)).toContain("postgres://warrant@127.0.0.1:1/test");
    expect(String(err.message)).not.toContain("s3cret-pw");
  });
});
