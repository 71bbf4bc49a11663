// The one contract every LedgerStore passes (docs/spec/storage.md): run unchanged against memory, SQLite and
// PostgreSQL by their test files, each passing a factory of fresh, empty stores.

import { chainHash, GENESIS_HASH } from "../../core/loop/chain.js";
import { chargeKeyOf, type Fact } from "../../core/loop/types.js";
import type { LedgerStore, StoredFact } from "../../core/ports/ledger-store.js";
import { changeFeedContract } from "./change-feed.js";
import { cycle, fact, LIMITS, opened, passage, proposal, proposalRef, review } from "./facts.js";
import { leaseContract } from "./leases.js";
import { memoryContract } from "./memory.js";
import type { ContractSubject, ContractTestApi, StoreFactory } from "./test-api.js";

const Q = "query:contract-1";
const Q2 = "query:contract-2";

/** Append facts one at a time, as a loop does; fails the test on any conflict. */
async function appendAll(
  expect: ContractTestApi["expect"],
  store: LedgerStore,
  facts: readonly Fact[],
): Promise<void> {
  for (const f of facts) {
    const outcome = await store.append({
      query: f["query/id"],
      expectedLastSequence: f.sequence - 1,
      facts: [f],
    });
    expect(outcome).toMatchObject({ ok: true });
  }
}

function expectChain(expect: ContractTestApi["expect"], stored: readonly StoredFact[]): void {
  let prev = GENESIS_HASH;
  for (const s of stored) {
    expect(s.hash).toBe(chainHash(prev, s.fact));
    expect(s.chargeKey).toBe(chargeKeyOf(s.fact.step));
    prev = s.hash;
  }
}

/** What each group of cases is given: fresh stores, the test runner, the stores to close after a case. */
interface Cases {
  readonly fresh: () => Promise<ContractSubject>;
  readonly test: ContractTestApi;
  /** Every store a case opened (fresh or reopened), closed after it. */
  readonly open: LedgerStore[];
}

export function ledgerStoreContract(
  name: string,
  factory: StoreFactory,
  test: ContractTestApi,
): void {
  const { afterEach, describe } = test;
  describe(`LedgerStore contract: ${name}`, () => {
    const open: LedgerStore[] = [];
    async function fresh(): Promise<ContractSubject> {
      const subject = await factory();
      open.push(subject.store);
      return subject;
    }
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });

    const cases: Cases = { fresh, test, open };
    appendCases(cases);
    chargeAndRecordCases(cases);
    recordCases(cases);
    loopAndActCases(cases);
    leaseContract(fresh, test);
    memoryContract(fresh, test);
    changeFeedContract(fresh, test);
    concurrencyCases(cases);
    batchAndStorageCases(cases);
    persistenceCases(cases);
  });
}

