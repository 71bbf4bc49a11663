// The PostgreSQL schema, as versioned steps run with search_path set to the store's schema. A
// released step never changes: a store written by it is kept as a frozen fixture
// (test/fixtures/store/) and migrated forward by the later steps.
import type { Migration } from "./schema-version.js";

/** Created before any step: holds `schema_version`. */
export const POSTGRES_META_DDL =
  "CREATE TABLE IF NOT EXISTS warrant_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
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
  CONSTRAINT warrant_facts_pkey PRIMARY KEY (query, sequence),
  CONSTRAINT warrant_facts_charge_key UNIQUE (query, charge_key)
);
CREATE TABLE warrant_records (
  position BIGINT GENERATED ALWAYS AS IDENTITY,
  ref TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  query TEXT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX warrant_records_by_query ON warrant_records (query, position);
`,
  },
  {
    version: 2,
    summary: "operator acts and driver leases",
    sql: `
CREATE TABLE warrant_operator_acts (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
  expires_at TIMESTAMPTZ NOT NULL
);
`,
  },
  {
    version: 3,
    summary: "fencing tokens on leases (never reused per loop) and the worker registry",
    sql: `
ALTER TABLE warrant_leases ADD COLUMN token BIGINT NOT NULL DEFAULT 1 CHECK (token >= 1);
ALTER TABLE warrant_leases ALTER COLUMN token DROP DEFAULT;
CREATE INDEX warrant_leases_by_holder ON warrant_leases (holder);
CREATE TABLE warrant_lease_tokens (
  query TEXT PRIMARY KEY,
  last_token BIGINT NOT NULL CHECK (last_token >= 1)
);
INSERT INTO warrant_lease_tokens (query, last_token) SELECT query, token FROM warrant_leases;
CREATE TABLE warrant_workers (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  started_at TIMESTAMPTZ NOT NULL,
  heartbeat_at TIMESTAMPTZ NOT NULL
);
`,
  },
  {
    version: 4,
    summary:
      "the first operator act for a target is the one that counts (one per query and target)",
    sql: `
ALTER TABLE warrant_operator_acts ADD COLUMN counts BOOLEAN NOT NULL DEFAULT TRUE;
UPDATE warrant_operator_acts AS a SET counts = FALSE WHERE EXISTS (
  SELECT 1 FROM warrant_operator_acts AS first
  WHERE first.query = a.query AND first.target = a.target AND first.id < a.id
);
CREATE UNIQUE INDEX warrant_operator_acts_counting ON warrant_operator_acts (query, target)
  WHERE counts;
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
  CONSTRAINT warrant_memory_pkey PRIMARY KEY (agent, path, scope, namespace, version)
);
CREATE INDEX warrant_memory_by_passage ON warrant_memory (passage_ref);
`,
  },
  {
    version: 6,
    summary:
      "the change feed: each fact gets a position among all loops, in commit order, and every " +
      "fact, record and operator act notifies channel warrant_changes",
    // A position is taken under a store-wide transaction lock held until COMMIT, so positions
    // commit in order: a reader that saw position N never later finds a new fact below N. The
    // lock is taken after the loop's own lock (never the other way round), so it cannot deadlock.
    sql: `
CREATE SEQUENCE warrant_fact_position;
ALTER TABLE warrant_facts ADD COLUMN position BIGINT;
UPDATE warrant_facts AS f SET position = o.n FROM (
  SELECT query, sequence,
    row_number() OVER (ORDER BY (fact::jsonb ->> 'recorded-at'), query, sequence) AS n
  FROM warrant_facts
) AS o WHERE f.query = o.query AND f.sequence = o.sequence;
SELECT setval('warrant_fact_position', COALESCE((SELECT MAX(position) FROM warrant_facts), 0) + 1, false);
ALTER TABLE warrant_facts ALTER COLUMN position SET NOT NULL;
CREATE UNIQUE INDEX warrant_facts_by_position ON warrant_facts (position);
CREATE FUNCTION warrant_fact_positioned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(TG_TABLE_SCHEMA || '.warrant_fact_position', 0));
  NEW.position := nextval(format('%I.warrant_fact_position', TG_TABLE_SCHEMA)::regclass);
  PERFORM pg_notify('warrant_changes', TG_TABLE_SCHEMA);
  RETURN NEW;
