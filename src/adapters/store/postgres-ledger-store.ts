// The PostgreSQL LedgerStore (pg Pool): one READ COMMITTED transaction per append, serialised per
// loop by a transaction-scoped advisory lock, with synchronous_commit on so a commit is durable
// before append() resolves. PRIMARY KEY (query, sequence) and UNIQUE (query, charge_key) are the
// backstop should anything bypass the lock.
import { sha256 } from "@noble/hashes/sha2.js";
import pg from "pg";
import type {
  AppendBatch,
  AppendOutcome,
  LedgerRecord,
  LedgerStore,
  LoopSummary,
  OperatorAct,
  PostedAct,
  RawLoop,
  StoredFact,
} from "../../core/loop/ledger-store.js";
import type { Fact } from "../../core/loop/types.js";
import { WarrantError } from "../../core/result.js";
import {
  type ActRow,
  actOfRow,
  assertBatchShape,
  assertRecordShape,
  chainFacts,
  chargeKeyConflictMessage,
  fromStoredRecord,
  recordConflict,
  type StoredRecord,
  sameRecord,
  sequenceConflictMessage,
  storedText,
  toStoredRecords,
} from "./batch.js";
import { POSTGRES_META_DDL, POSTGRES_MIGRATIONS } from "./postgres-migrations.js";
import {
  LATEST_SCHEMA_VERSION,
  parseVersion,
  pendingMigrations,
  versionTooNew,
} from "./schema-version.js";

export interface PostgresStoreOptions {
  /** The schema holding the tables (default `public`); created if absent. */
  readonly schema?: string;
  /** Pool size (default 10). */
  readonly poolSize?: number;
  /** The URI to report: must carry no password. */
  readonly uri: string;
  /** Migrate only up to this version (tests of the migration path). */
  readonly targetVersion?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Connect, create the schema if needed and migrate it; throws WarrantError `store/…`. */
export async function openPostgresLedgerStore(
  connectionString: string,
  opts: PostgresStoreOptions,
): Promise<PostgresLedgerStore> {
  const schema = opts.schema ?? "public";
  if (!SCHEMA_NAME.test(schema)) {
    throw new WarrantError(
      "store/uri-invalid",
      `schema "${schema}" must match ${SCHEMA_NAME.source} (lower-case letters, digits, _)`,
    );
  }
  const pool = new pg.Pool({ connectionString, max: opts.poolSize ?? 10 });
  // An idle client that loses its connection is dropped by the pool; the next query reconnects
  // or fails with its own error. Without a listener the error would end the process.
  pool.on("error", () => {});
  try {
    await migratePostgres(pool, schema, opts.uri, opts.targetVersion ?? LATEST_SCHEMA_VERSION);
  } catch (e) {
    await pool.end().catch(() => {});
    throw mapPgError(e, opts.uri);
  }
  return new PostgresLedgerStore(pool, schema, opts.uri);
}

/** Bring `schema` to `target` in one transaction, serialised against concurrent openers. */
export async function migratePostgres(
  pool: pg.Pool,
  schema: string,
  uri: string,
  target = LATEST_SCHEMA_VERSION,
): Promise<void> {
  await inTransaction(pool, "BEGIN", async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(${lockKey(`warrant-migrate\0${schema}`)})`);
    if (schema !== "public") await client.query(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`);
    await client.query(`SET LOCAL search_path TO ${quote(schema)}`);
    await client.query(POSTGRES_META_DDL);
    const { rows } = await client.query<{ value: string }>(
      "SELECT value FROM warrant_meta WHERE key = 'schema_version'",
    );
    const from = parseVersion(uri, rows[0]?.value);
    if (from > LATEST_SCHEMA_VERSION) throw versionTooNew(uri, from);
    const steps = pendingMigrations(POSTGRES_MIGRATIONS, from).filter((m) => m.version <= target);
    if (steps.length === 0) return;
    for (const step of steps) await client.query(step.sql);
    await client.query(
      "INSERT INTO warrant_meta (key, value) VALUES ('schema_version', $1) " +
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
      [String(steps.at(-1)?.version)],
    );
  });
}