/** Appends: the first fact, the chain, reads after a sequence, batches, stale and gapped sequences. */
function appendCases(c: Cases): void {
  const { fresh } = c;
  const { expect, it } = c.test;
  it("starts empty", async () => {
    const { store } = await fresh();
    expect(await store.readFacts(Q)).toEqual([]);
    expect(await store.listLoops()).toEqual([]);
    expect(await store.readRecord(proposalRef(1))).toBeUndefined();
    expect(await store.listRecords(Q)).toEqual([]);
    expect(await store.readOperatorActs(Q)).toEqual([]);
  });

  it("appends a loop's first fact at expected sequence 0, chained to the genesis hash", async () => {
    const { store } = await fresh();
    const f = opened(Q);
    const outcome = await store.append({ query: Q, expectedLastSequence: 0, facts: [f] });
    expect(outcome).toEqual({
      ok: true,
      stored: [{ fact: f, chargeKey: "opened", hash: chainHash(GENESIS_HASH, f) }],
    });
    expect(await store.readFacts(Q)).toEqual([
      { fact: f, chargeKey: "opened", hash: chainHash(GENESIS_HASH, f) },
    ]);
  });

  it("chains each fact to the previous one and reads facts in sequence order", async () => {
    const { store } = await fresh();
    const facts = [opened(Q), passage(Q, 2, 1), passage(Q, 3, 2, "reviewer"), cycle(Q, 4, 1)];
    await appendAll(expect, store, facts);
    const stored = await store.readFacts(Q);
    expect(stored.map((s) => s.fact)).toEqual(facts);
    expectChain(expect, stored);
    expect(new Set(stored.map((s) => s.hash)).size).toBe(4);
  });

  it("reads only the facts after a given sequence", async () => {
    const { store } = await fresh();
    const facts = [opened(Q), passage(Q, 2, 1), passage(Q, 3, 2), passage(Q, 4, 3)];
    await appendAll(expect, store, facts);
    const all = await store.readFacts(Q);
    expect(await store.readFacts(Q, 2)).toEqual(all.slice(2));
    expect(await store.readFacts(Q, 0)).toEqual(all);
    expect(await store.readFacts(Q, 4)).toEqual([]);
    expect(await store.readFacts(Q, 99)).toEqual([]);
  });

  it("appends several facts in one batch, numbered after the expected sequence", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q)]);
    const batch = [passage(Q, 2, 1), passage(Q, 3, 2), cycle(Q, 4, 7)];
    const outcome = await store.append({ query: Q, expectedLastSequence: 1, facts: batch });
    expect(outcome.ok).toBe(true);
    const stored = await store.readFacts(Q);
    expect(stored.map((s) => s.fact)).toEqual([opened(Q), ...batch]);
    expectChain(expect, stored);
    if (outcome.ok) expect(outcome.stored).toEqual(stored.slice(1));
  });

  it("refuses an append whose expected sequence is stale, and stores nothing", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q), passage(Q, 2, 1)]);
    const late = await store.append({
      query: Q,
      expectedLastSequence: 1,
      facts: [passage(Q, 2, 9)],
    });
    expect(late).toMatchObject({ ok: false, conflict: "sequence" });
    const first = await store.append({ query: Q, expectedLastSequence: 0, facts: [opened(Q)] });
    expect(first).toMatchObject({ ok: false, conflict: "sequence" });
    expect((await store.readFacts(Q)).map((s) => s.fact)).toEqual([opened(Q), passage(Q, 2, 1)]);
  });

  it("refuses an append that expects more facts than the loop has (no gaps)", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q)]);
    const ahead = await store.append({
      query: Q,
      expectedLastSequence: 3,
      facts: [passage(Q, 4, 1)],
    });
    expect(ahead).toMatchObject({ ok: false, conflict: "sequence" });
    const nothing = await store.append({
      query: Q2,
      expectedLastSequence: 1,
      facts: [passage(Q2, 2, 1)],
    });
    expect(nothing).toMatchObject({ ok: false, conflict: "sequence" });
    expect(await store.readFacts(Q)).toHaveLength(1);
    expect(await store.readFacts(Q2)).toEqual([]);
  });
}

/** Charge keys refused twice in a loop, and the records an append stores with its facts. */
function chargeAndRecordCases(c: Cases): void {
  const { fresh } = c;
  const { expect, it } = c.test;
  it("refuses a second fact with the same charge key in a loop, and stores nothing", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q), passage(Q, 2, 1)]);
    // The same passage charged again, this time as a reviewer: same key, other content.
    const again = await store.append({
      query: Q,
      expectedLastSequence: 2,
      facts: [passage(Q, 3, 1, "reviewer")],
    });
    expect(again).toMatchObject({ ok: false, conflict: "charge-key" });
    const reopened = await store.append({
      query: Q,
      expectedLastSequence: 2,
      facts: [{ ...opened(Q), sequence: 3 }],
    });
    expect(reopened).toMatchObject({ ok: false, conflict: "charge-key" });
    expect(await store.readFacts(Q)).toHaveLength(2);
    // The loop goes on at the same sequence.
    await appendAll(expect, store, [passage(Q, 3, 2)]);
  });

  it("refuses a batch that repeats a charge key within itself, and stores none of it", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q)]);
    const outcome = await store.append({
      query: Q,
      expectedLastSequence: 1,
      facts: [passage(Q, 2, 5), passage(Q, 3, 6), passage(Q, 4, 5, "reviewer")],
    });
    expect(outcome).toMatchObject({ ok: false, conflict: "charge-key" });
    expect(await store.readFacts(Q)).toHaveLength(1);
  });

  it("keeps charge keys per loop: the same key in another loop is another charge", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q), passage(Q, 2, 1), opened(Q2), passage(Q2, 2, 1)]);
    expect(await store.readFacts(Q2)).toHaveLength(2);
    // Each loop has its own chain from the genesis hash.
    expectChain(expect, await store.readFacts(Q));
    expectChain(expect, await store.readFacts(Q2));
  });

  it("stores a fact's records in the same append", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q)]);
    const rec = proposal(Q, 1);
    const outcome = await store.append({
      query: Q,
      expectedLastSequence: 1,
      facts: [cycle(Q, 2, 1)],
      records: [rec],
    });
    expect(outcome.ok).toBe(true);
    expect(await store.readRecord(rec.ref)).toEqual(rec);
    expect(await store.listRecords(Q)).toEqual([rec]);
  });

  it("stores no record when the append loses on its sequence", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q), passage(Q, 2, 1)]);
    const outcome = await store.append({
      query: Q,
      expectedLastSequence: 1,
      facts: [cycle(Q, 2, 1)],
      records: [proposal(Q, 1)],
    });
    expect(outcome).toMatchObject({ ok: false, conflict: "sequence" });
    expect(await store.readRecord(proposalRef(1))).toBeUndefined();
    expect(await store.listRecords(Q)).toEqual([]);
  });

  it("stores no record when the append loses on its charge key", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q), cycle(Q, 2, 1)]);
    const outcome = await store.append({
      query: Q,
      expectedLastSequence: 2,
      facts: [cycle(Q, 3, 1)],
      records: [proposal(Q, 1), review(Q, 1)],
    });
    expect(outcome).toMatchObject({ ok: false, conflict: "charge-key" });
    expect(await store.listRecords(Q)).toEqual([]);
  });
}