END $$;
CREATE TRIGGER warrant_facts_position BEFORE INSERT ON warrant_facts
  FOR EACH ROW EXECUTE FUNCTION warrant_fact_positioned();
CREATE FUNCTION warrant_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('warrant_changes', TG_TABLE_SCHEMA);
  RETURN NULL;
END $$;
CREATE TRIGGER warrant_records_changed AFTER INSERT ON warrant_records
  FOR EACH STATEMENT EXECUTE FUNCTION warrant_changed();
CREATE TRIGGER warrant_operator_acts_changed AFTER INSERT ON warrant_operator_acts
  FOR EACH STATEMENT EXECUTE FUNCTION warrant_changed();
`,
  },
  {
    version: 7,
    summary:
      "appends without a store-wide lock: positions straight from the sequence, the change feed " +
      "reading only below the oldest append in flight, and notifications sent after COMMIT",
    // A fact's position is drawn from the sequence with no lock (the column's default), so
    // positions may commit out of order. Each statement inserting facts first takes (a BEFORE
    // STATEMENT trigger, which fires before any row's default is computed) a shared, never
    // conflicting, transaction-scoped advisory lock whose key carries the sequence's last value:
    // every position the statement draws is above that floor, and the lock is visible in pg_locks
    // until the transaction commits or rolls back. The feed reads, in this order, the sequence's
    // last value, then the lowest floor held, then the facts (a new snapshot per statement of a
    // volatile function), and delivers only positions below both: any position below them was
    // drawn by a transaction that had ended when the facts were read. The key is (hash of the
    // schema & 32767) << 48 | floor.
    // Notifications leave the triggers: NOTIFY makes COMMIT take a database-wide lock held through
    // the WAL flush, which serialised every append; the store notifies after COMMIT instead.
    sql: `
DROP TRIGGER warrant_records_changed ON warrant_records;
DROP TRIGGER warrant_operator_acts_changed ON warrant_operator_acts;
DROP FUNCTION warrant_changed();
DROP TRIGGER warrant_facts_position ON warrant_facts;
DROP FUNCTION warrant_fact_positioned();
ALTER TABLE warrant_facts ALTER COLUMN position SET DEFAULT nextval('warrant_fact_position');
CREATE FUNCTION warrant_feed_floor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(
    ((hashtext(TG_TABLE_SCHEMA) & 32767)::bigint << 48)
      | COALESCE(pg_sequence_last_value(format('%I.warrant_fact_position', TG_TABLE_SCHEMA)::regclass), 0));
  RETURN NULL;
END $$;
CREATE TRIGGER warrant_facts_feed_floor BEFORE INSERT ON warrant_facts
  FOR EACH STATEMENT EXECUTE FUNCTION warrant_feed_floor();
CREATE FUNCTION warrant_feed_bound() RETURNS bigint LANGUAGE plpgsql VOLATILE
  SET search_path FROM CURRENT AS $$
DECLARE
  drawn bigint;
  floor bigint;
BEGIN
  SELECT CASE WHEN s.is_called THEN s.last_value ELSE s.last_value - 1 END INTO drawn
    FROM warrant_fact_position AS s;
  SELECT min(((l.classid::bigint & 65535) << 32) | l.objid::bigint) INTO floor
    FROM pg_locks AS l
    WHERE l.locktype = 'advisory' AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND (l.classid::bigint >> 16) = (hashtext(current_schema()) & 32767);
  RETURN LEAST(drawn + 1, floor);
END $$;
CREATE FUNCTION warrant_feed_after(after bigint, most integer)
  RETURNS TABLE ("position" bigint, query text, fact text) LANGUAGE plpgsql VOLATILE
  SET search_path FROM CURRENT AS $$
DECLARE
  bound bigint := warrant_feed_bound();
BEGIN
  RETURN QUERY SELECT f.position, f.query, f.fact FROM warrant_facts AS f
    WHERE f.position > after AND f.position < bound ORDER BY f.position LIMIT most;
END $$;
CREATE FUNCTION warrant_feed_last() RETURNS bigint LANGUAGE plpgsql VOLATILE
  SET search_path FROM CURRENT AS $$
DECLARE
  bound bigint := warrant_feed_bound();
BEGIN
  RETURN COALESCE((SELECT max(f.position) FROM warrant_facts AS f WHERE f.position < bound), 0);
END $$;
`,
  },
];
