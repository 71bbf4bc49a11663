// Leases with fencing tokens and the worker registry in PostgreSQL. A lease request is one
// transaction under the loop's advisory lock, the lock every fenced write of the loop holds while
// it checks its token and commits (postgres-ledger-store.ts): a takeover waits for a write in
// flight, and a write after a takeover sees the new token.
import type pg from "pg";
import type { LeaseGrant, LeaseInfo } from "../../core/ports/leases.js";
import type { WorkerInfo, WorkerRegistration } from "../../core/ports/ledger-store.js";
import { compareBytes } from "./batch.js";
import { decideLease } from "./lease-rules.js";
import { inTransaction, loopLock, type PgTables } from "./postgres-sql.js";

interface LeaseRow {
  readonly query: string;
  readonly holder: string;
  readonly token: string;
  readonly expires_at: Date;
}

interface WorkerRow {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly started_at: Date;
  readonly heartbeat_at: Date;
  readonly loops: string[];
}

export class PostgresLeases {
  readonly #pool: pg.Pool;
  readonly #schema: string;
  readonly #t: PgTables;

  constructor(pool: pg.Pool, schema: string, tables: PgTables) {
    this.#pool = pool;
    this.#schema = schema;
    this.#t = tables;
  }

  acquire(
    query: string,
    holder: string,
    ttlMs: number,
    now: Date,
  ): Promise<LeaseGrant | undefined> {
    return inTransaction(this.#pool, async (client) => {
      await client.query(loopLock(this.#schema, query));
      const { rows } = await client.query<{
        last: string | null;
        holder: string | null;
        token: string | null;
        expires_at: Date | null;
      }>(
        `SELECT (SELECT last_token FROM ${this.#t.leaseTokens} WHERE query = $1) AS last, ` +
          `l.holder, l.token, l.expires_at FROM (SELECT 1) AS one ` +
          `LEFT JOIN ${this.#t.leases} AS l ON l.query = $1`,
        [query],
      );
      const row = rows[0];
      const current =
        row?.holder == null || row.token === null || row.expires_at === null
          ? undefined
          : { holder: row.holder, token: Number(row.token), expiresAt: row.expires_at.getTime() };
      const decision = decideLease(current, Number(row?.last ?? 0), holder, now.getTime());
      const until = new Date(now.getTime() + ttlMs);
      switch (decision.kind) {
        case "refused":
          return undefined;
        case "extend":
          await client.query(`UPDATE ${this.#t.leases} SET expires_at = $2 WHERE query = $1`, [
            query,
            until,
          ]);
          return { token: decision.token };
        case "take":
          // One statement: the token is spent and the lease taken together.
          await client.query(
            `WITH spent AS (INSERT INTO ${this.#t.leaseTokens} (query, last_token) VALUES ($1, $3) ` +
              "ON CONFLICT (query) DO UPDATE SET last_token = EXCLUDED.last_token) " +
              `INSERT INTO ${this.#t.leases} (query, holder, token, expires_at) VALUES ($1, $2, $3, $4) ` +
              "ON CONFLICT (query) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token, " +
              "expires_at = EXCLUDED.expires_at",
            [query, holder, decision.token, until],
          );
          return { token: decision.token };
        default:
          return decision satisfies never;
      }
    });
  }

  /** One statement: a takeover updating the row first makes it match nothing. */
  async renew(
    query: string,
    holder: string,
    token: number,
    ttlMs: number,
    now: Date,
  ): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `UPDATE ${this.#t.leases} SET expires_at = $4 WHERE query = $1 AND holder = $2 AND token = $3`,
      [query, holder, token, new Date(now.getTime() + ttlMs)],
    );
    return rowCount === 1;
  }

  async release(query: string, holder: string): Promise<void> {
    await this.#pool.query(`DELETE FROM ${this.#t.leases} WHERE query = $1 AND holder = $2`, [
      query,
      holder,
    ]);
  }

  async list(): Promise<readonly LeaseInfo[]> {
    const { rows } = await this.#pool.query<LeaseRow>(
      `SELECT query, holder, token, expires_at FROM ${this.#t.leases} ORDER BY query COLLATE "C"`,
    );
    return rows.map((r) => ({
      query: r.query,
      holder: r.holder,
      token: Number(r.token),
      until: r.expires_at,
    }));
  }

  async register(w: WorkerRegistration): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#t.workers} (id, host, pid, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, $4) ` +
        "ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, " +
        "started_at = EXCLUDED.started_at, heartbeat_at = EXCLUDED.heartbeat_at",
      [w.id, w.host, w.pid, w.started],
    );
  }

  async heartbeat(id: string, now: Date): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `UPDATE ${this.#t.workers} SET heartbeat_at = $2 WHERE id = $1`,
      [id, now],
    );
    return rowCount === 1;
  }

  async deregister(id: string): Promise<void> {
    await this.#pool.query(`DELETE FROM ${this.#t.workers} WHERE id = $1`, [id]);
  }

  async workers(): Promise<readonly WorkerInfo[]> {
    const { rows } = await this.#pool.query<WorkerRow>(
      "SELECT w.id, w.host, w.pid, w.started_at, w.heartbeat_at, " +
        `COALESCE(array_agg(l.query ORDER BY l.query COLLATE "C") FILTER (WHERE l.query IS NOT NULL), '{}') AS loops ` +
        `FROM ${this.#t.workers} AS w LEFT JOIN ${this.#t.leases} AS l ` +
        // heldBy (lease-rules.ts): the worker's id, or `<id>/<drive>`.
        "ON l.holder = w.id OR left(l.holder, length(w.id) + 1) = w.id || '/' " +
        `GROUP BY w.id ORDER BY w.id COLLATE "C"`,
    );
    return rows.map((r) => ({
      id: r.id,
      host: r.host,
      pid: r.pid,
      started: r.started_at,
      lastHeartbeat: r.heartbeat_at,
      loops: r.loops,
    }));
  }

  async prune(before: Date): Promise<readonly string[]> {
    const { rows } = await this.#pool.query<{ id: string }>(
      `DELETE FROM ${this.#t.workers} WHERE heartbeat_at < $1 RETURNING id`,
      [before],
    );
    return rows.map((r) => r.id).sort(compareBytes);
  }
}