/** Records: idempotent, conflicting bodies refused, listed in order, text round-tripped. */
function recordCases(c: Cases): void {
  const { fresh } = c;
  const { expect, it } = c.test;
  it("stores a record once: the same ref with the same content is idempotent", async () => {
    const { store } = await fresh();
    const rec = review(Q, 1);
    await store.putRecords([rec]);
    await store.putRecords([rec, rec]);
    // Key order does not matter: bodies under one ref are compared in their canonical form.
    const reordered = {
      ...rec,
      body: { verdict: { findings: [], decision: "accept" }, "proposal/ref": proposalRef(1) },
    };
    await store.putRecords([reordered]);
    await appendAll(expect, store, [opened(Q)]);
    const outcome = await store.append({
      query: Q,
      expectedLastSequence: 1,
      facts: [cycle(Q, 2, 1)],
      records: [proposal(Q, 1), rec],
    });
    expect(outcome.ok).toBe(true);
    expect(await store.listRecords(Q)).toEqual([rec, proposal(Q, 1)]);
  });

  it("throws store/record-conflict for another body under a stored ref, storing nothing", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q)]);
    await store.putRecords([proposal(Q, 1)]);
    const forged = proposal(Q, 1, { evil: true });
    await expect(store.putRecords([forged])).rejects.toMatchObject({
      code: "store/record-conflict",
    });
    await expect(
      store.append({
        query: Q,
        expectedLastSequence: 1,
        facts: [cycle(Q, 2, 1)],
        records: [review(Q, 2), forged],
      }),
    ).rejects.toMatchObject({ code: "store/record-conflict" });
    expect(await store.readFacts(Q)).toHaveLength(1);
    expect(await store.readRecord(review(Q, 2).ref)).toBeUndefined();
    expect(await store.readRecord(proposalRef(1))).toEqual(proposal(Q, 1));
    // A ref repeated inside one call with two bodies is the same bug.
    await expect(
      store.putRecords([review(Q, 3), { ...review(Q, 3), body: {} }]),
    ).rejects.toMatchObject({
      code: "store/record-conflict",
    });
    expect(await store.readRecord(review(Q, 3).ref)).toBeUndefined();
  });

  it("lists records of one loop in the order they were first stored", async () => {
    const { store } = await fresh();
    await store.putRecords([review(Q, 3), review(Q2, 5), proposal(Q, 2)]);
    await store.putRecords([review(Q, 1), review(Q, 3)]);
    expect((await store.listRecords(Q)).map((r) => r.ref)).toEqual([
      review(Q, 3).ref,
      proposalRef(2),
      review(Q, 1).ref,
    ]);
    expect(await store.listRecords(Q2)).toEqual([review(Q2, 5)]);
  });

  it("round-trips text exactly: non-ASCII, escapes and nested bodies", async () => {
    const { store } = await fresh();
    const q = "query:zażółć-✓-𝄞";
    const f = fact(q, 1, {
      kind: "opened",
      "binding/ref": "operator-task-local-binding:ąę",
      limits: LIMITS,
      deadline: "2026-12-01T11:00:00Z",
      "operator/binding-ref": "node-operator-binding:zoë",
    });
    await appendAll(expect, store, [f]);
    expect((await store.readFacts(q))[0]?.fact).toEqual(f);
    const rec = {
      ref: "transcript:x",
      kind: "transcript",
      query: q,
      body: { s: 'line\n"q" \u0000 ☃', n: [1.5, -0, 1e21, null] },
    };
    await store.putRecords([rec]);
    expect(await store.readRecord("transcript:x")).toEqual({
      ...rec,
      body: { s: rec.body.s, n: [1.5, 0, 1e21, null] },
    });
  });
}

