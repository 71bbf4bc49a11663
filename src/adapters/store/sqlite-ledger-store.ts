// The SQLite LedgerStore (better-sqlite3 12): WAL with synchronous=FULL, so a commit is on disk
// before append() resolves; each append checks the expected sequence (and a fenced one its lease
// token) and writes its facts and records together, in a savepoint of an IMMEDIATE transaction
// shared by concurrent appends. A lock another process holds past the busy timeout is waited for
// again, with back-off, for the retry window.
import Database from "better-sqlite3";
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
  chargeKeyConflictMessage,
  fromStoredRecord,
  recordConflict,
  type StoredRecord,
  sameRecord,
  sequenceConflictMessage,
  storedText,
  toStoredRecords,
} from "./batch.js";
import { assertToken } from "./lease-rules.js";
import { assertMemoryShape } from "./memory-rows.js";
import {
  LATEST_SCHEMA_VERSION,
  parseVersion,
  pendingMigrations,
  versionTooNew,
} from "./schema-version.js";
import { SqliteLeases } from "./sqlite-leases.js";
import { SqliteMemory } from "./sqlite-memory.js";
import { SQLITE_META_DDL, SQLITE_MIGRATIONS } from "./sqlite-migrations.js";
import {
  DEFAULT_STORE_RETRY_MS,
  type RetryOptions,
  retryDelayMs,
  retryTransient,
} from "./transient-retry.js";

export interface SqliteStoreOptions {
  /** How long a writer waits for another process's write lock, in ms (default 10 000). */
  readonly busyTimeoutMs?: number;
  /** The URI to report (default `sqlite:<path>`). */
  readonly uri?: string;
  /** Retries of an operation that found the lock busy past the busy timeout (default: 60 s). */
  readonly retry?: RetryOptions;
}

interface FactRow {
  readonly fact: string;
  readonly charge_key: string;
  readonly hash: string;
}

interface Pending {
  readonly batch: AppendBatch;
  readonly resolve: (outcome: AppendOutcome) => void;
  readonly reject: (error: unknown) => void;
  /** When its group first found the lock busy (epoch ms). */
  busySince?: number;
  busyAttempts?: number;
}

type Settled =
  | { readonly ok: true; readonly outcome: AppendOutcome }
  | { readonly ok: false; readonly error: unknown };

/** Open (creating if absent) and migrate the SQLite file at `path`; the folder must exist. */
export function openSqliteLedgerStore(
  path: string,
  opts: SqliteStoreOptions = {},
): SqliteLedgerStore {
  const uri = opts.uri ?? `sqlite:${path}`;
  const db = new Database(path, { timeout: opts.busyTimeoutMs ?? 10_000 });
  try {
    // WAL: readers never block the writer. FULL: the WAL is fsynced at every commit, so a charge
    // acknowledged by append() survives kill -9 and power loss.
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    migrateSqlite(db, uri);
    return new SqliteLedgerStore(db, uri, opts.retry ?? {});
  } catch (e) {
    db.close();
    throw mapSqliteError(e, uri);
  }
}

/** Bring the schema to LATEST_SCHEMA_VERSION in one transaction; refuse a newer store. */
export function migrateSqlite(
  db: Database.Database,
  uri: string,
  target = LATEST_SCHEMA_VERSION,
): void {
  db.transaction(() => {
    db.exec(SQLITE_META_DDL);
    const row = db.prepare("SELECT value FROM warrant_meta WHERE key = 'schema_version'").get() as
      | { value: string }
      | undefined;
    const from = parseVersion(uri, row?.value);
    if (from > LATEST_SCHEMA_VERSION) throw versionTooNew(uri, from);
    const steps = pendingMigrations(SQLITE_MIGRATIONS, from).filter((m) => m.version <= target);
    if (steps.length === 0) return;
    for (const step of steps) db.exec(step.sql);
    db.prepare(
      "INSERT INTO warrant_meta (key, value) VALUES ('schema_version', ?) " +
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ).run(String(steps.at(-1)?.version));
  }).immediate();
}

