// Appends of many loops in one statement. While every connection the store may use for appends is
// busy, the appends that arrive wait here; the next connection free takes all of them (one per
// loop, up to GROUP_MOST) and inserts them with one statement and one commit. Each append keeps its
// own conditions, checked in that statement: its loop still at the expected sequence and, for a
// fenced write, its lease row (locked FOR SHARE until COMMIT) still carrying its token. An append
// whose conditions fail inserts nothing and the others go in. With connections to spare an append
// goes alone, by the one-loop statement, so a lone charge waits for nothing.
import type pg from "pg";
import type { AppendBatch, AppendOutcome, StoredFact } from "../../core/ports/ledger-store.js";
import { storedText } from "./batch.js";
import type { PgTables } from "./postgres-sql.js";

/** At most this many appends (of distinct loops) in one statement. */
export const GROUP_MOST = 64;

/** One append waiting for a connection: its batch, its chained facts, and who waits for it. */
export interface GroupMember {
  readonly batch: AppendBatch;
  readonly stored: readonly StoredFact[];
  resolve(outcome: AppendOutcome): void;
  reject(error: unknown): void;
}

/**
 * The queue of appends waiting for a connection. `send` runs one group (a single member goes by the
 * one-loop statement) and settles every member of it; at most `senders` groups are in flight.
 */
export class AppendGroups {
  readonly #pending: GroupMember[] = [];
  readonly #senders: number;
  readonly #send: (members: GroupMember[]) => Promise<void>;
  #sending = 0;

  constructor(senders: number, send: (members: GroupMember[]) => Promise<void>) {
    this.#senders = Math.max(1, senders);
    this.#send = send;
  }

  /** The outcome of `batch`'s append, once a connection has taken it. */
  add(batch: AppendBatch, stored: readonly StoredFact[]): Promise<AppendOutcome> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ batch, stored, resolve, reject });
      if (this.#sending < this.#senders) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#sending += 1;
    try {
      for (;;) {
        const group = takeGroup(this.#pending);
        if (group.length === 0) return;
        try {
          await this.#send(group);
        } catch (e) {
          for (const m of group) m.reject(e);
        }
      }
    } finally {
      this.#sending -= 1;
    }
  }
}

/**
 * The next group, taken out of `pending` in arrival order: at most GROUP_MOST members, one per loop
 * (a second append of a loop waits for the next group, behind the first).
 */
export function takeGroup(pending: GroupMember[]): GroupMember[] {
  const group: GroupMember[] = [];
  const loops = new Set<string>();
  let kept = 0;
  for (const m of pending) {
    if (group.length < GROUP_MOST && !loops.has(m.batch.query)) {
      loops.add(m.batch.query);
      group.push(m);
    } else pending[kept++] = m;
  }
  pending.length = kept;
  return group;
}

/**
 * The statement inserting every member's facts whose conditions hold; one row per member, in the
 * members' order: how many facts it inserted and, for a fenced write, the lease it found. Facts go
 * in in the members' order, each loop's in sequence order, so their positions (drawn as rows are
 * inserted) follow that order too.
 */
export function groupInsert(t: PgTables, members: readonly GroupMember[]): pg.QueryConfig {
  const queries: string[] = [];
  const expected: number[] = [];
  const tokens: (number | null)[] = [];
  const factQueries: string[] = [];
  const sequences: number[] = [];
  const chargeKeys: string[] = [];
  const kinds: string[] = [];
  const facts: string[] = [];
  const hashes: string[] = [];
  for (const { batch, stored } of members) {
    queries.push(batch.query);
    expected.push(batch.expectedLastSequence);
    tokens.push(batch.fencingToken ?? null);
    for (const s of stored) {
      factQueries.push(batch.query);
      sequences.push(s.fact.sequence);
      chargeKeys.push(s.chargeKey);
      kinds.push(s.fact.step.kind);
      facts.push(storedText(s.fact));
      hashes.push(s.hash);
    }
  }
  const text =
    "WITH b AS (SELECT * FROM unnest($1::text[], $2::integer[], $3::bigint[]) WITH ORDINALITY " +
    "AS b (query, expected, token, i)), " +
    `lease AS (SELECT l.query, l.holder, l.token FROM ${t.leases} AS l ` +
    "WHERE l.query IN (SELECT b.query FROM b WHERE b.token IS NOT NULL) FOR SHARE), " +
    "ok AS (SELECT b.query FROM b WHERE " +
    `(SELECT COALESCE(MAX(f.sequence), 0) FROM ${t.facts} AS f WHERE f.query = b.query) = b.expected ` +
    "AND (b.token IS NULL OR EXISTS (SELECT 1 FROM lease WHERE lease.query = b.query AND lease.token = b.token))), " +
    `inserted AS (INSERT INTO ${t.facts} (query, sequence, charge_key, kind, fact, hash) ` +
    "SELECT v.query, v.sequence, v.charge_key, v.kind, v.fact, v.hash FROM " +
    "unnest($4::text[], $5::integer[], $6::text[], $7::text[], $8::text[], $9::text[]) WITH ORDINALITY " +
    "AS v (query, sequence, charge_key, kind, fact, hash, n) " +
    "WHERE v.query IN (SELECT ok.query FROM ok) ORDER BY v.n RETURNING query) " +
    "SELECT (SELECT count(*) FROM inserted WHERE inserted.query = b.query) AS inserted, " +
    "lease.holder, lease.token FROM b LEFT JOIN lease ON lease.query = b.query ORDER BY b.i";
  return {
    name: "warrant-append-group",
    text,
    values: [queries, expected, tokens, factQueries, sequences, chargeKeys, kinds, facts, hashes],
  };
}