/** Loops listed with their last sequence, and operator acts kept per loop. */
function loopAndActCases(c: Cases): void {
  const { fresh } = c;
  const { expect, it } = c.test;
  it("lists loops with their last sequence, ordered by query", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q2), opened(Q), passage(Q, 2, 1), passage(Q, 3, 2)]);
    expect(await store.listLoops()).toEqual([
      { query: Q, lastSequence: 3 },
      { query: Q2, lastSequence: 1 },
    ]);
  });

  it("keeps operator acts per loop in the order they were posted", async () => {
    const { store } = await fresh();
    const acts = [
      {
        query: Q,
        kind: "approve",
        target: "run:1 step:2",
        operator: "node-operator-binding:alice",
        at: "2026-12-01T10:00:05Z",
      },
      {
        query: Q2,
        kind: "deny",
        target: "run:9 step:1",
        operator: "node-operator-binding:bob",
        at: "2026-12-01T10:00:06Z",
      },
      {
        query: Q,
        kind: "answer",
        target: "question:q1",
        text: "use the slow path ✓",
        operator: "node-operator-binding:alice",
        at: "2026-12-01T10:00:07Z",
      },
      {
        query: Q,
        kind: "deny",
        target: "run:1 step:3",
        operator: "node-operator-binding:alice",
        at: "2026-12-01T10:00:08Z",
      },
    ] as const;
    for (const a of acts) await store.postOperatorAct(a);
    expect(await store.readOperatorActs(Q)).toEqual([acts[0], acts[2], acts[3]]);
    expect(await store.readOperatorActs(Q2)).toEqual([acts[1]]);
    expect("text" in ((await store.readOperatorActs(Q))[0] ?? {})).toBe(false);
  });
}

/** Appends that race: one winner at a sequence, each settled on its own. */
function concurrencyCases(c: Cases): void {
  const { fresh } = c;
  const { expect, it } = c.test;
  it("lets exactly one of many concurrent appends at the same sequence win", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q)]);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.append({
          query: Q,
          expectedLastSequence: 1,
          facts: [passage(Q, 2, i)],
          records: [review(Q, 100 + i)],
        }),
      ),
    );
    const winners = outcomes.filter((o) => o.ok);
    expect(winners).toHaveLength(1);
    expect(outcomes.filter((o) => !o.ok && o.conflict === "sequence")).toHaveLength(7);
    const stored = await store.readFacts(Q);
    expect(stored).toHaveLength(2);
    // Only the winner's record is stored.
    expect(await store.listRecords(Q)).toHaveLength(1);
  });

  it("settles appends issued together independently: a failure undoes only its own", async () => {
    const { store } = await fresh();
    const loops = Array.from({ length: 20 }, (_, i) => `query:many-${i}`);
    await Promise.all(
      loops.map((q) => store.append({ query: q, expectedLastSequence: 0, facts: [opened(q)] })),
    );
    // Each loop has its own proposal (n = i + 1); loop 3's is stored already.
    await store.putRecords([proposal(loops[3] as string, 4)]);
    const results = await Promise.allSettled(
      loops.flatMap((q, i) => [
        store.append({
          query: q,
          expectedLastSequence: 1,
          facts: [cycle(q, 2, i + 1)],
          // Loop 3 forges a body under its stored proposal's ref: that append alone throws.
          records: [i === 3 ? proposal(q, 4, { forged: true }) : proposal(q, i + 1)],
        }),
        // Issued with the first: it lands after it, or loses on its sequence if it came first.
        store.append({ query: q, expectedLastSequence: 2, facts: [passage(q, 3, 1)] }),
        // A stale sequence: refused without disturbing the others.
        store.append({ query: q, expectedLastSequence: 0, facts: [opened(q)] }),
      ]),
    );
    for (const [i, q] of loops.entries()) {
      const [first, second, third] = results.slice(i * 3, i * 3 + 3);
      if (i === 3) {
        expect(first).toMatchObject({
          status: "rejected",
          reason: { code: "store/record-conflict" },
        });
        expect(second).toMatchObject({
          status: "fulfilled",
          value: { ok: false, conflict: "sequence" },
        });
        expect((await store.readFacts(q)).map((s) => s.fact.sequence)).toEqual([1]);
      } else {
        expect(first).toMatchObject({ status: "fulfilled", value: { ok: true } });
        const landed = second?.status === "fulfilled" && second.value.ok;
        if (!landed) {
          expect(second).toMatchObject({ status: "fulfilled", value: { conflict: "sequence" } });
        }
        const stored = await store.readFacts(q);
        expect(stored.map((s) => s.fact)).toEqual([
          opened(q),
          cycle(q, 2, i + 1),
          ...(landed ? [passage(q, 3, 1)] : []),
        ]);
        expectChain(expect, stored);
        expect(await store.readRecord(proposalRef(i + 1))).toEqual(proposal(q, i + 1));
      }
      expect(third).toMatchObject({
        status: "fulfilled",
        value: { ok: false, conflict: "sequence" },
      });
    }
  });
}

