// The SQLite schema, as versioned steps. A released step never changes: a store written by it is
// kept as a frozen fixture (test/fixtures/store/) and migrated forward by the later steps.
import type { Migration } from "./schema-version.js";

/** Created before any step: holds `schema_version`. */
export const SQLITE_META_DDL =
  "CREATE TABLE IF NOT EXISTS warrant_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    summary: "facts (one row per fact, chained by hash) and content-addressed records",
    sql: `
CREATE TABLE warrant_facts (
  query TEXT NOT NULL,
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  charge_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  fact TEXT NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (query, sequence),
  UNIQUE (query, charge_key)
);
CREATE TABLE warrant_records (
  ref TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  query TEXT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX warrant_records_by_query ON warrant_records (query);
`,
  },
  {
    version: 2,
    summary: "operator acts and driver leases",
    sql: `
CREATE TABLE warrant_operator_acts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  query TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('approve', 'deny', 'answer')),
  target TEXT NOT NULL,
  text TEXT,
  operator TEXT NOT NULL,
  at TEXT NOT NULL
);
CREATE INDEX warrant_operator_acts_by_query ON warrant_operator_acts (query, id);
CREATE TABLE warrant_leases (
  query TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
`,
  },
  {
    version: 3,
    summary: "fencing tokens on leases (never reused per loop) and the worker registry",
    sql: `
ALTER TABLE warrant_leases ADD COLUMN token INTEGER NOT NULL DEFAULT 1 CHECK (token >= 1);
CREATE INDEX warrant_leases_by_holder ON warrant_leases (holder);
CREATE TABLE warrant_lease_tokens (
  query TEXT PRIMARY KEY,
  last_token INTEGER NOT NULL CHECK (last_token >= 1)
);
INSERT INTO warrant_lease_tokens (query, last_token) SELECT query, token FROM warrant_leases;
CREATE TABLE warrant_workers (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL
);
`,
  },
  {
    version: 4,
    summary:
      "the first operator act for a target is the one that counts (one per query and target)",
    sql: `
ALTER TABLE warrant_operator_acts ADD COLUMN counts INTEGER NOT NULL DEFAULT 1;
UPDATE warrant_operator_acts SET counts = 0 WHERE EXISTS (
  SELECT 1 FROM warrant_operator_acts AS first
  WHERE first.query = warrant_operator_acts.query
    AND first.target = warrant_operator_acts.target
    AND first.id < warrant_operator_acts.id
);
CREATE UNIQUE INDEX warrant_operator_acts_counting ON warrant_operator_acts (query, target)
  WHERE counts = 1;
`,
  },
  {
    version: 5,
    summary: "writable agent memory: append-only versions per (agent, path, scope, namespace)",
    sql: `
CREATE TABLE warrant_memory (
  agent TEXT NOT NULL,
  path TEXT NOT NULL,
  scope TEXT NOT NULL CHECK (scope IN ('shared', 'namespace', 'thread')),
  namespace TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  content TEXT NOT NULL,
  digest TEXT NOT NULL,
  query TEXT NOT NULL,
  passage_ref TEXT NOT NULL,
  ordinal INTEGER NOT NULL CHECK (ordinal >= 1),
  written_at TEXT NOT NULL,
  PRIMARY KEY (agent, path, scope, namespace, version)
);
CREATE INDEX warrant_memory_by_passage ON warrant_memory (passage_ref);
`,
  },
  {
    version: 6,
    summary:
      "the change feed: a fact's position among all loops is its rowid (facts are never deleted, " +
      "one writer at a time), so nothing is added",
    sql: "-- facts keep their rowids: the change feed reads warrant_facts by rowid",
  },
  {
    version: 7,
    summary:
      "PostgreSQL appends without a store-wide lock; SQLite has one writer at a time, so nothing " +
      "changes",
    sql: "-- nothing: the change feed still reads warrant_facts by rowid",
  },
];
