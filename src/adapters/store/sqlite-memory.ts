// Writable agent memory in SQLite (table warrant_memory, migration 5): a version and its
// `memoryWrite` record are written in one IMMEDIATE transaction, after the fence check, so a write
// is either wholly in the ledger or not at all; the primary key on (key, version) lets exactly one
// of two concurrent writers take a version.
import type Database from "better-sqlite3";
import type { MemoryKey, MemoryRead, MemoryVersion } from "../../core/records/memory-write.js";
import {
  MEMORY_COLUMNS,
  type MemoryRow,
  memoryKeyValues,
  memoryOfRow,
  memoryRowValues,
  sameWrite,
} from "./memory-rows.js";

const KEY = "agent = ? AND path = ? AND scope = ? AND namespace = ?";

export class SqliteMemory {
  readonly #stmt;
  readonly #appendTx: Database.Transaction<
    (version: MemoryVersion, check: () => void, record: () => void) => boolean
  >;

  constructor(db: Database.Database) {
    this.#stmt = {
      latest: db.prepare(
        `SELECT ${MEMORY_COLUMNS} FROM warrant_memory WHERE ${KEY} ORDER BY version DESC LIMIT 1`,
      ),
      at: db.prepare(`SELECT ${MEMORY_COLUMNS} FROM warrant_memory WHERE ${KEY} AND version = ?`),
      written: db.prepare(
        `SELECT ${MEMORY_COLUMNS} FROM warrant_memory WHERE ${KEY} AND passage_ref = ? ORDER BY version`,
      ),
      insert: db.prepare(
        `INSERT INTO warrant_memory (${MEMORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ` +
          "ON CONFLICT DO NOTHING",
      ),
    };
    this.#appendTx = db.transaction(
      (version: MemoryVersion, check: () => void, record: () => void): boolean => {
        check();
        const k = memoryKeyValues(version.key);
        const latest = this.#stmt.latest.get(...k) as MemoryRow | undefined;
        const fresh =
          Number(latest?.version ?? 0) + 1 === version.version &&
          this.#stmt.insert.run(...memoryRowValues(version)).changes === 1;
        // Already there: the same write again (its record landed with it), or another's.
        if (!fresh) {
          return sameWrite(this.#stmt.at.get(...k, version.version) as MemoryRow, version);
        }
        record();
        return true;
      },
    );
  }

  read(key: MemoryKey, passageRef: string): MemoryRead {
    const k = memoryKeyValues(key);
    const latestRow = this.#stmt.latest.get(...k) as MemoryRow | undefined;
    const written = (this.#stmt.written.all(...k, passageRef) as MemoryRow[]).map(memoryOfRow);
    const latest = latestRow === undefined ? undefined : memoryOfRow(latestRow);
    const first = written[0];
    if (first === undefined) return { seen: latest, latest, written };
    const seenRow = this.#stmt.at.get(...k, first.version - 1) as MemoryRow | undefined;
    return { seen: seenRow === undefined ? undefined : memoryOfRow(seenRow), latest, written };
  }

  /** `check` (the fence), the version, then `record`, in one IMMEDIATE transaction. */
  append(version: MemoryVersion, check: () => void, record: () => void): boolean {
    return this.#appendTx.immediate(version, check, record);
  }
}