/** Malformed batches, returned values kept apart, and another store on the same storage. */
function batchAndStorageCases(c: Cases): void {
  const { fresh, open } = c;
  const { expect, it } = c.test;
  it("throws store/batch-invalid for a malformed batch (a caller bug)", async () => {
    const { store } = await fresh();
    await expect(
      store.append({ query: Q, expectedLastSequence: 0, facts: [] }),
    ).rejects.toMatchObject({
      code: "store/batch-invalid",
    });
    await expect(
      store.append({ query: Q, expectedLastSequence: 0, facts: [passage(Q, 2, 1)] }),
    ).rejects.toMatchObject({ code: "store/batch-invalid" });
    await expect(
      store.append({ query: Q2, expectedLastSequence: 0, facts: [opened(Q)] }),
    ).rejects.toMatchObject({
      code: "store/batch-invalid",
    });
    await expect(
      store.append({ query: Q, expectedLastSequence: -1, facts: [opened(Q)] }),
    ).rejects.toMatchObject({ code: "store/batch-invalid" });
    await expect(
      store.append({
        query: Q,
        expectedLastSequence: 0,
        facts: [opened(Q)],
        records: [review(Q2, 1)],
      }),
    ).rejects.toMatchObject({ code: "store/batch-invalid" });
    expect(await store.listLoops()).toEqual([]);
  });

  it("keeps what it returned apart from what it stored", async () => {
    const { store } = await fresh();
    await appendAll(expect, store, [opened(Q)]);
    const [first] = await store.readFacts(Q);
    (first?.fact as { sequence: number }).sequence = 42;
    expect((await store.readFacts(Q))[0]?.fact.sequence).toBe(1);
  });

  it("loses an append to another store on the same storage (skipped for memory: no shared storage)", async (ctx) => {
    const subject = await fresh();
    if (subject.reopen === undefined) {
      ctx.skip();
      return;
    }
    const a = subject.store;
    const b = await subject.reopen();
    open.push(b);
    await appendAll(expect, a, [opened(Q), passage(Q, 2, 1)]);
    expect(await b.readFacts(Q)).toHaveLength(2);
    // b appends; a, which last saw sequence 2, loses on its sequence and on its charge key.
    expect(
      await b.append({ query: Q, expectedLastSequence: 2, facts: [passage(Q, 3, 2)] }),
    ).toMatchObject({ ok: true });
    expect(
      await a.append({ query: Q, expectedLastSequence: 2, facts: [passage(Q, 3, 3)] }),
    ).toMatchObject({
      ok: false,
      conflict: "sequence",
    });
    expect(
      await a.append({ query: Q, expectedLastSequence: 3, facts: [passage(Q, 4, 2)] }),
    ).toMatchObject({
      ok: false,
      conflict: "charge-key",
    });
    // Having read b's fact, a goes on, chained to it.
    expect(await a.readFacts(Q, 2)).toHaveLength(1);
    expect(
      await a.append({ query: Q, expectedLastSequence: 3, facts: [passage(Q, 4, 3)] }),
    ).toMatchObject({ ok: true });
    expect(
      await b.append({ query: Q, expectedLastSequence: 3, facts: [passage(Q, 4, 4)] }),
    ).toMatchObject({
      ok: false,
      conflict: "sequence",
    });
    const stored = await b.readFacts(Q);
    expect(stored.map((s) => s.fact)).toEqual([
      opened(Q),
      passage(Q, 2, 1),
      passage(Q, 3, 2),
      passage(Q, 4, 3),
    ]);
    expectChain(expect, stored);
    // A first fact raced by two stores: one wins.
    const both = await Promise.all([
      a.append({ query: Q2, expectedLastSequence: 0, facts: [opened(Q2)] }),
      b.append({ query: Q2, expectedLastSequence: 0, facts: [opened(Q2)] }),
    ]);
    expect(both.filter((o) => o.ok)).toHaveLength(1);
  });
}