export class SqliteLedgerStore implements LedgerStore {
  readonly uri: string;
  readonly #db: Database.Database;
  readonly #appendTx: Database.Transaction<(batch: AppendBatch) => AppendOutcome>;
  readonly #groupTx: Database.Transaction<(group: readonly Pending[], settled: Settled[]) => void>;
  readonly #pending: Pending[] = [];
  #flushScheduled = false;
  #retryTimer: NodeJS.Timeout | undefined;
  readonly #putRecordsTx: Database.Transaction<
    (records: readonly StoredRecord[], fence: Fence | undefined) => void
  >;
  readonly #leases: SqliteLeases;
  readonly #memory: SqliteMemory;
  readonly #insertRecords: (records: readonly StoredRecord[]) => void;
  readonly #retryOptions: RetryOptions;
  readonly #stmt;

  constructor(db: Database.Database, uri: string, retry: RetryOptions = {}) {
    this.#db = db;
    this.uri = uri;
    this.#retryOptions = retry;
    this.#leases = new SqliteLeases(db);
    this.#memory = new SqliteMemory(db);
    this.#stmt = {
      last: db.prepare(
        "SELECT sequence, hash FROM warrant_facts WHERE query = ? ORDER BY sequence DESC LIMIT 1",
      ),
      insertFact: db.prepare(
        "INSERT INTO warrant_facts (query, sequence, charge_key, kind, fact, hash) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      readFacts: db.prepare(
        "SELECT fact, charge_key, hash FROM warrant_facts WHERE query = ? AND sequence > ? ORDER BY sequence",
      ),
      insertRecord: db.prepare(
        "INSERT INTO warrant_records (ref, kind, query, body) VALUES (?, ?, ?, ?) ON CONFLICT (ref) DO NOTHING",
      ),
      readRecord: db.prepare("SELECT ref, kind, query, body FROM warrant_records WHERE ref = ?"),
      listRecords: db.prepare(
        "SELECT ref, kind, query, body FROM warrant_records WHERE query = ? ORDER BY rowid",
      ),
      listLoops: db.prepare(
        "SELECT query, MAX(sequence) AS last FROM warrant_facts GROUP BY query ORDER BY query",
      ),
      // The partial unique index on (query, target) of counting acts makes the first act win.
      insertAct: db.prepare(
        "INSERT INTO warrant_operator_acts (query, kind, target, text, operator, at) VALUES (?, ?, ?, ?, ?, ?) " +
          "ON CONFLICT DO NOTHING",
      ),
      countingAct: db.prepare(
        "SELECT query, kind, target, text, operator, at FROM warrant_operator_acts " +
          "WHERE query = ? AND target = ? AND counts = 1",
      ),
      readActs: db.prepare(
        "SELECT query, kind, target, text, operator, at FROM warrant_operator_acts WHERE query = ? AND counts = 1 ORDER BY id",
      ),
      rawFacts: db.prepare(
        "SELECT sequence, charge_key AS chargeKey, kind, fact AS text, hash FROM warrant_facts WHERE query = ? ORDER BY sequence",
      ),
      rawRecords: db.prepare(
        "SELECT ref, kind, query, body AS text FROM warrant_records WHERE query = ? ORDER BY rowid",
      ),
    };
    const insertRecords = (records: readonly StoredRecord[]): void => {
      for (const r of records) {
        if (this.#stmt.insertRecord.run(r.ref, r.kind, r.query, r.body).changes === 1) continue;
        const old = this.#stmt.readRecord.get(r.ref) as StoredRecord | undefined;
        if (old === undefined || !sameRecord(old, r)) throw recordConflict(r.ref);
      }
    };
    this.#insertRecords = insertRecords;
    this.#appendTx = db.transaction((batch: AppendBatch): AppendOutcome => {
      if (batch.fencingToken !== undefined) {
        this.#leases.checkFence(batch.query, batch.fencingToken);
      }
      const last = this.#stmt.last.get(batch.query) as
        | { sequence: number; hash: string }
        | undefined;
      const lastSequence = last?.sequence ?? 0;
      if (lastSequence !== batch.expectedLastSequence) {
        return {
          ok: false,
          conflict: "sequence",
          message: sequenceConflictMessage(batch.query, batch.expectedLastSequence, lastSequence),
        };
      }
      const stored = chainFacts(last?.hash, batch.facts);
      for (const s of stored) {
        this.#stmt.insertFact.run(
          s.fact["query/id"],
          s.fact.sequence,
          s.chargeKey,
          s.fact.step.kind,
          storedText(s.fact),
          s.hash,
        );
      }
      insertRecords(toStoredRecords(batch.records ?? []));
      return { ok: true, stored };
    });
    this.#putRecordsTx = db.transaction(
      (records: readonly StoredRecord[], fence: Fence | undefined) => {
        if (fence !== undefined) this.#leases.checkFence(fence.query, fence.token);
        insertRecords(records);
      },
    );
    this.#groupTx = db.transaction((group: readonly Pending[], settled: Settled[]) => {
      for (const p of group) settled.push(this.#appendOne(p.batch));
    });
  }

  /**
   * Appends are group-committed: those made while the event loop is busy are written on the next
   * turn in one IMMEDIATE transaction, each in its own savepoint (a conflict or an error undoes only
   * that append), and all settle after the one COMMIT, so concurrent charges share one fsync. Each
   * still resolves only once its facts are durable.
   */
  async append(batch: AppendBatch): Promise<AppendOutcome> {
    assertBatchShape(batch);
    if (batch.fencingToken !== undefined) assertToken(batch.fencingToken);
    return new Promise<AppendOutcome>((resolve, reject) => {
      this.#pending.push({ batch, resolve, reject });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  /**
   * Write the waiting appends as one group. A group that finds the lock busy past the busy timeout
   * (nothing of it written) goes back to the head of the queue and is tried again after a back-off,
   * until the retry window since its first busy attempt has passed (or the store closes): then its
   * appends reject with `store/busy`.
   */
  #flush(closing = false): void {
    this.#flushScheduled = false;
    this.#retryTimer = undefined;
    const group = this.#pending.splice(0);
    if (group.length === 0) return;
    const settled: Settled[] = [];
    try {
      // IMMEDIATE takes the write lock before any sequence is read: no other process can slip in
      // between a check and its insert. The constraints are the backstop.
      this.#groupTx.immediate(group, settled);
    } catch (e) {
      const now = Date.now();
      const windowMs = this.#retryOptions.windowMs ?? DEFAULT_STORE_RETRY_MS;
      const since = Math.min(...group.map((p) => p.busySince ?? now));
      if (isBusy(e) && !closing && now - since < windowMs) {
        const attempt = Math.max(...group.map((p) => p.busyAttempts ?? 0)) + 1;
        for (const p of group) {
          p.busySince ??= now;
          p.busyAttempts = attempt;
        }
        this.#pending.unshift(...group);
        const delayMs = retryDelayMs(attempt, since + windowMs - now);
        this.#retryOptions.onRetry?.({ operation: "append", attempt, error: e, delayMs });
        this.#flushScheduled = true;
        this.#retryTimer = setTimeout(() => this.#flush(), delayMs);
        return;
      }
      const error = mapSqliteError(e, this.uri);
      for (const p of group) p.reject(error);
      return;
    }
    group.forEach((p, i) => {
      const s = settled[i] as Settled;
      if (s.ok) p.resolve(s.outcome);
      else p.reject(s.error);
    });
  }

  /** One append inside the group's transaction: a savepoint, rolled back if it throws. */
  #appendOne(batch: AppendBatch): Settled {
    try {
      return { ok: true, outcome: this.#appendTx(batch) };
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code === "SQLITE_CONSTRAINT_UNIQUE") {
        return {
          ok: true,
          outcome: {
            ok: false,
            conflict: "charge-key",
            message: chargeKeyConflictMessage(batch.query),
          },
        };
      }
      if (code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
        return {
          ok: true,
          outcome: {
            ok: false,
            conflict: "sequence",
            message: `loop ${batch.query} already has a fact at one of these sequences`,
          },
        };
      }
      return { ok: false, error: mapSqliteError(e, this.uri) };
    }
  }

  /**
   * Facts are never deleted, and SQLite has one writer at a time: a fact's rowid is its position
   * in commit order. Watching polls the greatest rowids of facts, records and acts (an index
   * lookup each), as other processes write the file too.
   */
  changeFeed(pollMs = 250): ChangeFeed {
    const after = this.#db.prepare(
      "SELECT rowid AS position, query, fact FROM warrant_facts WHERE rowid > ? ORDER BY rowid LIMIT ?",
    );
    const last = this.#db.prepare("SELECT COALESCE(MAX(rowid), 0) AS position FROM warrant_facts");
    const token = this.#db.prepare(
      "SELECT COALESCE((SELECT MAX(rowid) FROM warrant_facts), 0) || ' ' || " +
        "COALESCE((SELECT MAX(rowid) FROM warrant_records), 0) || ' ' || " +
        "COALESCE((SELECT MAX(id) FROM warrant_operator_acts), 0) AS token",
    );
    return {
      factsAfter: async (position, limit) => {
        const rows = await this.#run(
          "factsAfter",
          () => after.all(position, limit) as { position: number; query: string; fact: string }[],
        );
        return rows.map((r) => ({
          position: r.position,
          query: r.query,
          fact: JSON.parse(r.fact) as Fact,
        }));
      },
      lastPosition: async () =>
        (await this.#run("lastPosition", () => last.get() as { position: number })).position,
      watch: async (onChange) => {
        const read = () => (token.get() as { token: string | null }).token;
        let seen = read();
        const timer = setInterval(() => {
          if (!this.#db.open) return;
          let now: string | null;
          try {
            now = read();
          } catch {
            return; // busy: the next tick asks again
          }
          if (now !== seen) {
            seen = now;
            onChange();
          }
        }, pollMs);
        timer.unref();
        return async () => clearInterval(timer);
      },
    };
  }

  async readFacts(query: string, afterSequence = 0): Promise<readonly StoredFact[]> {
    const rows = await this.#run(
      "readFacts",
      () => this.#stmt.readFacts.all(query, afterSequence) as FactRow[],
    );
    return rows.map((r) => ({
      fact: JSON.parse(r.fact) as Fact,
      chargeKey: r.charge_key,
      hash: r.hash,
    }));
  }

  async putRecords(records: readonly LedgerRecord[], fence?: Fence): Promise<void> {
    for (const r of records) assertRecordShape(r, fence?.query);
    if (fence !== undefined) assertToken(fence.token);
    const stored = toStoredRecords(records);
    await this.#run("putRecords", () => this.#putRecordsTx.immediate(stored, fence));
  }

  async readMemory(key: MemoryKey, passageRef: string): Promise<MemoryRead> {
    return this.#run("readMemory", () => this.#memory.read(key, passageRef));
  }

  async appendMemory(
    version: MemoryVersion,
    record: LedgerRecord,
    fence?: Fence,
  ): Promise<boolean> {
    assertMemoryShape(version, record);
    if (fence !== undefined) assertToken(fence.token);
    const stored = toStoredRecords([record]);
    return this.#run("appendMemory", () =>
      this.#memory.append(
        version,
        () => {
          if (fence !== undefined) this.#leases.checkFence(fence.query, fence.token);
        },
        () => this.#insertRecords(stored),
      ),
    );
  }

  async readRecord(ref: string): Promise<LedgerRecord | undefined> {
    const row = await this.#run(
      "readRecord",
      () => this.#stmt.readRecord.get(ref) as StoredRecord | undefined,
    );
    return row === undefined ? undefined : fromStoredRecord(row);
  }

  async listRecords(query: string): Promise<readonly LedgerRecord[]> {
    const rows = await this.#run(
      "listRecords",
      () => this.#stmt.listRecords.all(query) as StoredRecord[],
    );
    return rows.map(fromStoredRecord);
  }

  async listLoops(): Promise<readonly LoopSummary[]> {
    const rows = await this.#run(
      "listLoops",
      () => this.#stmt.listLoops.all() as { query: string; last: number }[],
    );
    return rows.map((r) => ({ query: r.query, lastSequence: r.last }));
  }

  async readRawLoop(query: string): Promise<RawLoop> {
    return this.#run("readRawLoop", () => ({
      facts: this.#stmt.rawFacts.all(query) as RawLoop["facts"][number][],
      records: this.#stmt.rawRecords.all(query) as RawLoop["records"][number][],
    }));
  }

  async postOperatorAct(act: OperatorAct): Promise<PostedAct> {
    const { changes } = await this.#run("postOperatorAct", () =>
      this.#stmt.insertAct.run(
        act.query,
        act.kind,
        act.target,
        act.text ?? null,
        act.operator,
        act.at,
      ),
    );
    if (changes === 1) return { posted: true };
    const row = await this.#run(
      "postOperatorAct",
      () => this.#stmt.countingAct.get(act.query, act.target) as ActRow,
    );
    return { posted: false, counting: actOfRow(row) };
  }

  async hostKey(): Promise<string | undefined> {
    const row = await this.#run(
      "hostKey",
      () =>
        this.#db.prepare("SELECT value FROM warrant_meta WHERE key = 'host_key'").get() as
          | { value: string }
          | undefined,
    );
    return row?.value;
  }

  async recordHostKey(publicKey: string): Promise<string> {
    await this.#run("recordHostKey", () =>
      this.#db
        .prepare(
          "INSERT INTO warrant_meta (key, value) VALUES ('host_key', ?) ON CONFLICT DO NOTHING",
        )
        .run(publicKey),
    );
    return (await this.hostKey()) ?? publicKey;
  }

  async readOperatorActs(query: string): Promise<readonly OperatorAct[]> {
    const rows = await this.#run(
      "readOperatorActs",
      () => this.#stmt.readActs.all(query) as ActRow[],
    );
    return rows.map(actOfRow);
  }

  acquireLease(
    query: string,
    holder: string,
    ttlMs: number,
    now: Date,
  ): Promise<LeaseGrant | undefined> {
    return this.#run("acquireLease", () => this.#leases.acquire(query, holder, ttlMs, now));
  }

  renewLease(
    query: string,
    holder: string,
    token: number,
    ttlMs: number,
    now: Date,
  ): Promise<boolean> {
    return this.#run("renewLease", () => this.#leases.renew(query, holder, token, ttlMs, now));
  }

  async releaseLease(query: string, holder: string): Promise<void> {
    await this.#run("releaseLease", () => this.#leases.release(query, holder));
  }

  leases(): Promise<readonly LeaseInfo[]> {
    return this.#run("leases", () => this.#leases.list());
  }

  async registerWorker(worker: WorkerRegistration): Promise<void> {
    await this.#run("registerWorker", () => this.#leases.register(worker));
  }

  heartbeatWorker(id: string, now: Date): Promise<boolean> {
    return this.#run("heartbeatWorker", () => this.#leases.heartbeat(id, now));
  }

  async deregisterWorker(id: string): Promise<void> {
    await this.#run("deregisterWorker", () => this.#leases.deregister(id));
  }

  listWorkers(): Promise<readonly WorkerInfo[]> {
    return this.#run("listWorkers", () => this.#leases.workers());
  }

  pruneWorkers(before: Date): Promise<readonly string[]> {
    return this.#run("pruneWorkers", () => this.#leases.prune(before));
  }

  async close(): Promise<void> {
    if (!this.#db.open) return;
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    this.#flush(true);
    this.#db.close();
  }

  /** The connection's durability settings, as SQLite reports them (for diagnostics and tests). */
  settings(): { journalMode: string; synchronous: string; busyTimeoutMs: number } {
    const names = ["off", "normal", "full", "extra"];
    const sync = this.#db.pragma("synchronous", { simple: true }) as number;
    return {
      journalMode: String(this.#db.pragma("journal_mode", { simple: true })),
      synchronous: names[sync] ?? String(sync),
      busyTimeoutMs: this.#db.pragma("busy_timeout", { simple: true }) as number,
    };
  }

  /** `fn` retried while the lock stays busy past the busy timeout; errors as store errors. */
  async #run<T>(operation: string, fn: () => T): Promise<T> {
    try {
      return await retryTransient(operation, this.#retryOptions, isBusy, async () => fn());
    } catch (e) {
      throw mapSqliteError(e, this.uri);
    }
  }
}

/** Another connection held the lock past the busy timeout: nothing of the statement was written. */
function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

/** Driver errors become WarrantError with a store code; our own WarrantErrors pass through. */
function mapSqliteError(e: unknown, uri: string): unknown {
  if (e instanceof WarrantError) return e;
  const code = (e as { code?: unknown }).code;
  const message = e instanceof Error ? e.message : String(e);
  if (isBusy(e)) {
    return new WarrantError("store/busy", `${uri}: another process held the lock too long`, {
      cause: e,
    });
  }
  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
    return new WarrantError(
      "store/unreadable",
      `${uri} is not a readable SQLite ledger: ${message}`,
      {
        cause: e,
      },
    );
  }
  return new WarrantError("store/io", `${uri}: ${message}`, { cause: e });
}
