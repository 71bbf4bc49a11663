// SQL plumbing shared by the PostgreSQL store's parts: quoted table names, advisory lock keys and a
// transaction on one pooled client.
import { sha256 } from "@noble/hashes/sha2.js";
import type pg from "pg";

/** The store's tables, schema-qualified and quoted. */
export interface PgTables {
  readonly facts: string;
  readonly records: string;
  readonly acts: string;
  readonly leases: string;
  readonly leaseTokens: string;
  readonly workers: string;
  readonly memory: string;
}

export function pgTables(schema: string): PgTables {
  const q = quote(schema);
  return {
    facts: `${q}.warrant_facts`,
    records: `${q}.warrant_records`,
    acts: `${q}.warrant_operator_acts`,
    leases: `${q}.warrant_leases`,
    leaseTokens: `${q}.warrant_lease_tokens`,
    workers: `${q}.warrant_workers`,
    memory: `${q}.warrant_memory`,
  };
}

export function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/**
 * The statement taking a loop's transaction-scoped advisory lock. Appends, fenced record writes and
 * lease requests of the loop all take it first, so a takeover never commits between a fenced
 * write's token check and its commit, and a write after a takeover's commit sees the new token.
 */
export function loopLock(schema: string, query: string): string {
  return `SELECT pg_advisory_xact_lock(${lockKey(`${schema}\0${query}`)})`;
}

/** A signed 64-bit advisory lock key for `name` (inlined as an integer literal: no injection). */
export function lockKey(name: string): string {
  const b = sha256(new TextEncoder().encode(name));
  let n = 0n;
  for (let i = 0; i < 8; i++) n = (n << 8n) | BigInt(b[i] as number);
  return BigInt.asIntN(64, n).toString();
}

/**
 * Run `fn` after BEGIN and COMMIT on one pooled client; ROLLBACK and rethrow on any error. A client
 * whose ROLLBACK fails too (its connection is gone) is dropped from the pool, not reused.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
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
