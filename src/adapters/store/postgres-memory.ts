// Writable agent memory in PostgreSQL (table warrant_memory, migration 5): a version and its
// `memoryWrite` record are written in one transaction, after the fence check, so a write is
// either wholly in the ledger or not at all. The primary key on (key, version) lets exactly one of
// two concurrent writers take a version; a retried write that already landed is found again.
import type pg from "pg";
import type { MemoryKey, MemoryRead, MemoryVersion } from "../../core/records/memory-write.js";
import {
  MEMORY_COLUMNS,
  type MemoryRow,
  memoryKeyValues,
  memoryOfRow,
  memoryRowValues,
  sameWrite,
} from "./memory-rows.js";

const KEY = "agent = $1 AND path = $2 AND scope = $3 AND namespace = $4";

export class PostgresMemory {
  readonly #table: string;

  constructor(table: string) {
    this.#table = table;
  }

  async read(db: pg.Pool | pg.PoolClient, key: MemoryKey, passageRef: string): Promise<MemoryRead> {
    const k = memoryKeyValues(key);
    const t = this.#table;
    const latest = await db.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM ${t} WHERE ${KEY} ORDER BY version DESC LIMIT 1`,
      k,
    );
    const written = await db.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM ${t} WHERE ${KEY} AND passage_ref = $5 ORDER BY version`,
      [...k, passageRef],
    );
    const latestRow = latest.rows[0];
    const mine = written.rows.map(memoryOfRow);
    const first = mine[0];
    const latestVersion = latestRow === undefined ? undefined : memoryOfRow(latestRow);
    if (first === undefined) return { seen: latestVersion, latest: latestVersion, written: mine };
    const seen = await db.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM ${t} WHERE ${KEY} AND version = $5`,
      [...k, first.version - 1],
    );
    const seenRow = seen.rows[0];
    return {
      seen: seenRow === undefined ? undefined : memoryOfRow(seenRow),
      latest: latestVersion,
      written: mine,
    };
  }

  /** Inside the caller's transaction (fence already checked): the version, or false on a conflict. */
  async insert(client: pg.PoolClient, version: MemoryVersion): Promise<boolean> {
    const t = this.#table;
    const k = memoryKeyValues(version.key);
    const latest = await client.query<{ version: number | string }>(
      `SELECT version FROM ${t} WHERE ${KEY} ORDER BY version DESC LIMIT 1`,
      k,
    );
    const expected = Number(latest.rows[0]?.version ?? 0) + 1;
    if (expected === version.version) {
      const placeholders = Array.from({ length: 11 }, (_, i) => `$${i + 1}`).join(", ");
      const inserted = await client.query(
        `INSERT INTO ${t} (${MEMORY_COLUMNS}) VALUES (${placeholders}) ON CONFLICT DO NOTHING`,
        memoryRowValues(version),
      );
      if (inserted.rowCount === 1) return true;
    }
    const at = await client.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM ${t} WHERE ${KEY} AND version = $5`,
      [...k, version.version],
    );
    return sameWrite(at.rows[0], version);
  }
}
