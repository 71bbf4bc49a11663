// Which PostgreSQL errors a store retries: a session the server ended because it idled inside a
// transaction (`idle_in_transaction_session_timeout`, SQLSTATE 25P03) is transient — its
// transaction was rolled back, so the operation may simply run again — as are restarts and
// serialization failures; a constraint violation is not.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { isTransientPgError } from "../../src/adapters/store/postgres-errors.js";
import { postgresForTests } from "../helpers/postgres.js";

const server = await postgresForTests();

describe("transient PostgreSQL errors", () => {
  it("classifies SQLSTATEs", () => {
    for (const code of ["25P03", "40001", "40P01", "57P01", "57P03", "08006"])
      expect(isTransientPgError({ code }), code).toBe(true);
    for (const code of ["23505", "42P01", "28P01"])
      expect(isTransientPgError({ code }), code).toBe(false);
  });

  it.skipIf(!server.enabled)(
    "the server's own idle-in-transaction timeout (25P03) counts as transient",
    { timeout: 30_000 },
    async () => {
      const client = new pg.Client({ connectionString: server.url });
      // The server's FATAL (25P03) reaches the connection as it arrives; the next query is refused.
      const errors: unknown[] = [];
      client.on("error", (e) => errors.push(e));
      await client.connect();
      try {
        await client.query("SET idle_in_transaction_session_timeout = 100");
        await client.query("BEGIN");
        await new Promise((r) => setTimeout(r, 500));
        await client.query("SELECT 1");
      } catch (e) {
        errors.push(e);
      } finally {
        await client.end().catch(() => undefined);
      }
      expect(errors.map((e) => (e as { code?: unknown }).code)).toContain("25P03");
      for (const e of errors) expect(isTransientPgError(e), String(e)).toBe(true);
    },
  );
});
