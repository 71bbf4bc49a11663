// A PostgreSQL restart while fenced appends, record writes and lease renewals are in flight: every
// operation is retried through the outage under its idempotency keys, and no fact or record is lost
// or doubled. The server is a private one (private-postgres.ts), stopped for three seconds and
// started again, so the shared server other test files use is never disturbed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  openPostgresLedgerStore,
  type PostgresLedgerStore,
} from "../../src/adapters/store/postgres-ledger-store.js";
import type { RetryEvent } from "../../src/adapters/store/transient-retry.js";
import { chainHash, GENESIS_HASH } from "../../src/core/loop/chain.js";
import { opened, passage, review } from "../../src/testing/contracts/facts.js";
import { PrivatePostgres, postgresBinDir } from "./private-postgres.js";

const installed = postgresBinDir() !== undefined;
if (!installed && process.env.CI !== "true") {
  process.stderr.write(
    "PostgreSQL restart test skipped: initdb and pg_ctl are not installed (Debian: postgresql).\n",
  );
}

const LOOPS = 6;
const FACTS_PER_LOOP = 40;

describe.skipIf(!installed && process.env.CI !== "true")("a PostgreSQL restart mid-run", () => {
  let server: PrivatePostgres;
  beforeAll(async () => {
    server = await PrivatePostgres.start();
  }, 120_000);
  afterAll(async () => {
    await server?.destroy();
  });

  it("loses and doubles no fenced append or record write: each is retried until the server is back", async () => {
    const retries: RetryEvent[] = [];
    const store: PostgresLedgerStore = await openPostgresLedgerStore(server.url, {
      uri: "postgres://warrant@private/postgres",
      poolSize: 4,
      retry: { windowMs: 60_000, onRetry: (e) => retries.push(e) },
    });
    const now = () => new Date();
    let progress = 0;
    let restarted: Promise<void> | undefined;
    const loop = async (i: number): Promise<void> => {
      const q = `query:restart-${i}`;
      await store.append({ query: q, expectedLastSequence: 0, facts: [opened(q)] });
      const lease = await store.acquireLease(q, `worker-${i}`, 60_000, now());
      if (lease === undefined) throw new Error("no lease");
      for (let seq = 2; seq <= FACTS_PER_LOOP; seq++) {
        const fencingToken = lease.token;
        // Every third fact with a record (the path that reads first), the others without.
        const outcome = await store.append({
          query: q,
          expectedLastSequence: seq - 1,
          facts: [passage(q, seq, seq)],
          ...(seq % 3 === 0 ? { records: [review(q, i * 10_000 + seq)] } : {}),
          fencingToken,
        });
        if (!outcome.ok) throw new Error(`${q} ${seq}: ${outcome.conflict}: ${outcome.message}`);
        if (seq % 5 === 0) {
          await store.putRecords([review(q, i * 10_000 + 1000 + seq)], {
            query: q,
            token: fencingToken,
          });
          // The lease is this writer's throughout: renewed, and granted again under its token.
          expect(await store.renewLease(q, `worker-${i}`, fencingToken, 60_000, now())).toBe(true);
          const again = await store.acquireLease(q, `worker-${i}`, 60_000, now());
          expect(again?.token).toBe(fencingToken);
        }
        progress++;
        // Once every loop is well under way, the server goes down for three seconds.
        if (restarted === undefined && progress >= LOOPS * 8) {
          restarted = (async () => {
            await server.stopServer();
            await new Promise((resolve) => setTimeout(resolve, 3000));
            await server.startServer();
          })();
        }
      }
    };
    await Promise.all(Array.from({ length: LOOPS }, (_, i) => loop(i)));
    await restarted;

    // The outage was felt: operations in flight failed transiently and were retried.
    expect(retries.length).toBeGreaterThan(0);
    for (let i = 0; i < LOOPS; i++) {
      const q = `query:restart-${i}`;
      const stored = await store.readFacts(q);
      expect(stored.map((s) => s.fact.sequence)).toEqual(
        Array.from({ length: FACTS_PER_LOOP }, (_, k) => k + 1),
      );
      let prev = GENESIS_HASH;
      for (const s of stored) {
        expect(s.hash).toBe(chainHash(prev, s.fact));
        prev = s.hash;
      }
      const refs = (await store.listRecords(q)).map((r) => r.ref);
      const expected = [];
      for (let seq = 2; seq <= FACTS_PER_LOOP; seq++) {
        if (seq % 3 === 0) expected.push(review(q, i * 10_000 + seq).ref);
        if (seq % 5 === 0) expected.push(review(q, i * 10_000 + 1000 + seq).ref);
      }
      expect(new Set(refs)).toEqual(new Set(expected));
      expect(refs).toHaveLength(expected.length);
    }
    expect((await store.leases()).map((l) => l.query)).toHaveLength(LOOPS);
    await store.close();
  }, 180_000);
});
