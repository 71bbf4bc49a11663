// Appends of many loops in one statement (AppendGroups): what waits for a connection goes in one
// group, one append per loop; every member keeps its own conditions and outcome; a unique violation
// in a group settles each member alone; positions follow each loop's sequence.

import pg from "pg";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { chainFacts } from "../../src/adapters/store/batch.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import {
  GROUP_MOST,
  type GroupMember,
  takeGroup,
} from "../../src/adapters/store/postgres-append-group.js";
import type { AppendBatch, LedgerStore } from "../../src/core/ports/ledger-store.js";
import { opened, passage } from "../../src/testing/contracts/facts.js";
import { postgresForTests, TestSchemas, takeoverInProgress } from "../helpers/postgres.js";

function member(query: string, n = 0): GroupMember {
  const batch: AppendBatch = {
    query,
    expectedLastSequence: n,
    facts: [n === 0 ? opened(query) : passage(query, n + 1, n)],
  };
  return { batch, stored: [], resolve: () => {}, reject: () => {} };
}

describe("takeGroup", () => {
  it("takes the waiting appends in arrival order, one per loop; a loop's second waits behind", () => {
    const pending = [
      member("q:a"),
      member("q:b"),
      member("q:a", 1),
      member("q:c"),
      member("q:b", 1),
    ];
    const first = takeGroup(pending);
    expect(first.map((m) => m.batch.query)).toEqual(["q:a", "q:b", "q:c"]);
    expect(pending.map((m) => [m.batch.query, m.batch.expectedLastSequence])).toEqual([
      ["q:a", 1],
      ["q:b", 1],
    ]);
    expect(takeGroup(pending).map((m) => m.batch.query)).toEqual(["q:a", "q:b"]);
    expect(pending).toEqual([]);
    expect(takeGroup(pending)).toEqual([]);
  });

  it(`takes at most ${GROUP_MOST} and leaves the rest in order`, () => {
    const pending = Array.from({ length: GROUP_MOST + 3 }, (_, i) => member(`q:${i}`));
    expect(takeGroup(pending)).toHaveLength(GROUP_MOST);
    expect(pending.map((m) => m.batch.query)).toEqual([
      `q:${GROUP_MOST}`,
      `q:${GROUP_MOST + 1}`,
      `q:${GROUP_MOST + 2}`,
    ]);
  });
});

const server = await postgresForTests();
const schemas = new TestSchemas(server.url, "group");
afterAll(() => (server.enabled ? schemas.dropAll() : undefined));

/** The statements the store sends, by prepared name, on the real driver. */
function countStatements(): { names: () => string[] } {
  const spy = vi.spyOn(pg.Client.prototype, "query");
  return {
    names: () =>
      spy.mock.calls
        .map((c) => (c[0] as { name?: unknown } | string | undefined) ?? "")
        .map((c) => (typeof c === "object" && typeof c.name === "string" ? c.name : ""))
        .filter((n) => n.startsWith("warrant-append")),
  };
}

/** Loops opened one by one (so the store knows each one's head), with poolSize 2: one sender. */
async function storeWithLoops(
  queries: readonly string[],
): Promise<{ store: LedgerStore; uri: string }> {
  const uri = schemas.uri();
  const store = await openStore(uri, { poolSize: 2 });
  for (const q of queries) {
    const r = await store.append({ query: q, expectedLastSequence: 0, facts: [opened(q)] });
    expect(r.ok).toBe(true);
  }
  return { store, uri };
}