export class PostgresLedgerStore implements LedgerStore {
  readonly uri: string;
  readonly #pool: pg.Pool;
  readonly #schema: string;
  readonly #t: {
    readonly facts: string;
    readonly records: string;
    readonly acts: string;
    readonly leases: string;
  };
  #closed = false;
  /**
   * The last fact this store has read or written per loop. A stored fact never changes, so the hash
   * at a sequence is safe to keep; when the caller expects exactly that sequence the append needs
   * no read of its own (one round trip instead of two). Anything else takes the reading path.
   */
  readonly #heads = new Map<string, { readonly sequence: number; readonly hash: string }>();

  constructor(pool: pg.Pool, schema: string, uri: string) {
    this.#pool = pool;
    this.#schema = schema;
    this.uri = uri;
    const q = quote(schema);
    this.#t = {
      facts: `${q}.warrant_facts`,
      records: `${q}.warrant_records`,
      acts: `${q}.warrant_operator_acts`,
      leases: `${q}.warrant_leases`,
    };
  }

  async append(batch: AppendBatch): Promise<AppendOutcome> {
    assertBatchShape(batch);
    const records = toStoredRecords(batch.records ?? []);
    const expected = batch.expectedLastSequence;
    const head = this.#heads.get(batch.query);
    if (records.length === 0 && (expected === 0 || head?.sequence === expected)) {
      return this.#appendKnownHead(batch, expected === 0 ? undefined : head?.hash);
    }
    const client = await this.#connect();
    let broken: Error | undefined;
    try {
      // Values are inlined as escaped literals so that statements share a round trip: this path
      // takes two (more with records).
      const lit = (v: string) => client.escapeLiteral(v);
      // 1: open the transaction with synchronous_commit on (whatever the server default), take the
      // loop's lock (held to COMMIT), read the loop's last fact. Each statement of a simple query
      // takes a new snapshot, so the read sees every append committed before the lock was granted.
      const results = (await client.query(
        "BEGIN; SET LOCAL synchronous_commit TO on; " +
          `SELECT pg_advisory_xact_lock(${lockKey(`${this.#schema}\0${batch.query}`)}); ` +
          `SELECT sequence, hash FROM ${this.#t.facts} WHERE query = ${lit(batch.query)} ` +
          "ORDER BY sequence DESC LIMIT 1",
      )) as unknown as pg.QueryResult<{ sequence: number; hash: string }>[];
      const last = results.at(-1)?.rows[0];
      const lastSequence = last?.sequence ?? 0;
      if (lastSequence !== batch.expectedLastSequence) {
        await client.query("ROLLBACK");
        return {
          ok: false,
          conflict: "sequence",
          message: sequenceConflictMessage(batch.query, batch.expectedLastSequence, lastSequence),
        };
      }
      const stored = chainFacts(last?.hash, batch.facts);
      const rows = stored.map(
        (s) =>
          `(${lit(batch.query)}, ${s.fact.sequence}, ${lit(s.chargeKey)}, ${lit(s.fact.step.kind)}, ` +
          `${lit(storedText(s.fact))}, ${lit(s.hash)})`,
      );
      const insert = `INSERT INTO ${this.#t.facts} (query, sequence, charge_key, kind, fact, hash) VALUES ${rows.join(", ")}`;
      // 2: the facts and COMMIT (records, which may need a comparison, in between).
      if (records.length === 0) {
        await client.query(`${insert}; COMMIT`);
      } else {
        await client.query(insert);
        await this.#insertRecords(client, records);
        await client.query("COMMIT");
      }
      this.#remember(batch.query, stored.at(-1));
      return { ok: true, stored };
    } catch (e) {
      // After a failed statement the transaction is aborted (or, if COMMIT failed, already over):
      // ROLLBACK ends it either way; if even that fails the connection is dropped, not reused.
      try {
        await client.query("ROLLBACK");
      } catch (rollbackError) {
        broken = rollbackError as Error;
      }
      const conflict = constraintConflict(e, batch.query);
      if (conflict !== undefined) return conflict;
      throw mapPgError(e, this.uri);
    } finally {
      client.release(broken);
    }
  }

  async readFacts(query: string, afterSequence = 0): Promise<readonly StoredFact[]> {
    const { rows } = await this.#query<{ fact: string; charge_key: string; hash: string }>(
      `SELECT fact, charge_key, hash FROM ${this.#t.facts} WHERE query = $1 AND sequence > $2 ORDER BY sequence`,
      [query, afterSequence],
    );
    const stored = rows.map((r) => ({
      fact: JSON.parse(r.fact) as Fact,
      chargeKey: r.charge_key,
      hash: r.hash,
    }));
    this.#remember(query, stored.at(-1));
    return stored;
  }

  async putRecords(records: readonly LedgerRecord[]): Promise<void> {
    for (const r of records) assertRecordShape(r);
    const stored = toStoredRecords(records);
    if (stored.length === 0) return;
    try {
      await inTransaction(this.#pool, "BEGIN", (client) => this.#insertRecords(client, stored));
    } catch (e) {
      throw mapPgError(e, this.uri);
    }
  }

  async readRecord(ref: string): Promise<LedgerRecord | undefined> {
    const { rows } = await this.#query<StoredRecord>(
      `SELECT ref, kind, query, body FROM ${this.#t.records} WHERE ref = $1`,
      [ref],
    );
    return rows[0] === undefined ? undefined : fromStoredRecord(rows[0]);
  }

  async listRecords(query: string): Promise<readonly LedgerRecord[]> {
    const { rows } = await this.#query<StoredRecord>(
      `SELECT ref, kind, query, body FROM ${this.#t.records} WHERE query = $1 ORDER BY position`,
      [query],
    );
    return rows.map(fromStoredRecord);
  }

  async listLoops(): Promise<readonly LoopSummary[]> {
    const { rows } = await this.#query<{ query: string; last: number }>(
      `SELECT query, MAX(sequence) AS last FROM ${this.#t.facts} GROUP BY query ORDER BY query COLLATE "C"`,
    );
    return rows.map((r) => ({ query: r.query, lastSequence: r.last }));
  }

  async readRawLoop(query: string): Promise<RawLoop> {
    const facts = await this.#query<RawLoop["facts"][number]>(
      `SELECT sequence, charge_key AS "chargeKey", kind, fact AS text, hash FROM ${this.#t.facts} WHERE query = $1 ORDER BY sequence`,
      [query],
    );
    const records = await this.#query<RawLoop["records"][number]>(
      `SELECT ref, kind, query, body AS text FROM ${this.#t.records} WHERE query = $1 ORDER BY position`,
      [query],
    );
    return { facts: facts.rows, records: records.rows };
  }

  async postOperatorAct(act: OperatorAct): Promise<PostedAct> {
    // The partial unique index on (query, target) of counting acts makes the first act win; a
    // concurrent insert of the same target waits for the first to commit, then does nothing.
    const inserted = await this.#query(
      `INSERT INTO ${this.#t.acts} (query, kind, target, text, operator, at) VALUES ($1, $2, $3, $4, $5, $6) ` +
        "ON CONFLICT DO NOTHING",
      [act.query, act.kind, act.target, act.text ?? null, act.operator, act.at],
    );
    if (inserted.rowCount === 1) return { posted: true };
    const { rows } = await this.#query<ActRow>(
      `SELECT query, kind, target, text, operator, at FROM ${this.#t.acts} WHERE query = $1 AND target = $2 AND counts`,
      [act.query, act.target],
    );
    return { posted: false, counting: actOfRow(rows[0] as ActRow) };
  }

  async readOperatorActs(query: string): Promise<readonly OperatorAct[]> {
    const { rows } = await this.#query<ActRow>(
      `SELECT query, kind, target, text, operator, at FROM ${this.#t.acts} WHERE query = $1 AND counts ORDER BY id`,
      [query],
    );
    return rows.map(actOfRow);
  }

  async acquireLease(query: string, holder: string, ttlMs: number, now: Date): Promise<boolean> {
    // One statement: the row lock taken by ON CONFLICT makes check-and-take atomic.
    const { rowCount } = await this.#query(
      `INSERT INTO ${this.#t.leases} AS l (query, holder, expires_at) VALUES ($1, $2, $3) ` +
        "ON CONFLICT (query) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at " +
        "WHERE l.holder = EXCLUDED.holder OR l.expires_at <= $4",
      [query, holder, new Date(now.getTime() + ttlMs), now],
    );
    return rowCount === 1;
  }

  async releaseLease(query: string, holder: string): Promise<void> {
    await this.#query(`DELETE FROM ${this.#t.leases} WHERE query = $1 AND holder = $2`, [
      query,
      holder,
    ]);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }

  #remember(query: string, last: StoredFact | undefined): void {
    if (last === undefined) return;
    if (this.#heads.size >= 10_000 && !this.#heads.has(query)) this.#heads.clear();
    this.#heads.set(query, { sequence: last.fact.sequence, hash: last.hash });
  }

  /**
   * An append without records whose previous hash is known: one round trip. The insert happens
   * only if the loop's last sequence is the expected one, checked under the loop's lock in the
   * same transaction; zero rows inserted means another writer appended first.
   */
  async #appendKnownHead(
    batch: AppendBatch,
    previousHash: string | undefined,
  ): Promise<AppendOutcome> {
    const stored = chainFacts(previousHash, batch.facts);
    const client = await this.#connect();
    let broken: Error | undefined;
    try {
      const lit = (v: string) => client.escapeLiteral(v);
      const rows = stored.map(
        (s) =>
          `(${lit(batch.query)}, ${s.fact.sequence}, ${lit(s.chargeKey)}, ${lit(s.fact.step.kind)}, ` +
          `${lit(storedText(s.fact))}, ${lit(s.hash)})`,
      );
      const results = (await client.query(
        "BEGIN; SET LOCAL synchronous_commit TO on; " +
          `SELECT pg_advisory_xact_lock(${lockKey(`${this.#schema}\0${batch.query}`)}); ` +
          `INSERT INTO ${this.#t.facts} (query, sequence, charge_key, kind, fact, hash) ` +
          `SELECT * FROM (VALUES ${rows.join(", ")}) AS v (query, sequence, charge_key, kind, fact, hash) ` +
          `WHERE (SELECT COALESCE(MAX(sequence), 0) FROM ${this.#t.facts} WHERE query = ${lit(batch.query)}) = ${batch.expectedLastSequence}; ` +
          "COMMIT",
      )) as unknown as pg.QueryResult[];
      const inserted = results.find((r) => r.command === "INSERT")?.rowCount ?? 0;
      if (inserted !== stored.length) {
        this.#heads.delete(batch.query);
        return {
          ok: false,
          conflict: "sequence",
          message: `loop ${batch.query} is no longer at sequence ${batch.expectedLastSequence}: another writer appended first`,
        };
      }
      this.#remember(batch.query, stored.at(-1));
      return { ok: true, stored };
    } catch (e) {
      try {
        await client.query("ROLLBACK");
      } catch (rollbackError) {
        broken = rollbackError as Error;
      }
      const conflict = constraintConflict(e, batch.query);
      if (conflict !== undefined) return conflict;
      throw mapPgError(e, this.uri);
    } finally {
      client.release(broken);
    }
  }

  async #connect(): Promise<pg.PoolClient> {
    try {
      return await this.#pool.connect();
    } catch (e) {
      throw mapPgError(e, this.uri);
    }
  }

  async #insertRecords(client: pg.PoolClient, records: readonly StoredRecord[]): Promise<void> {
    for (const r of records) {
      const inserted = await client.query(
        `INSERT INTO ${this.#t.records} (ref, kind, query, body) VALUES ($1, $2, $3, $4) ON CONFLICT (ref) DO NOTHING`,
        [r.ref, r.kind, r.query, r.body],
      );
      if (inserted.rowCount === 1) continue;
      const { rows } = await client.query<StoredRecord>(
        `SELECT ref, kind, query, body FROM ${this.#t.records} WHERE ref = $1`,
        [r.ref],
      );
      if (rows[0] === undefined || !sameRecord(rows[0], r)) throw recordConflict(r.ref);
    }
  }

  async #query<R extends pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>> {
    try {
      return await this.#pool.query<R>(text, values);
    } catch (e) {
      throw mapPgError(e, this.uri);
    }
  }
}

