// The PostgreSQL store against the shared LedgerStore contract, each test on a fresh schema, plus
// what only PostgreSQL has: schemas named in the URI and its connection errors.

import * as vitest from "vitest";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { LATEST_SCHEMA_VERSION } from "../../src/adapters/store/schema-version.js";
import { opened, passage, review } from "../../src/testing/contracts/facts.js";
import { ledgerStoreContract } from "../../src/testing.js";
import { postgresForTests, TestSchemas, takeoverInProgress } from "../helpers/postgres.js";

const server = await postgresForTests();
const schemas = new TestSchemas(server.url, "store");
afterAll(() => (server.enabled ? schemas.dropAll() : undefined));

describe.skipIf(!server.enabled)("PostgreSQL store", () => {
  ledgerStoreContract(
    "postgres",
    async () => {
      const uri = schemas.uri();
      return { store: await openStore(uri), reopen: () => openStore(uri) };
    },
    vitest,
  );

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
      "warrant_lease_tokens",
      "warrant_leases",
      "warrant_memory",
      "warrant_meta",
      "warrant_operator_acts",
      "warrant_records",
      "warrant_workers",
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

  it.each([
    ["an append", "append"],
    ["an append with records", "append-with-records"],
    ["a record write", "records"],
  ] as const)(
    "%s under a token a takeover in progress makes stale waits for it, then is refused",
    async (_, write) => {
      const uri = schemas.uri();
      const schema = TestSchemas.schemaOf(uri);
      const store = await openStore(uri);
      const q = "query:race";
      await store.append({ query: q, expectedLastSequence: 0, facts: [opened(q)] });
      const token = (await store.acquireLease(q, "worker-a", 1000, new Date()))?.token ?? 0;
      // Another driver's takeover, not yet committed, holds the loop's lock and the lease row it
      // updates, as acquireLease does.
      const taker = await takeoverInProgress(server.url, schema, q);
      const pending =
        write === "records"
          ? store.putRecords([review(q, 1)], { query: q, token })
          : store.append({
              query: q,
              expectedLastSequence: 1,
              facts: [passage(q, 2, 1)],
              ...(write === "append-with-records" ? { records: [review(q, 1)] } : {}),
              fencingToken: token,
            });
      let settled = false;
      pending.then(
        () => {
          settled = true;
        },
        () => {
          settled = true;
        },
      );
      // The write waits for the lease row the takeover updated: it cannot commit under a token the
      // takeover replaces.
      while (!settled) {
        const [row] = await schemas.sql<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1",
          [`%"${schema}".warrant_leases WHERE query = % FOR SHARE%`],
        );
        if (Number(row?.n) > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await taker.query("COMMIT");
      await taker.end();
      await expect(pending).rejects.toMatchObject({ code: "store/lease-lost" });
      expect(await store.readFacts(q)).toHaveLength(1);
      expect(await store.listRecords(q)).toEqual([]);
      await store.close();
    },
  );

  it("refuses a schema name that is not a plain identifier", async () => {
    const u = new URL(server.url);
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
