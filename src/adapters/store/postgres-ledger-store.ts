// The PostgreSQL LedgerStore (pg Pool): one READ COMMITTED transaction per append, with
// synchronous_commit on so a commit is durable before append() resolves, and no lock shared by the
// loops. The facts go in with one statement that inserts them only if the loop is still at the
// expected sequence and, for a fenced write, the lease row (locked FOR SHARE until COMMIT, so a
// takeover waits) still carries the write's token; PRIMARY KEY (query, sequence) and UNIQUE (query,
// charge_key) refuse a concurrent writer. Appends without records that wait for a connection go
// in one statement per group (postgres-append-group.ts), each with its own conditions. Transient
// errors (a restart, a cut connection, a serialization failure) are retried under the same
// idempotency keys for the retry window.
import pg from "pg";
import type { Fact } from "../../core/loop/types.js";
import type { ChangeFeed } from "../../core/ports/change-feed.js";
import type { Fence, LeaseGrant, LeaseInfo } from "../../core/ports/leases.js";
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
  WorkerInfo,
  WorkerRegistration,
} from "../../core/ports/ledger-store.js";
import type { MemoryKey, MemoryRead, MemoryVersion } from "../../core/records/memory-write.js";
import { WarrantError } from "../../core/result.js";
import {
  type ActRow,
  actOfRow,
  assertBatchShape,
  assertRecordShape,
  chainFacts,
  fromStoredRecord,
  recordConflict,
  type StoredRecord,
  sameRecord,
  sequenceConflictMessage,
  storedText,
  toStoredRecords,
} from "./batch.js";
import { assertToken, leaseLost } from "./lease-rules.js";
import { assertMemoryShape } from "./memory-rows.js";
import { AppendGroups, type GroupMember, groupInsert } from "./postgres-append-group.js";
import { constraintConflict, isTransientPgError, mapPgError } from "./postgres-errors.js";
import { PostgresLeases } from "./postgres-leases.js";
import { PostgresMemory } from "./postgres-memory.js";
import { POSTGRES_META_DDL, POSTGRES_MIGRATIONS } from "./postgres-migrations.js";
import { inTransaction, lockKey, type PgTables, pgTables, quote } from "./postgres-sql.js";
import {
  LATEST_SCHEMA_VERSION,
  parseVersion,
  pendingMigrations,
  versionTooNew,
} from "./schema-version.js";
import { type Attempt, type RetryOptions, retryTransient } from "./transient-retry.js";

export interface PostgresStoreOptions {
  /** The schema holding the tables (default `public`); created if absent. */
  readonly schema?: string;
  /** Pool size (default 10). */
  readonly poolSize?: number;
  /** The URI to report: must carry no password. */
  readonly uri: string;
  /** Migrate only up to this version (tests of the migration path). */
  readonly targetVersion?: number;
  /** Retries of transient errors once open (default: for 60 s). Opening is never retried. */
  readonly retry?: RetryOptions;
}

/** At most one notification per this many ms from appends: the rest are folded into it. */
const NOTIFY_GAP_MS = 10;

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
  // synchronous_commit on for every session, whatever the server's default: a commit is durable
  // before an append resolves.
  const pool = new pg.Pool({
    connectionString,
    max: opts.poolSize ?? 10,
    options: "-c synchronous_commit=on",
  });
  // An idle client that loses its connection is dropped by the pool; the next query reconnects
  // or fails with its own error. Without a listener the error would end the process.
  pool.on("error", () => {});
  // So would a connection cut while its client is checked out (between two queries, or as the
  // server's notice of shutdown arrives in the same read as the answer that handed the client on):
  // every client keeps a listener for life, and the failure reaches the caller through its next
  // query instead.
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  try {
    await migratePostgres(pool, schema, opts.uri, opts.targetVersion ?? LATEST_SCHEMA_VERSION);
  } catch (e) {
    await pool.end().catch(() => {});
    throw mapPgError(e, opts.uri);
  }
  return new PostgresLedgerStore(pool, schema, opts.uri, opts.retry ?? {});
}

