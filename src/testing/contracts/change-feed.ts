// The change feed every store keeps (docs/storage.md): facts of all loops by position, resumable
// after any position without loss, and a watch told of facts, records and acts from any writer.

import type { Fact } from "../../core/loop/types.js";
import type { ChangeFeed, FeedFact } from "../../core/ports/change-feed.js";
import type { LedgerStore } from "../../core/ports/ledger-store.js";
import { cycle, opened, passage, proposal } from "./facts.js";
import type { ContractSubject, ContractTestApi } from "./test-api.js";

function feedOf(store: LedgerStore): ChangeFeed {
  const feed = store.changeFeed?.();
  if (feed === undefined) throw new Error(`${store.uri} keeps no change feed`);
  return feed;
}

async function appendOne(
  expect: ContractTestApi["expect"],
  store: LedgerStore,
  f: Fact,
): Promise<void> {
  const outcome = await store.append({
    query: f["query/id"],
    expectedLastSequence: f.sequence - 1,
    facts: [f],
  });
  expect(outcome).toMatchObject({ ok: true });
}

/** A watch on `feed`: `next()` resolves once a change is told after the call (or fails in 4 s: less than any safety tick). */
async function told(
  feed: ChangeFeed,
): Promise<{ next: () => Promise<void>; stop: () => Promise<void> }> {
  let count = 0;
  const waiters: (() => void)[] = [];
  const stop = await feed.watch(() => {
    count++;
    for (const w of waiters.splice(0)) w();
  });
  return {
    next: () => {
      const before = count;
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no change told within 4 s")), 4000);
        const check = () => {
          if (count > before) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
    stop,
  };
}

export function changeFeedContract(
  fresh: () => Promise<ContractSubject>,
  test: ContractTestApi,
): void {
  const { describe, expect, it } = test;
  describe("change feed", () => {
    it("gives the facts of every loop in commit order, resumable after any position", async () => {
      const { store } = await fresh();
      const feed = feedOf(store);
      expect(await feed.lastPosition()).toBe(0);
      expect(await feed.factsAfter(0, 10)).toEqual([]);
      const a = "query:feed-a";
      const b = "query:feed-b";
      const order = [opened(a), opened(b), passage(a, 2, 1), passage(b, 2, 2), cycle(a, 3, 1)];
      for (const f of order) await appendOne(expect, store, f);
      const all = await feed.factsAfter(0, 100);
      expect(all.map((e) => [e.query, e.fact])).toEqual(order.map((f) => [f["query/id"], f]));
      const positions = all.map((e) => e.position);
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      expect(new Set(positions).size).toBe(positions.length);
      expect(await feed.lastPosition()).toBe(positions.at(-1));
      // Resuming after any position gives exactly the rest; `limit` pages.
      for (const [i, p] of positions.entries())
        expect(await feed.factsAfter(p, 100)).toEqual(all.slice(i + 1));
      expect(await feed.factsAfter(0, 2)).toEqual(all.slice(0, 2));
    });

    it("loses no fact to a reader that follows the feed while loops append concurrently", async () => {
      const { store } = await fresh();
      const feed = feedOf(store);
      const loops = Array.from({ length: 6 }, (_, i) => `query:feed-c${i}`);
      let writing = true;
      const seen: FeedFact[] = [];
      const follow = (async () => {
        let last = 0;
        while (writing || (await feed.factsAfter(last, 1)).length > 0) {
          const got = await feed.factsAfter(last, 50);
          for (const e of got) {
            expect(e.position).toBeGreaterThan(last);
            last = e.position;
            seen.push(e);
          }
          await new Promise((r) => setTimeout(r, 1));
        }
      })();
      await Promise.all(
        loops.map(async (q) => {
          await appendOne(expect, store, opened(q));
          for (let s = 2; s <= 8; s++) await appendOne(expect, store, passage(q, s, s));
        }),
      );
      writing = false;
      await follow;
      expect(seen).toHaveLength(loops.length * 8);
      for (const q of loops)
        expect(seen.filter((e) => e.query === q).map((e) => e.fact.sequence)).toEqual([
          1, 2, 3, 4, 5, 6, 7, 8,
        ]);
    });

    it("tells its watchers of facts, records and operator acts, written through any handle", async () => {
      const subject = await fresh();
      const feed = feedOf(subject.store);
      // A second handle on the same storage stands for another process writing it.
      const other = subject.reopen === undefined ? subject.store : await subject.reopen();
      const watch = await told(feed);
      try {
        const q = "query:feed-w";
        let next = watch.next();
        await appendOne(expect, other, opened(q));
        await next;
        next = watch.next();
        await other.putRecords([proposal(q, 1)]);
        await next;
        next = watch.next();
        await other.postOperatorAct({
          query: q,
          kind: "approve",
          target: "x step",
          operator: "op",
          at: new Date(0).toISOString(),
        });
        await next;
      } finally {
        await watch.stop();
        if (other !== subject.store) await other.close();
      }
    });
  });
}