/** The host key, and everything kept across a reopen. */
function persistenceCases(c: Cases): void {
  const { fresh, open } = c;
  const { expect, it } = c.test;
  it("records one host key, the first writer's, and answers it to every later one", async () => {
    const { store } = await fresh();
    const a = "A".repeat(43);
    const b = "B".repeat(43);
    expect(await store.hostKey?.()).toBeUndefined();
    // Writers recording at once agree on one key.
    const answers = await Promise.all([store.recordHostKey?.(a), store.recordHostKey?.(b)]);
    const kept = await store.hostKey?.();
    expect([a, b]).toContain(kept);
    expect(answers).toEqual([kept, kept]);
    expect(await store.recordHostKey?.(b === kept ? a : b)).toBe(kept);
  });

  it("persists everything across a reopen (skipped for memory: it has no storage to reopen)", async (ctx) => {
    const subject = await fresh();
    if (subject.reopen === undefined) {
      ctx.skip();
      return;
    }
    const { store } = subject;
    await appendAll(expect, store, [opened(Q), passage(Q, 2, 1)]);
    await store.append({
      query: Q,
      expectedLastSequence: 2,
      facts: [cycle(Q, 3, 1)],
      records: [proposal(Q, 1)],
    });
    await store.putRecords([review(Q, 1)]);
    const act = {
      query: Q,
      kind: "approve",
      target: "run:1 step:1",
      operator: "node-operator-binding:alice",
      at: "2026-12-01T10:00:09Z",
    } as const;
    await store.postOperatorAct(act);
    const t0 = new Date("2026-12-01T10:00:00.000Z");
    const lease = await store.acquireLease(Q, "worker-a", 60_000, t0);
    expect(lease).toBeDefined();
    const worker = { id: "worker-a", host: "h", pid: 7, started: t0 };
    await store.registerWorker(worker);
    await store.recordHostKey?.("K".repeat(43));
    const before = await store.readFacts(Q);
    await store.close();

    const again = await subject.reopen();
    open.push(again);
    expect(await again.readFacts(Q)).toEqual(before);
    expect(await again.listRecords(Q)).toEqual([proposal(Q, 1), review(Q, 1)]);
    expect(await again.readOperatorActs(Q)).toEqual([act]);
    expect(await again.listLoops()).toEqual([{ query: Q, lastSequence: 3 }]);
    expect(
      await again.acquireLease(Q, "worker-b", 1000, new Date(t0.getTime() + 1000)),
    ).toBeUndefined();
    expect(await again.listWorkers()).toEqual([{ ...worker, lastHeartbeat: t0, loops: [Q] }]);
    expect(await again.hostKey?.()).toBe("K".repeat(43));
    // Tokens survive the reopen: a takeover after it gets a greater one, and the old one is stale.
    const taken = await again.acquireLease(Q, "worker-b", 1000, new Date(t0.getTime() + 60_000));
    expect(taken?.token).toBeGreaterThan(lease?.token ?? Number.POSITIVE_INFINITY);
    await expect(
      again.putRecords([review(Q, 9)], { query: Q, token: lease?.token ?? 1 }),
    ).rejects.toMatchObject({ code: "store/lease-lost" });
    // The chain continues from the stored hash.
    const next = await again.append({
      query: Q,
      expectedLastSequence: 3,
      facts: [passage(Q, 4, 2)],
    });
    expect(next.ok).toBe(true);
    expectChain(expect, await again.readFacts(Q));
  });
}
