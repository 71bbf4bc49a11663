// Several processes race to charge one loop (docs/spec/storage.md): the store's expected-sequence append and
// unique charge keys mean no limit is exceeded, no sequence is missing or doubled, and every replay
// returns the original fact. The racers run the built modules.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { checkStoredLoop } from "../../src/core/loop/check.js";
import type { Fact } from "../../src/core/loop/types.js";
import type { LedgerRecord, LedgerStore } from "../../src/core/ports/ledger-store.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { assertBuilt, startWriter } from "./writers.js";

const RACERS = 4;
const SHARED = 40;
const OWN = 40;
const LIMIT = 120;

interface Outcome {
  readonly passage: string;
  readonly result: "appended" | "replayed" | "refused";
  readonly fact?: Fact;
  readonly code?: string;
  /** The loop, when a racer charges several. */
  readonly query?: string;
}

/**
 * RACERS processes charge one loop, or with `loops` each of the loops query:race-l0, -l1, … at
 * once (their appends of several loops then wait for a connection together and go in groups).
 */
async function raceOn(uri: string, loops?: number): Promise<void> {
  const queries =
    loops === undefined
      ? ["query:race"]
      : Array.from({ length: loops }, (_, i) => `query:race-l${i}`);
  const setup = await openStore(uri);
  for (const query of queries) {
    const opened = await new LoopLedger(setup).execute(
      query,
      {
        op: "open",
        query,
        binding: "operator-task-local-binding:race",
        operator: "node-operator-binding:alice",
        layers: [{ "max/passages": LIMIT, "max/experiments": 1, "max/wall-time-ms": 3_600_000 }],
      },
      new Date(),
    );
    expect(opened.result).toBe("appended");
  }
  await setup.close();

  const writers = Array.from({ length: RACERS }, (_, i) =>
    startWriter([
      "race",
      uri,
      "query:race",
      `racer${i}`,
      String(SHARED),
      String(OWN),
      ...(loops === undefined ? [] : [String(loops)]),
    ]),
  );
  await Promise.all(writers.map((w) => w.waitFor((l) => l.includes("ready"))));
  for (const w of writers) w.child.stdin.end("go\n");
  const exits = await Promise.all(writers.map((w) => w.exited));
  for (const e of exits) expect(e, e.stderr).toMatchObject({ code: 0 });
  const all: Outcome[] = writers.flatMap((w) =>
    w.lines.filter((l) => l.startsWith('{"passage"')).map((l) => JSON.parse(l) as Outcome),
  );
  expect(all).toHaveLength(RACERS * (SHARED + OWN) * queries.length);
  if (process.env.WARRANT_TEST_VERBOSE) {
    const per = writers.map((w) => w.lines.filter((l) => l.includes('"appended"')).length);
    const lost = writers.map((w) => w.lines.filter((l) => l.includes('"contention"')).length);
    process.stderr.write(`${uri}: appended per racer ${per}, contention retries ${lost}\n`);
  }

  const store = await openStore(uri);
  try {
    for (const query of queries) {
      const outcomes = all.filter((o) => (o.query ?? "query:race") === query);
      await checkRace(store, query, outcomes);
    }
  } finally {
    await store.close();
  }
}

/** One loop after the race: the limit reached and not exceeded, each charge one racer's. */
async function checkRace(
  store: LedgerStore,
  query: string,
  outcomes: readonly Outcome[],
): Promise<void> {
  expect(outcomes).toHaveLength(RACERS * (SHARED + OWN));
  {
    const stored = await store.readFacts(query);
    // The limit is reached and not exceeded; sequences 1..n with no gap and no double.
    expect(stored.map((s) => s.fact.sequence)).toEqual(
      Array.from({ length: LIMIT + 1 }, (_, i) => i + 1),
    );
    expect(new Set(stored.map((s) => s.chargeKey)).size).toBe(stored.length);
    const records = new Map<string, LedgerRecord>(
      (await store.listRecords(query)).map((r) => [r.ref, r]),
    );
    const check = checkStoredLoop(query, stored, records, new Date());
    expect(check.ok ? [] : check.errors).toEqual([]);

    const byPassage = new Map(
      stored
        .filter((s) => s.fact.step.kind === "passage-charged")
        .map((s) => [(s.fact.step as { "passage/ref": string })["passage/ref"], s.fact]),
    );
    const appended = outcomes.filter((o) => o.result === "appended");
    // Each stored charge was appended by exactly one racer, and that racer got the stored fact.
    expect(appended).toHaveLength(LIMIT);
    expect(new Set(appended.map((o) => o.passage)).size).toBe(LIMIT);
    for (const o of appended) expect(o.fact).toEqual(byPassage.get(o.passage));
    // Every replay returned the original fact.
    const replayed = outcomes.filter((o) => o.result === "replayed");
    for (const o of replayed) expect(o.fact).toEqual(byPassage.get(o.passage));
    // Everything else was refused for the budget, never charged.
    const refused = outcomes.filter((o) => o.result === "refused");
    for (const o of refused) {
      expect(o.code).toBe("loop/budget-exhausted");
      expect(byPassage.has(o.passage)).toBe(false);
    }
    expect(appended.length + replayed.length + refused.length).toBe(outcomes.length);
  }
}

beforeAll(assertBuilt);

describe("racing writers", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-race-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`${RACERS} processes charging one SQLite loop never overspend, fork or lose a replay`, async () => {
    await raceOn(`sqlite:${path.join(dir, "race.db")}`);
  });
});

const pg = await postgresForTests();
const schemas = new TestSchemas(pg.url, "race");
afterAll(() => (pg.enabled ? schemas.dropAll() : undefined));

describe.skipIf(!pg.enabled)("racing writers on PostgreSQL", () => {
  it(`${RACERS} processes charging one PostgreSQL loop never overspend, fork or lose a replay`, async () => {
    await raceOn(schemas.uri());
  });

  it(`${RACERS} processes charging the same 6 PostgreSQL loops at once, their appends in groups, never overspend, fork or lose a replay`, async () => {
    await raceOn(schemas.uri(), 6);
  });
});