/** A unique violation on the facts table, as the conflict it stands for. */
function constraintConflict(e: unknown, query: string): AppendOutcome | undefined {
  const err = e as { code?: unknown; constraint?: unknown };
  if (err.code !== "23505") return undefined;
  if (err.constraint === "warrant_facts_charge_key") {
    return { ok: false, conflict: "charge-key", message: chargeKeyConflictMessage(query) };
  }
  if (err.constraint === "warrant_facts_pkey") {
    return {
      ok: false,
      conflict: "sequence",
      message: `loop ${query} already has a fact at one of these sequences`,
    };
  }
  return undefined;
}

/** Run `fn` after `begin` and COMMIT on one pooled client; ROLLBACK and rethrow on any error. */
async function inTransaction<T>(
  pool: pg.Pool,
  begin: string,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (e) {
    try {
      await client.query("ROLLBACK");
    } catch (rollbackError) {
      broken = rollbackError as Error;
    }
    throw e;
  } finally {
    client.release(broken);
  }
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** A signed 64-bit advisory lock key for `name` (inlined as an integer literal: no injection). */
function lockKey(name: string): string {
  const b = sha256(new TextEncoder().encode(name));
  let n = 0n;
  for (let i = 0; i < 8; i++) n = (n << 8n) | BigInt(b[i] as number);
  return BigInt.asIntN(64, n).toString();
}

/** Driver errors become WarrantError with a store code and the password-free URI. */
function mapPgError(e: unknown, uri: string): unknown {
  if (e instanceof WarrantError) return e;
  const code = (e as { code?: unknown }).code;
  const message = e instanceof Error ? e.message : String(e);
  if (
    code === "ECONNREFUSED" ||
    code === "ENOTFOUND" ||
    code === "ETIMEDOUT" ||
    code === "ECONNRESET" ||
    code === "3D000" ||
    code === "28000" ||
    code === "28P01"
  ) {
    return new WarrantError("store/unreachable", `cannot use PostgreSQL at ${uri}: ${message}`, {
      cause: e,
    });
  }
  return new WarrantError("store/io", `${uri}: ${message}`, { cause: e });
}