/** Until a group statement of the store waits on a row lock another transaction holds. */
async function groupWaitsOnALock(): Promise<void> {
  for (;;) {
    const [row] = await schemas.sql<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%unnest(%'",
    );
    if (Number(row?.n) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!server.enabled)("PostgreSQL appends in groups", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("puts the appends that wait for a connection in one statement, every loop's chain whole and fed in order", async () => {
    const queries = Array.from({ length: 30 }, (_, i) => `query:g${i}`);
    const { store } = await storeWithLoops(queries);
    const statements = countStatements();
    const outcomes = await Promise.all(
      queries.map((q) =>
        store.append({
          query: q,
          expectedLastSequence: 1,
          facts: [passage(q, 2, 1), passage(q, 3, 2)],
        }),
      ),
    );
    expect(outcomes.every((o) => o.ok)).toBe(true);
    const names = statements.names();
    // The first went alone; the 29 that waited for it went together.
    expect(names).toEqual(["warrant-append-2", "warrant-append-group"]);
    for (const q of queries) {
      const facts = await store.readFacts(q);
      expect(facts.map((f) => f.fact.sequence)).toEqual([1, 2, 3]);
      expect(facts.map((f) => f.hash)).toEqual(
        chainFacts(
          undefined,
          facts.map((f) => f.fact),
        ).map((s) => s.hash),
      );
    }
    const feed = store.changeFeed?.();
    const fed = (await feed?.factsAfter(0, 1000)) ?? [];
    expect(fed).toHaveLength(90);
    const seen = new Map<string, number>();
    for (const f of fed) {
      expect(f.fact.sequence).toBe((seen.get(f.query) ?? 0) + 1);
      seen.set(f.query, f.fact.sequence);
    }
    await store.close();
  });

  it("keeps each member's conditions: a loop moved on is late, a stale token is refused, the rest go in", async () => {
    const [first, moved, fenced, good, two] = ["first", "moved", "fenced", "good", "two"].map(
      (n) => `query:${n}`,
    ) as [string, string, string, string, string];
    const { store, uri } = await storeWithLoops([first, moved, fenced, good, two]);
    const other = await openStore(uri);
    // Another writer moves one loop on behind this store's back: its head here is stale.
    expect(
      (await other.append({ query: moved, expectedLastSequence: 1, facts: [passage(moved, 2, 9)] }))
        .ok,
    ).toBe(true);
    const lease = await store.acquireLease(fenced, "worker-a", 60_000, new Date());
    const goodLease = await store.acquireLease(good, "worker-a", 60_000, new Date());
    expect(lease).toBeDefined();
    expect(goodLease).toBeDefined();
    const statements = countStatements();
    const results = await Promise.allSettled([
      store.append({ query: first, expectedLastSequence: 1, facts: [passage(first, 2, 1)] }),
      store.append({ query: moved, expectedLastSequence: 1, facts: [passage(moved, 2, 1)] }),
      store.append({
        query: fenced,
        expectedLastSequence: 1,
        facts: [passage(fenced, 2, 1)],
        fencingToken: (lease?.token ?? 0) + 1,
      }),
      store.append({
        query: good,
        expectedLastSequence: 1,
        facts: [passage(good, 2, 1)],
        fencingToken: goodLease?.token ?? 0,
      }),
      store.append({
        query: two,
        expectedLastSequence: 1,
        facts: [passage(two, 2, 1), passage(two, 3, 2)],
      }),
    ]);
    expect(statements.names()).toEqual(["warrant-append-1", "warrant-append-group"]);
    const [r1, rMoved, rFenced, rGood, rTwo] = results;
    expect(r1).toMatchObject({ status: "fulfilled", value: { ok: true } });
    expect(rMoved).toMatchObject({
      status: "fulfilled",
      value: { ok: false, conflict: "sequence" },
    });
    expect(rFenced).toMatchObject({ status: "rejected", reason: { code: "store/lease-lost" } });
    expect(rGood).toMatchObject({ status: "fulfilled", value: { ok: true } });
    expect(rTwo).toMatchObject({ status: "fulfilled", value: { ok: true } });
    expect((await store.readFacts(moved)).map((f) => f.fact.step)).toMatchObject([
      { kind: "opened" },
      { "passage/ref": "passage:p9" },
    ]);
    expect(await store.readFacts(fenced)).toHaveLength(1);
    expect(await store.readFacts(good)).toHaveLength(2);
    expect(await store.readFacts(two)).toHaveLength(3);
    await other.close();
    await store.close();
  });

  it("settles each member alone after a unique violation: the loop another writer took is late, the others go in", async () => {
    const [first, taken, free] = ["query:u-first", "query:u-taken", "query:u-free"];
    const { store, uri } = await storeWithLoops([first, taken, free]);
    const schema = TestSchemas.schemaOf(uri);
    // Another writer's insert of the taken loop's next fact, not yet committed.
    const writer = new pg.Client({ connectionString: server.url });
    await writer.connect();
    await writer.query("BEGIN");
    await writer.query(
      `INSERT INTO "${schema}".warrant_facts (query, sequence, charge_key, kind, fact, hash) ` +
        "VALUES ($1, 2, 'other', 'passage-charged', '{}', 'h')",
      [taken],
    );
    const statements = countStatements();
    const pending = Promise.allSettled([
      store.append({ query: first, expectedLastSequence: 1, facts: [passage(first, 2, 1)] }),
      store.append({ query: taken, expectedLastSequence: 1, facts: [passage(taken, 2, 1)] }),
      store.append({ query: free, expectedLastSequence: 1, facts: [passage(free, 2, 1)] }),
    ]);
    // The group waits on the uncommitted row at the taken loop's sequence 2.
    await groupWaitsOnALock();
    await writer.query("COMMIT");
    await writer.end();
    const [r1, rTaken, rFree] = await pending;
    expect(r1).toMatchObject({ status: "fulfilled", value: { ok: true } });
    expect(rTaken).toMatchObject({
      status: "fulfilled",
      value: { ok: false, conflict: "sequence" },
    });
    expect(rFree).toMatchObject({ status: "fulfilled", value: { ok: true } });
    expect(statements.names()).toEqual([
      "warrant-append-1",
      "warrant-append-group",
      "warrant-append-1",
      "warrant-append-1",
    ]);
    expect((await store.readFacts(taken)).map((f) => f.chargeKey)).toHaveLength(2);
    expect((await store.readFacts(taken))[1]?.hash).toBe("h");
    expect(await store.readFacts(free)).toHaveLength(2);
    await store.close();
  });

  it("makes a member whose token a takeover in progress replaces wait for it, then refuses it alone", async () => {
    const [first, race, other] = ["query:t-first", "query:t-race", "query:t-other"];
    const { store, uri } = await storeWithLoops([first, race, other]);
    const schema = TestSchemas.schemaOf(uri);
    const token = (await store.acquireLease(race, "worker-a", 60_000, new Date()))?.token ?? 0;
    // Another driver's takeover, not yet committed, holds the loop's lock and its lease row.
    const taker = await takeoverInProgress(server.url, schema, race);
    const pending = Promise.allSettled([
      store.append({ query: first, expectedLastSequence: 1, facts: [passage(first, 2, 1)] }),
      store.append({
        query: race,
        expectedLastSequence: 1,
        facts: [passage(race, 2, 1)],
        fencingToken: token,
      }),
      store.append({ query: other, expectedLastSequence: 1, facts: [passage(other, 2, 1)] }),
    ]);
    await groupWaitsOnALock();
    await taker.query("COMMIT");
    await taker.end();
    const [r1, rRace, rOther] = await pending;
    expect(r1).toMatchObject({ status: "fulfilled", value: { ok: true } });
    expect(rRace).toMatchObject({
      status: "rejected",
      reason: { code: "store/lease-lost", message: expect.stringContaining("worker-b") },
    });
    expect(rOther).toMatchObject({ status: "fulfilled", value: { ok: true } });
    expect(await store.readFacts(race)).toHaveLength(1);
    expect(await store.readFacts(other)).toHaveLength(2);
    await store.close();
  });
});
