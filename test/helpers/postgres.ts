// PostgreSQL for tests: which server to use, whether its tests run, and a fresh schema per store
// so test files running in parallel never see each other's rows.
//
// WARRANT_TEST_PG=postgres://USER@HOST:PORT/DB names the server; without it the local trust-auth
// server at 127.0.0.1:5432 (database `test`, user `postgres` or `root`) is tried. With CI=true the
// tests always run, so an unreachable server fails them; elsewhere they are skipped with a note.
// WARRANT_TEST_PG=off skips them whatever CI says (`npm run test:unit`).
import { randomBytes } from "node:crypto";
import pg from "pg";
import { loopLock } from "../../src/adapters/store/postgres-sql.js";

const CANDIDATES = [
  "postgres://postgres@127.0.0.1:5432/test",
  "postgres://root@127.0.0.1:5432/test",
];

export interface PostgresForTests {
  /** Run the PostgreSQL tests (reachable, or required by CI=true). */
  readonly enabled: boolean;
  /** The server URL the tests use (the first candidate when none answered). */
  readonly url: string;
  /** Why they are skipped, when they are. */
  readonly skipReason?: string;
}

async function reachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

let probed: Promise<PostgresForTests> | undefined;

/** Probe once per test file (cached): the server to use, or why the PostgreSQL tests are skipped. */
export function postgresForTests(): Promise<PostgresForTests> {
  probed ??= probe();
  return probed;
}

async function probe(): Promise<PostgresForTests> {
  const explicit = process.env.WARRANT_TEST_PG;
  if (explicit === "off") {
    const skipReason = "PostgreSQL tests off (WARRANT_TEST_PG=off, as in npm run test:unit)";
    return { enabled: false, url: CANDIDATES[0] as string, skipReason };
  }
  const candidates = explicit !== undefined && explicit !== "" ? [explicit] : CANDIDATES;
  const errors: string[] = [];
  for (const url of candidates) {
    const error = await reachable(url);
    if (error === undefined) return { enabled: true, url };
    errors.push(`${url}: ${error}`);
  }
  const url = candidates[0] as string;
  if (process.env.CI === "true") return { enabled: true, url };
  const skipReason =
    `PostgreSQL tests skipped: no server answered (${errors.join("; ")}). ` +
    "Start one, or set WARRANT_TEST_PG=postgres://USER@HOST:PORT/DATABASE to enable them.";
  process.stderr.write(`${skipReason}\n`);
  return { enabled: false, url, skipReason };
}

/**
 * Fresh schemas under one server, named `warrant_test_<label>_<random>`, each given as a store URI
 * (`…?schema=NAME`); `dropAll()` drops every schema it handed out.
 */
export class TestSchemas {
  readonly #url: string;
  readonly #label: string;
  readonly #made: string[] = [];

  constructor(url: string, label: string) {
    this.#url = url;
    this.#label = label.replace(/[^a-z0-9_]/g, "_");
  }

  /** A store URI on a schema no one has used; the store creates the schema when it opens. */
  uri(): string {
    const name = `warrant_test_${this.#label}_${randomBytes(5).toString("hex")}`;
    this.#made.push(name);
    const u = new URL(this.#url);
    u.searchParams.set("schema", name);
    return u.toString();
  }

  /** The schema name in a URI made by uri(). */
  static schemaOf(uri: string): string {
    return new URL(uri).searchParams.get("schema") ?? "public";
  }

  /** Run SQL on the server directly (fixtures, inspection). */
  async sql<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.#url });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  async dropAll(): Promise<void> {
    const names = this.#made.splice(0);
    if (names.length === 0) return;
    await this.sql(names.map((n) => `DROP SCHEMA IF EXISTS "${n}" CASCADE`).join("; "));
  }
}

/**
 * Another driver's takeover of `query`'s lease by worker-b, as acquireLease makes it, left
 * uncommitted: the client holds the loop's lock and the updated lease row until it commits.
 */
export async function takeoverInProgress(
  url: string,
  schema: string,
  query: string,
): Promise<pg.Client> {
  const taker = new pg.Client({ connectionString: url });
  await taker.connect();
  await taker.query("BEGIN");
  await taker.query(loopLock(schema, query));
  await taker.query(
    `UPDATE "${schema}".warrant_leases SET holder = 'worker-b', token = token + 1 WHERE query = $1`,
    [query],
  );
  return taker;
}
