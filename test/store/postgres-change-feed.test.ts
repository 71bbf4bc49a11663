// The PostgreSQL change feed under appends that commit out of order: positions are drawn from a
// sequence with no lock, so a later position can commit first; the feed must hold it back until
// every lower one has committed or rolled back, and deliver each fact once, in position order.

import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { chainFacts, storedText } from "../../src/adapters/store/batch.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import type { Fact } from "../../src/core/loop/types.js";
import type { ChangeFeed, FeedFact } from "../../src/core/ports/change-feed.js";
import type { LedgerStore } from "../../src/core/ports/ledger-store.js";
import { opened, passage } from "../../src/testing/contracts/facts.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";

const server = await postgresForTests();
const schemas = new TestSchemas(server.url, "feed");
afterAll(() => (server.enabled ? schemas.dropAll() : undefined));

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

/** A reader following `feed` from position 0 until stopped, keeping what it was given and how often it asked. */
function follow(feed: ChangeFeed): {
  readonly seen: FeedFact[];
  readonly polls: () => number;
  readonly stop: () => Promise<void>;
} {
  const seen: FeedFact[] = [];
  let polls = 0;
  let running = true;
  const done = (async () => {
    let last = 0;
    while (running) {
      const got = await feed.factsAfter(last, 50);
      polls++;
      for (const e of got) {
        if (e.position <= last) throw new Error(`position ${e.position} after ${last}`);
        last = e.position;
        seen.push(e);
      }
      await tick();
    }
  })();
  return {
    seen,
    polls: () => polls,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !ok(); i++) await tick();
  if (!ok()) throw new Error(`timed out waiting for ${what}`);
}

async function appendOne(store: LedgerStore, f: Fact): Promise<void> {
  const outcome = await store.append({
    query: f["query/id"],
    expectedLastSequence: f.sequence - 1,
    facts: [f],
  });
  expect(outcome).toMatchObject({ ok: true });
}

describe.skipIf(!server.enabled)("PostgreSQL change feed with appends in flight", () => {
  it("holds back a fact committed after a lower position still in flight, then gives both once, in order", async () => {
    const uri = schemas.uri();
    const schema = TestSchemas.schemaOf(uri);
    const store = await openStore(uri);
    const other = await openStore(uri);
    const feed = store.changeFeed?.() as ChangeFeed;
    const a = opened("query:first-drawn");
    const b = opened("query:first-committed");
    const [stored] = chainFacts(undefined, [a]);
    if (stored === undefined) throw new Error("no fact");
    // Transaction A inserts its fact through the same trigger as an append and keeps it open.
    const writerA = new pg.Client({ connectionString: server.url });
    await writerA.connect();
    const reader = follow(feed);
    try {
      await writerA.query("BEGIN");
      const [row] = (
        await writerA.query<{ position: string }>(
          `INSERT INTO "${schema}".warrant_facts (query, sequence, charge_key, kind, fact, hash) ` +
            "VALUES ($1, 1, $2, $3, $4, $5) RETURNING position",
          [a["query/id"], stored.chargeKey, a.step.kind, storedText(a), stored.hash],
        )
      ).rows;
      const positionA = Number(row?.position);
      // B, on another connection of another handle, draws a later position and commits first.
      await appendOne(other, b);
      const all = await schemas.sql<{ position: string }>(
        `SELECT position FROM "${schema}".warrant_facts ORDER BY position`,
      );
      const positionB = Number(all.at(-1)?.position);
      expect(positionB).toBeGreaterThan(positionA);
      // The reader keeps asking while A is in flight: B is committed but must not be given yet.
      const asked = reader.polls();
      await until("the reader to ask again", () => reader.polls() >= asked + 5);
      expect(reader.seen).toEqual([]);
      expect(await feed.factsAfter(0, 10)).toEqual([]);
      expect(await feed.lastPosition()).toBe(0);
      await writerA.query("COMMIT");
      await until("both facts", () => reader.seen.length >= 2);
      // A few more rounds: nothing is given twice.
      const after = reader.polls();
      await until("the reader to ask again", () => reader.polls() >= after + 3);
      expect(reader.seen.map((e) => [e.position, e.query, e.fact])).toEqual([
        [positionA, a["query/id"], a],
        [positionB, b["query/id"], b],
      ]);
      expect(await feed.lastPosition()).toBe(positionB);
    } finally {
      await reader.stop();
      await writerA.end();
      await other.close();
      await store.close();
    }
  });

  it("gives a position a rolled-back append drew to no one, and the facts after it", async () => {
    const uri = schemas.uri();
    const schema = TestSchemas.schemaOf(uri);
    const store = await openStore(uri);
    const feed = store.changeFeed?.() as ChangeFeed;
    const a = opened("query:rolled-back");
    const [stored] = chainFacts(undefined, [a]);
    if (stored === undefined) throw new Error("no fact");
    const writerA = new pg.Client({ connectionString: server.url });
    await writerA.connect();
    try {
      await writerA.query("BEGIN");
      await writerA.query(
        `INSERT INTO "${schema}".warrant_facts (query, sequence, charge_key, kind, fact, hash) ` +
          "VALUES ($1, 1, $2, $3, $4, $5)",
        [a["query/id"], stored.chargeKey, a.step.kind, storedText(a), stored.hash],
      );
      const b = opened("query:kept");
      await appendOne(store, b);
      expect(await feed.factsAfter(0, 10)).toEqual([]);
      await writerA.query("ROLLBACK");
      const given = await feed.factsAfter(0, 10);
      expect(given.map((e) => [e.query, e.fact])).toEqual([[b["query/id"], b]]);
      expect(await feed.lastPosition()).toBe(given[0]?.position);
    } finally {
      await writerA.end();
      await store.close();
    }
  });

  it("gives every fact once, in position order, to a reader following appends of two handles", async () => {
    const uri = schemas.uri();
    const schema = TestSchemas.schemaOf(uri);
    const handles = [await openStore(uri), await openStore(uri)];
    const feed = handles[0]?.changeFeed?.() as ChangeFeed;
    const reader = follow(feed);
    const loops = Array.from({ length: 8 }, (_, i) => `query:race-${i}`);
    try {
      await Promise.all(
        loops.map(async (q, i) => {
          const store = handles[i % 2] as LedgerStore;
          await appendOne(store, opened(q));
          for (let s = 2; s <= 10; s++) await appendOne(store, passage(q, s, s));
        }),
      );
      await until("every fact", () => reader.seen.length >= loops.length * 10);
      const after = reader.polls();
      await until("the reader to ask again", () => reader.polls() >= after + 3);
      const rows = await schemas.sql<{ position: string; query: string }>(
        `SELECT position, query FROM "${schema}".warrant_facts ORDER BY position`,
      );
      expect(reader.seen.map((e) => [e.position, e.query])).toEqual(
        rows.map((r) => [Number(r.position), r.query]),
      );
      for (const q of loops)
        expect(reader.seen.filter((e) => e.query === q).map((e) => e.fact.sequence)).toEqual([
          1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
        ]);
    } finally {
      await reader.stop();
      for (const h of handles) await h.close();
    }
  });
});
