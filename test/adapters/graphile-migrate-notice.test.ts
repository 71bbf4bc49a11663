// graphile-worker announces a breaking migration on one channel for the whole database, and a
// worker that hears it shuts down. The queue adapter hands the notice to graphile-worker only when
// the worker's own queue schema was migrated: installing another store's queue in the same
// database (a second project, a test schema) leaves the running workers alone.
import { afterAll, describe, expect, it } from "vitest";
import { graphileJobQueue } from "../../src/adapters/queue/graphile-job-queue.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";

const pg = await postgresForTests();

describe.skipIf(!pg.enabled)(
  "a breaking-migration notice reaches only its own schema's workers",
  () => {
    const schemas = new TestSchemas(pg.url, "migrate_notice");
    const queueSchemas: string[] = [];
    afterAll(async () => {
      if (queueSchemas.length > 0)
        await schemas.sql(
          queueSchemas.map((s) => `DROP SCHEMA IF EXISTS "${s}" CASCADE`).join("; "),
        );
      await schemas.dropAll();
    });

    /** A queue on a fresh store schema; its worker records each loop it is handed. */
    function queue() {
      const storeSchema = TestSchemas.schemaOf(schemas.uri());
      const q = graphileJobQueue({ connectionString: pg.url, storeSchema, pollIntervalMs: 60_000 });
      queueSchemas.push(q.schema);
      const handed: string[] = [];
      const waiters = new Map<string, () => void>();
      const start = () =>
        q.start({
          concurrency: 1,
          handleSignals: false,
          handler: async ({ query }) => {
            handed.push(query);
            waiters.get(query)?.();
          },
        });
      /** Resolves when the worker is handed `query`. */
      const handedOver = (query: string) =>
        new Promise<"handed">((resolve) => {
          if (handed.includes(query)) resolve("handed");
          else waiters.set(query, () => resolve("handed"));
        });
      return { q, start, handedOver };
    }

    it("installing another queue schema in the same database does not stop a running worker", {
      timeout: 60_000,
    }, async () => {
      const a = queue();
      const runner = await a.start();
      const stopped = runner.promise.then(() => "stopped" as const);
      try {
        // The worker listens: a loop dispatched now is handed to it.
        await a.q.dispatch("q-before");
        expect(await Promise.race([a.handedOver("q-before"), stopped])).toBe("handed");
        // Another store's queue, installed from scratch: graphile-worker's breaking migrations run,
        // each notified to every listener in the database.
        const b = queue();
        await b.q.dispatch("q-elsewhere");
        await b.q.close();
        // Notices reach a listener in commit order: this dispatch's comes after the migrations'.
        await a.q.dispatch("q-after");
        expect(await Promise.race([a.handedOver("q-after"), stopped])).toBe("handed");
        expect(process.exitCode).not.toBe(57);
      } finally {
        await runner.stop();
        await a.q.close();
      }
    });

    it("a breaking migration of the worker's own schema still stops it, as graphile-worker has it", {
      timeout: 60_000,
    }, async () => {
      const a = queue();
      const runner = await a.start();
      const exitCodeBefore = process.exitCode;
      try {
        await a.q.dispatch("q-first");
        await a.handedOver("q-first");
        // A newer graphile-worker's breaking migration, recorded in this schema and announced.
        await schemas.sql(
          `INSERT INTO "${a.q.schema}".migrations (id, breaking) VALUES (999999, true); ` +
            `SELECT pg_notify('worker:migrate', '{"migrationNumber":999999,"breaking":true}')`,
        );
        await runner.promise;
        expect(process.exitCode).toBe(57);
      } finally {
        process.exitCode = exitCodeBefore;
        await runner.stop().catch(() => undefined);
        await a.q.close();
      }
    });
  },
);