/** Bring `schema` to `target` in one transaction, serialised against concurrent openers. */
export async function migratePostgres(
  pool: pg.Pool,
  schema: string,
  uri: string,
  target = LATEST_SCHEMA_VERSION,
): Promise<void> {
  await inTransaction(pool, async (client) => {
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
  readonly #t: PgTables;
  readonly #leases: PostgresLeases;
  readonly #memory: PostgresMemory;
  readonly #retryOptions: RetryOptions;
  #closed = false;
  /** When the last notification was sent, and the one scheduled after it (see #notifyLater). */
  #notifiedAt = Number.NEGATIVE_INFINITY;
  #notifyTimer: ReturnType<typeof setTimeout> | undefined;
  /**
   * The last fact this store has read or written per loop. A stored fact never changes, so the hash
   * at a sequence is safe to keep; when the caller expects exactly that sequence the append needs
   * no read of its own (one round trip instead of two). Anything else takes the reading path.
   */
  readonly #heads = new Map<string, { readonly sequence: number; readonly hash: string }>();
  /** Appends without records waiting for a connection, sent alone or in groups. */
  readonly #groups: AppendGroups;

  constructor(pool: pg.Pool, schema: string, uri: string, retry: RetryOptions = {}) {
    this.#pool = pool;
    this.#schema = schema;
    this.uri = uri;
    this.#t = pgTables(schema);
    this.#leases = new PostgresLeases(pool, schema, this.#t);
    this.#memory = new PostgresMemory(this.#t.memory);
    this.#retryOptions = retry;
    // Appends use at most half the pool at once: reads, leases and the change feed keep the rest.
    const senders = Math.max(1, Math.floor((pool.options.max ?? 10) / 2));
    this.#groups = new AppendGroups(senders, (members) => this.#sendGroup(members));
  }

  async append(batch: AppendBatch): Promise<AppendOutcome> {
    assertBatchShape(batch);
    if (batch.fencingToken !== undefined) assertToken(batch.fencingToken);
    const records = toStoredRecords(batch.records ?? []);
    return this.#retry("append", async (attempt) => {
      try {
        const outcome = await this.#appendOnce(batch, records);
        if (outcome.ok || !attempt.afterFailure) return outcome;
        return (await this.#landed(batch, records)) ?? outcome;
      } catch (e) {
        // An earlier attempt that committed before its connection was cut, then a takeover: the
        // refusal is of the retry, the facts are in.
        const lost = e instanceof WarrantError && e.code === "store/lease-lost";
        if (lost && attempt.afterFailure) {
          const landed = await this.#landed(batch, records);
          if (landed !== undefined) return landed;
        }
        throw e;
      }
    });
  }

  async #appendOnce(batch: AppendBatch, records: readonly StoredRecord[]): Promise<AppendOutcome> {
    const expected = batch.expectedLastSequence;
    const head = this.#heads.get(batch.query);
    if (expected === 0 || head?.sequence === expected) {
      return this.#insertFacts(batch, records, expected === 0 ? undefined : head?.hash);
    }
    // The loop's last fact (and a fenced write's lease), read without a lock: the insert checks
    // both again in its own statement, so a writer that slips in between makes it insert nothing.
    const token = batch.fencingToken;
    const { rows } = await this.#pool.query<{
      sequence: number | null;
      hash: string | null;
      holder: string | null;
      token: string | null;
    }>(
      "SELECT f.sequence, f.hash, l.holder, l.token FROM (SELECT 1) AS one " +
        `LEFT JOIN LATERAL (SELECT sequence, hash FROM ${this.#t.facts} WHERE query = $1 ` +
        "ORDER BY sequence DESC LIMIT 1) AS f ON TRUE " +
        `LEFT JOIN ${this.#t.leases} AS l ON l.query = $1`,
      [batch.query],
    );
    const row = rows[0];
    if (token !== undefined) {
      const lease = leaseOf(row);
      if (lease?.token !== token) throw leaseLost(batch.query, token, lease);
    }
    const lastSequence = row?.sequence ?? 0;
    if (lastSequence !== expected) {
      return {
        ok: false,
        conflict: "sequence",
        message: sequenceConflictMessage(batch.query, expected, lastSequence),
      };
    }
    return this.#insertFacts(batch, records, row?.hash ?? undefined);
  }

  /**
   * The batch's facts after `previousHash`, in one statement that inserts them only if the loop's
   * last sequence is the expected one and, for a fenced write, the lease row still carries the
   * write's token. That row is locked FOR SHARE until COMMIT: a takeover (which updates it) waits
   * for the write, and a write whose statement meets a takeover in progress waits for it, then sees
   * the new token and inserts nothing. PRIMARY KEY (query, sequence) refuses a concurrent writer
   * at the same sequence. Without records this is one statement in its own transaction: one round
   * trip, planned once per connection.
   */
  async #insertFacts(
    batch: AppendBatch,
    records: readonly StoredRecord[],
    previousHash: string | undefined,
  ): Promise<AppendOutcome> {
    const stored = chainFacts(previousHash, batch.facts);
    // Without records: one statement, its own transaction, alone or in a group (see AppendGroups).
    if (records.length === 0) return this.#groups.add(batch, stored);
    const client = await this.#pool.connect();
    let broken: Error | undefined;
    try {
      const insert = this.#factsInsert(batch, stored);
      await client.query("BEGIN");
      const row = (await client.query<InsertedRow>(insert)).rows[0];
      if (Number(row?.inserted ?? 0) === stored.length) {
        await this.#insertRecords(client, records);
        await client.query("COMMIT");
        this.#notifyLater();
      } else await client.query("ROLLBACK");
      return this.#inserted(batch, stored, row);
    } catch (e) {
      if (e instanceof WarrantError && e.code === "store/lease-lost") throw e;
      // After a failed statement the transaction is aborted (or, if COMMIT failed, already over):
      // ROLLBACK ends it either way; if even that fails the connection is dropped, not reused.
      try {
        await client.query("ROLLBACK");
      } catch (rollbackError) {
        broken = rollbackError as Error;
      }
      // The rolled-back insert may have held back the change feed's positions above its own.
      this.#notifyLater();
      const conflict = constraintConflict(e, batch.query);
      if (conflict !== undefined) return conflict;
      throw e;
    } finally {
      client.release(broken);
    }
  }

  /**
   * One group of appends without records (see AppendGroups), every member settled: a single one by
   * its own statement, planned once per connection; several by one statement. A unique violation
   * means another writer of one of the group's loops committed first and nothing of the group went
   * in: each member is then appended alone, which says whose it was. Any other error is every
   * member's (a transient one is retried by each, which finds its facts if they landed).
   */
  async #sendGroup(members: GroupMember[]): Promise<void> {
    const alone = () =>
      Promise.all(members.map((m) => this.#settle(m, () => this.#insertAlone(m))));
    if (members.length === 1) {
      await alone();
      return;
    }
    let rows: InsertedRow[];
    try {
      rows = await this.#statement(groupInsert(this.#t, members));
    } catch (e) {
      // The rolled-back insert may have held back the change feed's positions above its own.
      this.#notifyLater();
      if ((e as { code?: unknown }).code !== "23505") throw e;
      await alone();
      return;
    }
    this.#notifyLater();
    members.forEach((m, i) => {
      void this.#settle(m, async () => this.#inserted(m.batch, m.stored, rows[i]));
    });
  }

  /**
   * One statement outside a transaction on a pooled connection, kept after an error the server
   * answered (the statement is over and rolled back) and dropped after any other.
   */
  async #statement(config: pg.QueryConfig): Promise<InsertedRow[]> {
    const client = await this.#pool.connect();
    let broken: Error | undefined;
    try {
      return (await client.query<InsertedRow>(config)).rows;
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      const answered =
        typeof code === "string" &&
        /^[0-9A-Z]{5}$/.test(code) &&
        !code.startsWith("08") &&
        !code.startsWith("57");
      if (!answered) broken = e as Error;
      throw e;
    } finally {
      client.release(broken);
    }
  }

  async #settle(m: GroupMember, outcome: () => Promise<AppendOutcome>): Promise<void> {
    try {
      m.resolve(await outcome());
    } catch (e) {
      m.reject(e);
    }
  }

  /** One append without records: one statement, its own transaction. */
  async #insertAlone({ batch, stored }: GroupMember): Promise<AppendOutcome> {
    let rows: InsertedRow[];
    try {
      rows = await this.#statement(this.#factsInsert(batch, stored));
    } catch (e) {
      this.#notifyLater();
      const conflict = constraintConflict(e, batch.query);
      if (conflict !== undefined) return conflict;
      throw e;
    }
    this.#notifyLater();
    return this.#inserted(batch, stored, rows[0]);
  }

  /** The outcome of the facts insert whose row is `row`: stored, refused on its lease, or late. */
  #inserted(
    batch: AppendBatch,
    stored: readonly StoredFact[],
    row: InsertedRow | undefined,
  ): AppendOutcome {
    if (Number(row?.inserted ?? 0) !== stored.length) {
      const token = batch.fencingToken;
      const lease = leaseOf(row);
      if (token !== undefined && lease?.token !== token) throw leaseLost(batch.query, token, lease);
      this.#heads.delete(batch.query);
      return {
        ok: false,
        conflict: "sequence",
        message: `loop ${batch.query} is no longer at sequence ${batch.expectedLastSequence}: another writer appended first`,
      };
    }
    this.#remember(batch.query, stored.at(-1));
    return { ok: true, stored: [...stored] };
  }

  /**
   * The statement inserting `stored` (see #insertFacts), prepared under a name per shape (how many
   * facts, fenced or not); its one row says how many it inserted, and a fenced write's lease.
   */
  #factsInsert(batch: AppendBatch, stored: readonly StoredFact[]): pg.QueryConfig {
    const token = batch.fencingToken;
    const values: unknown[] = [batch.query, batch.expectedLastSequence, token ?? null];
    const rows = stored.map((s) => {
      const at = values.length;
      values.push(s.fact.sequence, s.chargeKey, s.fact.step.kind, storedText(s.fact), s.hash);
      return `($1, $${at + 1}::integer, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5})`;
    });
    const lease =
      token === undefined
        ? ""
        : `lease AS (SELECT holder, token FROM ${this.#t.leases} WHERE query = $1 FOR SHARE), `;
    const text =
      `WITH ${lease}inserted AS (INSERT INTO ${this.#t.facts} (query, sequence, charge_key, kind, fact, hash) ` +
      `SELECT * FROM (VALUES ${rows.join(", ")}) AS v (query, sequence, charge_key, kind, fact, hash) ` +
      `WHERE (SELECT COALESCE(MAX(sequence), 0) FROM ${this.#t.facts} WHERE query = $1) = $2::integer` +
      (token === undefined ? "" : " AND EXISTS (SELECT 1 FROM lease WHERE token = $3::bigint)") +
      " RETURNING 1) SELECT (SELECT count(*) FROM inserted) AS inserted" +
      (token === undefined
        ? ", $3::bigint AS token"
        : ", (SELECT holder FROM lease) AS holder, (SELECT token FROM lease) AS token");
    const name = `warrant-append-${stored.length}${token === undefined ? "" : "-fenced"}`;
    return { name, text, values };
  }

  /**
   * The batch's facts as stored, when they are at the sequences it expected with exactly its
   * content, and its records are stored too: an earlier attempt (or a writer with the very same
   * facts) committed them. The facts commit only with their records, so both are checked.
   */
  async #landed(
    batch: AppendBatch,
    records: readonly StoredRecord[],
  ): Promise<AppendOutcome | undefined> {
    const { rows } = await this.#pool.query<{ fact: string; charge_key: string; hash: string }>(
      `SELECT fact, charge_key, hash FROM ${this.#t.facts} WHERE query = $1 AND sequence > $2 ` +
        "ORDER BY sequence LIMIT $3",
      [batch.query, batch.expectedLastSequence, batch.facts.length],
    );
    if (rows.length !== batch.facts.length) return undefined;
    if (!rows.every((r, i) => r.fact === storedText(batch.facts[i]))) return undefined;
    if (!(await this.#allStored(records))) return undefined;
    const stored = rows.map((r) => ({
      fact: JSON.parse(r.fact) as Fact,
      chargeKey: r.charge_key,
      hash: r.hash,
    }));
    this.#remember(batch.query, stored.at(-1));
    return { ok: true, stored };
  }

  async #allStored(records: readonly StoredRecord[]): Promise<boolean> {
    if (records.length === 0) return true;
    const { rows } = await this.#pool.query<StoredRecord>(
      `SELECT ref, kind, query, body FROM ${this.#t.records} WHERE ref = ANY($1)`,
      [records.map((r) => r.ref)],
    );
    const byRef = new Map(rows.map((r) => [r.ref, r]));
    return records.every((r) => {
      const old = byRef.get(r.ref);
      return old !== undefined && sameRecord(old, r);
    });
  }

  /**
   * Positions come from a sequence as facts are inserted, with no lock, so they may commit out of
   * order; the feed gives only positions below the oldest append still in flight (schema version
   * 7, `warrant_feed_after`), so a reader that has seen a position never later finds a new fact
   * below it. Watching holds one pooled connection LISTENing on `warrant_changes` (every write of
   * this schema notifies it after COMMIT) and also says "changed" every `safetyMs`, should a
   * notification be lost with its connection (which is then replaced).
   */
  changeFeed(safetyMs = 30_000): ChangeFeed {
    const schema = quote(this.#schema);
    return {
      factsAfter: async (position, limit) => {
        const { rows } = await this.#query<{ position: string; query: string; fact: string }>(
          `SELECT position, query, fact FROM ${schema}.warrant_feed_after($1, $2)`,
          [position, limit],
        );
        return rows.map((r) => ({
          position: Number(r.position),
          query: r.query,
          fact: JSON.parse(r.fact) as Fact,
        }));
      },
      lastPosition: async () => {
        const { rows } = await this.#query<{ position: string }>(
          `SELECT ${schema}.warrant_feed_last() AS position`,
          [],
        );
        return Number(rows[0]?.position ?? 0);
      },
      watch: async (onChange) => {
        let stopped = false;
        let client: pg.PoolClient | undefined;
        const listen = async (): Promise<void> => {
          const c = await this.#pool.connect();
          c.on("notification", (n) => {
            if (n.payload === this.#schema) onChange();
          });
          c.on("error", () => {
            if (client !== c) return;
            client = undefined;
            c.release(true);
            if (!stopped) void listen().catch(() => {});
          });
          await c.query("LISTEN warrant_changes");
          client = c;
          onChange();
        };
        await listen();
        const timer = setInterval(() => {
          if (client === undefined && !stopped) void listen().catch(() => {});
          onChange();
        }, safetyMs);
        timer.unref();
        return async () => {
          stopped = true;
          clearInterval(timer);
          const c = client;
          client = undefined;
          if (c === undefined) return;
          try {
            await c.query("UNLISTEN warrant_changes");
            c.release();
          } catch (e) {
            c.release(e as Error);
          }
        };
      },
    };
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

  async putRecords(records: readonly LedgerRecord[], fence?: Fence): Promise<void> {
    for (const r of records) assertRecordShape(r, fence?.query);
    if (fence !== undefined) assertToken(fence.token);
    const stored = toStoredRecords(records);
    if (stored.length === 0 && fence === undefined) return;
    await this.#retry("putRecords", async (attempt) => {
      try {
        await inTransaction(this.#pool, async (client) => {
          if (fence !== undefined) await this.#checkFence(client, fence);
          await this.#insertRecords(client, stored);
        });
        this.#notifyLater();
      } catch (e) {
        const lost = e instanceof WarrantError && e.code === "store/lease-lost";
        if (lost && attempt.afterFailure && (await this.#allStored(stored))) return;
        throw e;
      }
    });
  }

  async readMemory(key: MemoryKey, passageRef: string): Promise<MemoryRead> {
    return this.#retry("readMemory", () => this.#memory.read(this.#pool, key, passageRef));
  }

  async appendMemory(
    version: MemoryVersion,
    record: LedgerRecord,
    fence?: Fence,
  ): Promise<boolean> {
    assertMemoryShape(version, record);
    if (fence !== undefined) assertToken(fence.token);
    const stored = toStoredRecords([record]);
    return this.#retry("appendMemory", async () => {
      const written = await inTransaction(this.#pool, async (client) => {
        if (fence !== undefined) await this.#checkFence(client, fence);
        if (!(await this.#memory.insert(client, version))) return false;
        await this.#insertRecords(client, stored);
        return true;
      });
      if (written) this.#notifyLater();
      return written;
    });
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
    return this.#retry("postOperatorAct", async (attempt) => {
      // The partial unique index on (query, target) of counting acts makes the first act win; a
      // concurrent insert of the same target waits for the first to commit, then does nothing.
      const inserted = await this.#pool.query(
        `INSERT INTO ${this.#t.acts} (query, kind, target, text, operator, at) VALUES ($1, $2, $3, $4, $5, $6) ` +
          "ON CONFLICT DO NOTHING",
        [act.query, act.kind, act.target, act.text ?? null, act.operator, act.at],
      );
      if (inserted.rowCount === 1) {
        this.#notifyLater();
        return { posted: true };
      }
      const { rows } = await this.#pool.query<ActRow>(
        `SELECT query, kind, target, text, operator, at FROM ${this.#t.acts} WHERE query = $1 AND target = $2 AND counts`,
        [act.query, act.target],
      );
      const counting = actOfRow(rows[0] as ActRow);
      // A retry whose first attempt committed (the connection was cut before the answer) finds its
      // own act counting: the same act, every field to the millisecond of `at`, is that attempt's.
      return attempt.afterFailure && sameAct(counting, act)
        ? { posted: true }
        : { posted: false, counting };
    });
  }

  async hostKey(): Promise<string | undefined> {
    const { rows } = await this.#query<{ value: string }>(
      `SELECT value FROM ${quote(this.#schema)}.warrant_meta WHERE key = 'host_key'`,
      [],
    );
    return rows[0]?.value;
  }

  async recordHostKey(publicKey: string): Promise<string> {
    await this.#query(
      `INSERT INTO ${quote(this.#schema)}.warrant_meta (key, value) VALUES ('host_key', $1) ON CONFLICT DO NOTHING`,
      [publicKey],
    );
    return (await this.hostKey()) ?? publicKey;
  }

  async readOperatorActs(query: string): Promise<readonly OperatorAct[]> {
    const { rows } = await this.#query<ActRow>(
      `SELECT query, kind, target, text, operator, at FROM ${this.#t.acts} WHERE query = $1 AND counts ORDER BY id`,
      [query],
    );
    return rows.map(actOfRow);
  }

  acquireLease(
    query: string,
    holder: string,
    ttlMs: number,
    now: Date,
  ): Promise<LeaseGrant | undefined> {
    // A retry after a cut connection finds its own lease (taken by the attempt that committed)
    // and extends it under the same token.
    return this.#retry("acquireLease", () => this.#leases.acquire(query, holder, ttlMs, now));
  }

  renewLease(
    query: string,
    holder: string,
    token: number,
    ttlMs: number,
    now: Date,
  ): Promise<boolean> {
    return this.#retry("renewLease", () => this.#leases.renew(query, holder, token, ttlMs, now));
  }

  releaseLease(query: string, holder: string): Promise<void> {
    return this.#retry("releaseLease", () => this.#leases.release(query, holder));
  }

  leases(): Promise<readonly LeaseInfo[]> {
    return this.#retry("leases", () => this.#leases.list());
  }

  registerWorker(worker: WorkerRegistration): Promise<void> {
    return this.#retry("registerWorker", () => this.#leases.register(worker));
  }

  heartbeatWorker(id: string, now: Date): Promise<boolean> {
    return this.#retry("heartbeatWorker", () => this.#leases.heartbeat(id, now));
  }

  deregisterWorker(id: string): Promise<void> {
    return this.#retry("deregisterWorker", () => this.#leases.deregister(id));
  }

  listWorkers(): Promise<readonly WorkerInfo[]> {
    return this.#retry("listWorkers", () => this.#leases.workers());
  }

  pruneWorkers(before: Date): Promise<readonly string[]> {
    return this.#retry("pruneWorkers", () => this.#leases.prune(before));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#notifyTimer !== undefined) {
      clearTimeout(this.#notifyTimer);
      this.#notifyTimer = undefined;
      await this.#sendNotify();
    }
    await this.#pool.end();
  }

  #remember(query: string, last: StoredFact | undefined): void {
    if (last === undefined) return;
    if (this.#heads.size >= 10_000 && !this.#heads.has(query)) this.#heads.clear();
    this.#heads.set(query, { sequence: last.fact.sequence, hash: last.hash });
  }

  /**
   * A fenced write's check, in its transaction: the lease row is locked FOR SHARE until COMMIT, so
   * no takeover commits in between, and one in progress is waited for and its token seen.
   */
  async #checkFence(client: pg.PoolClient, fence: Fence): Promise<void> {
    const { rows } = await client.query<LeaseRow>(
      `SELECT holder, token FROM ${this.#t.leases} WHERE query = $1 FOR SHARE`,
      [fence.query],
    );
    const lease = leaseOf(rows[0]);
    if (lease?.token !== fence.token) throw leaseLost(fence.query, fence.token, lease);
  }

  /**
   * After a write: one notification (channel `warrant_changes`) at the end of the gap since the last
   * one, for every write until then. Sent after COMMIT, never in the writing transaction: a NOTIFY
   * there would make its COMMIT take a database-wide lock through the WAL flush. Best effort: a lost
   * one is made up by the watchers' safety tick.
   */
  #notifyLater(): void {
    if (this.#notifyTimer !== undefined || this.#closed) return;
    const wait = Math.max(0, this.#notifiedAt + NOTIFY_GAP_MS - performance.now());
    this.#notifyTimer = setTimeout(() => {
      this.#notifyTimer = undefined;
      void this.#sendNotify();
    }, wait);
  }

  async #sendNotify(): Promise<void> {
    this.#notifiedAt = performance.now();
    await this.#pool
      .query("SELECT pg_notify('warrant_changes', $1)", [this.#schema])
      .catch(() => {});
  }

  /** `op` retried while it fails transiently; what it finally throws, as a store error. */
  async #retry<T>(operation: string, op: (attempt: Attempt) => Promise<T>): Promise<T> {
    try {
      return await retryTransient(operation, this.#retryOptions, isTransientPgError, op);
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

  #query<R extends pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>> {
    return this.#retry("query", () => this.#pool.query<R>(text, values));
  }
}

interface LeaseRow {
  readonly holder?: string | null;
  readonly token?: string | null;
}

/** What the facts insert returns: how many it inserted, and a fenced write's lease row. */
interface InsertedRow extends LeaseRow {
  readonly inserted: string;
}

/** The lease in a row read with the loop's lease columns, if the loop has a lease. */
function leaseOf(
  row: LeaseRow | undefined,
): { readonly holder: string; readonly token: number } | undefined {
  return row?.holder == null || row.token == null
    ? undefined
    : { holder: row.holder, token: Number(row.token) };
}

function sameAct(a: OperatorAct, b: OperatorAct): boolean {
  return (
    a.query === b.query &&
    a.kind === b.kind &&
    a.target === b.target &&
    (a.text ?? null) === (b.text ?? null) &&
    a.operator === b.operator &&
    a.at === b.at
  );
}
