// Transient PostgreSQL errors with an uncertain outcome: a proxy cuts the connection after the server
// has committed a write but before the store reads the answer. The store retries, and recognises
// the write that landed (facts by their place and content, records by ref, leases by holder, acts by
// content) instead of failing or writing twice, also when the loop was taken over in between.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import type { RetryEvent } from "../../src/adapters/store/transient-retry.js";
import type { LedgerStore } from "../../src/core/ports/ledger-store.js";
import { cycle, opened, passage, proposal, review } from "../../src/testing/contracts/facts.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { CuttingProxy } from "./cutting-proxy.js";

const pg = await postgresForTests();
const schemas = new TestSchemas(pg.url, "transient");
const Q = "query:transient";
const t0 = new Date("2026-12-01T10:00:00.000Z");
const plus = (ms: number) => new Date(t0.getTime() + ms);
/** In every message of an append without records: one statement, its own transaction, by name. */
const APPEND = "warrant-append-1";

describe.skipIf(!pg.enabled)("PostgreSQL store: a write whose answer was lost", () => {
  let proxy: CuttingProxy;
  const open: LedgerStore[] = [];
  beforeAll(async () => {
    proxy = await CuttingProxy.start(pg.url);
  });
  afterAll(async () => {
    for (const s of open.splice(0)) await s.close();
    await proxy.close();
    await schemas.dropAll();
  });

  /** A store straight to the server (to look and to take over) and one through the proxy. */
  async function stores(retryMs = 30_000) {
    const uri = schemas.uri();
    const direct = await openStore(uri);
    const retries: RetryEvent[] = [];
    // One connection: after a cut, the retry must connect again, which waits for proxy.up().
    const cut = await openStore(proxy.via(uri), {
      poolSize: 1,
      retryMs,
      onRetry: (e) => retries.push(e),
    });
    open.push(direct, cut);
    await cut.append({ query: Q, expectedLastSequence: 0, facts: [opened(Q)] });
    return { direct, store: cut, retries };
  }

  it("answers ok for an append whose commit landed, storing it once", async () => {
    const { direct, store, retries } = await stores();
    const cut = proxy.cutAfterAnswerTo(APPEND);
    const pending = store.append({ query: Q, expectedLastSequence: 1, facts: [passage(Q, 2, 1)] });
    await cut;
    proxy.up();
    expect(await pending).toMatchObject({ ok: true, stored: [{ fact: passage(Q, 2, 1) }] });
    expect(retries.map((r) => r.operation)).toContain("append");
    expect((await direct.readFacts(Q)).map((s) => s.fact)).toEqual([opened(Q), passage(Q, 2, 1)]);
    // The store goes on from there.
    expect(
      await store.append({ query: Q, expectedLastSequence: 2, facts: [passage(Q, 3, 2)] }),
    ).toMatchObject({ ok: true });
  });

  it("answers ok for an append with records whose commit landed, storing each once", async () => {
    const { direct, store, retries } = await stores();
    const cut = proxy.cutAfterAnswerTo("COMMIT");
    const pending = store.append({
      query: Q,
      expectedLastSequence: 1,
      facts: [cycle(Q, 2, 1)],
      records: [proposal(Q, 1)],
    });
    await cut;
    proxy.up();
    expect(await pending).toMatchObject({ ok: true });
    expect(retries.length).toBeGreaterThan(0);
    expect(await direct.readFacts(Q)).toHaveLength(2);
    expect(await direct.listRecords(Q)).toEqual([proposal(Q, 1)]);
  });

  it("answers ok for a fenced append that landed before a takeover, and refuses the next", async () => {
    const { direct, store } = await stores();
    const token = (await store.acquireLease(Q, "worker-a", 1000, t0))?.token ?? 0;
    const cut = proxy.cutAfterAnswerTo(APPEND);
    const pending = store.append({
      query: Q,
      expectedLastSequence: 1,
      facts: [passage(Q, 2, 1)],
      fencingToken: token,
    });
    await cut;
    // While worker-a cannot reach the server, worker-b takes the expired lease.
    expect(await direct.acquireLease(Q, "worker-b", 1000, plus(5000))).toBeDefined();
    proxy.up();
    expect(await pending).toMatchObject({ ok: true });
    await expect(
      store.append({
        query: Q,
        expectedLastSequence: 2,
        facts: [passage(Q, 3, 2)],
        fencingToken: token,
      }),
    ).rejects.toMatchObject({ code: "store/lease-lost" });
    expect(await direct.readFacts(Q)).toHaveLength(2);
  });

  it("resolves a fenced record write that landed before a takeover, and refuses the next", async () => {
    const { direct, store } = await stores();
    const token = (await store.acquireLease(Q, "worker-a", 1000, t0))?.token ?? 0;
    const cut = proxy.cutAfterAnswerTo("COMMIT");
    const pending = store.putRecords([review(Q, 1)], { query: Q, token });
    await cut;
    expect(await direct.acquireLease(Q, "worker-b", 1000, plus(5000))).toBeDefined();
    proxy.up();
    await pending;
    await expect(store.putRecords([review(Q, 2)], { query: Q, token })).rejects.toMatchObject({
      code: "store/lease-lost",
    });
    expect(await direct.listRecords(Q)).toEqual([review(Q, 1)]);
  });

  it("grants the lease whose commit landed under the token it was taken with, spending no other", async () => {
    const { direct, store, retries } = await stores();
    const cut = proxy.cutAfterAnswerTo("COMMIT");
    const pending = store.acquireLease(Q, "worker-a", 1000, t0);
    await cut;
    proxy.up();
    const grant = await pending;
    expect(retries.map((r) => r.operation)).toContain("acquireLease");
    expect(await direct.leases()).toEqual([
      { query: Q, holder: "worker-a", token: grant?.token, until: plus(1000) },
    ]);
    expect((await direct.acquireLease(Q, "worker-b", 1000, plus(1000)))?.token).toBe(
      (grant?.token ?? 0) + 1,
    );
  });

  it("posts an operator act whose insert landed once", async () => {
    const { direct, store, retries } = await stores();
    const act = {
      query: Q,
      kind: "approve",
      target: "run:1 step:1",
      operator: "node-operator-binding:alice",
      at: "2026-12-01T10:00:09.123Z",
    } as const;
    const cut = proxy.cutAfterAnswerTo("warrant_operator_acts");
    const pending = store.postOperatorAct(act);
    await cut;
    proxy.up();
    // The retry finds its own first attempt's act counting: posted, once.
    expect(await pending).toEqual({ posted: true });
    expect(retries.map((r) => r.operation)).toContain("postOperatorAct");
    expect(await direct.readOperatorActs(Q)).toEqual([act]);
    // The same operator acting again later is another act, and the first one still counts.
    expect(await store.postOperatorAct({ ...act, at: "2026-12-01T10:00:10.000Z" })).toEqual({
      posted: false,
      counting: act,
    });
    expect(await direct.readOperatorActs(Q)).toEqual([act]);
  });

  it("gives up with store/unreachable once the retry window has passed", async () => {
    const { store, retries } = await stores(300);
    const cut = proxy.cutAfterAnswerTo(APPEND);
    const pending = store.append({ query: Q, expectedLastSequence: 1, facts: [passage(Q, 2, 1)] });
    await cut;
    // The proxy stays down: every retry fails to connect.
    await expect(pending).rejects.toMatchObject({ code: "store/unreachable" });
    expect(retries.length).toBeGreaterThan(0);
    proxy.up();
  });

  it("does not retry an error that does not pass", async () => {
    const { store, retries } = await stores();
    const uri = new URL(store.uri);
    await schemas.sql(
      `DROP TABLE "${uri.searchParams.get("schema") ?? "public"}".warrant_operator_acts`,
    );
    await expect(store.readOperatorActs(Q)).rejects.toMatchObject({ code: "store/io" });
    expect(retries).toEqual([]);
  });
});
