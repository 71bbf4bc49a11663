// LoopLedger over a store: read → fold → decide → append, re-deciding after a lost race.
import { describe, expect, it } from "vitest";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { fold } from "../../src/core/loop/state.js";
import type { LedgerRecord } from "../../src/core/ports/ledger-store.js";
import { LoopLedger, MAX_APPEND_ATTEMPTS } from "../../src/runtime/loop-ledger.js";
import { FakeStore } from "./fake-store.js";
import { admit, at, conclude, cycle, open, passage, proposal, QUERY } from "./gwt.js";

const record = (n: number): LedgerRecord => ({
  ref: proposal(n),
  kind: "proposal",
  query: QUERY,
  body: { n },
});

describe("LoopLedger", () => {
  it("appends decided facts and projects a schema-valid document", async () => {
    const store = new FakeStore();
    const ledger = new LoopLedger(store);
    expect(await ledger.document(QUERY, at(0))).toBeUndefined();
    expect((await ledger.execute(QUERY, open(), at(0))).result).toBe("appended");
    expect((await ledger.execute(QUERY, passage(1), at(1))).result).toBe("appended");
    const doc = await ledger.document(QUERY, at(2));
    expect(doc?.spent.passages).toBe(1);
    expect(contractValidators().loop(doc)).toBe(true);
    expect(store.loops.get(QUERY)?.map((r) => r.fact.sequence)).toEqual([1, 2]);
  });

  it("stores records with the fact that introduces them, not when refused or replayed", async () => {
    const store = new FakeStore();
    const ledger = new LoopLedger(store);
    await ledger.execute(QUERY, open(), at(0));
    expect((await ledger.execute(QUERY, cycle(1), at(1), [record(1)])).result).toBe("appended");
    expect(store.records.has(proposal(1))).toBe(true);
    store.records.clear();
    expect((await ledger.execute(QUERY, cycle(1), at(2), [record(1)])).result).toBe("replayed");
    expect(store.records.size).toBe(0);
    expect((await ledger.execute(QUERY, cycle(2), at(99_999), [record(2)])).result).toBe("refused");
    expect(store.records.size).toBe(0);
  });

  it("re-reads and re-decides when another writer appended first (sequence conflict)", async () => {
    const store = new FakeStore();
    const ledger = new LoopLedger(store);
    const rival = new LoopLedger(store);
    await ledger.execute(QUERY, open(), at(0));
    await ledger.document(QUERY, at(0));
    store.beforeAppend = async () => {
      await rival.execute(QUERY, passage(9), at(1));
    };
    const d = await ledger.execute(QUERY, passage(1), at(2));
    expect(d.result).toBe("appended");
    if (d.result === "appended") expect(d.fact.sequence).toBe(3);
    expect(store.loops.get(QUERY)?.length).toBe(3);
  });

  it("finds the replay when the same charge landed meanwhile", async () => {
    const store = new FakeStore();
    const ledger = new LoopLedger(store);
    const rival = new LoopLedger(store);
    await ledger.execute(QUERY, open(), at(0));
    await ledger.document(QUERY, at(0));
    store.beforeAppend = async () => {
      await rival.execute(QUERY, passage(1), at(1));
    };
    const d = await ledger.execute(QUERY, passage(1), at(2));
    expect(d).toMatchObject({ result: "replayed", fact: { sequence: 2 } });
    expect(store.loops.get(QUERY)?.length).toBe(2);
  });

  it("two writers racing for the last run never overspend", async () => {
    const store = new FakeStore();
    const a = new LoopLedger(store);
    const b = new LoopLedger(store);
    const layers = [{ "max/passages": 4, "max/experiments": 1, "max/wall-time-ms": 60_000 }];
    await a.execute(QUERY, open(layers), at(0));
    await a.execute(QUERY, cycle(1), at(1));
    await a.execute(QUERY, cycle(2), at(1));
    const [x, y] = await Promise.all([
      a.execute(QUERY, admit(1), at(2)),
      b.execute(QUERY, admit(2), at(2)),
    ]);
    const results = [x.result, y.result].sort();
    expect(results).toEqual(["appended", "refused"]);
    expect(fold((store.loops.get(QUERY) ?? []).map((r) => r.fact)).spent.runs).toBe(1);
  });

  it("its cached state equals the fold of the stored facts", async () => {
    const store = new FakeStore();
    const ledger = new LoopLedger(store);
    const other = new LoopLedger(store);
    await ledger.execute(QUERY, open(), at(0));
    await other.execute(QUERY, cycle(1), at(1));
    await ledger.execute(QUERY, admit(1), at(2));
    await other.execute(QUERY, conclude(1, "verification-failed"), at(3));
    const facts = (store.loops.get(QUERY) ?? []).map((r) => r.fact);
    expect(await ledger.state(QUERY)).toEqual(fold(facts));
    expect(await other.state(QUERY)).toEqual(fold(facts));
  });

  it("decides on the state it last saw: one append per command, no read", async () => {
    const store = new FakeStore();
    const ledger = new LoopLedger(store);
    await ledger.execute(QUERY, open(), at(0));
    const reads = store.reads;
    expect((await ledger.execute(QUERY, passage(1), at(1))).result).toBe("appended");
    expect((await ledger.execute(QUERY, passage(2), at(2))).result).toBe("appended");
    expect(store.reads).toBe(reads);
    expect(store.loops.get(QUERY)?.map((r) => r.fact.sequence)).toEqual([1, 2, 3]);
  });

  it("decides a refusal again on what the store holds, not on the state it last saw", async () => {
    const store = new FakeStore();
    const ledger = new LoopLedger(store);
    const rival = new LoopLedger(store);
    await ledger.execute(QUERY, open(), at(0));
    // Another writer opens the cycle: on the state this ledger last saw, the admission is refused.
    expect((await rival.execute(QUERY, cycle(1), at(1))).result).toBe("appended");
    const d = await ledger.execute(QUERY, admit(1), at(2));
    expect(d.result).toBe("appended");
    if (d.result === "appended") expect(d.fact.sequence).toBe(3);
  });

  it("gives up with store/contention after losing every attempt", async () => {
    const store = new FakeStore();
    const ledger = new LoopLedger(store, async () => {});
    const wide = [{ "max/passages": 1000, "max/experiments": 1, "max/wall-time-ms": 60_000 }];
    await ledger.execute(QUERY, open(wide), at(0));
    const rival = new LoopLedger(store);
    let n = 0;
    const arm = () => {
      store.beforeAppend = async () => {
        n += 1;
        await rival.execute(QUERY, passage(100 + n, "summarizer"), at(1));
        if (n < MAX_APPEND_ATTEMPTS) arm();
      };
    };
    arm();
    await expect(ledger.execute(QUERY, passage(1), at(2))).rejects.toMatchObject({
      code: "store/contention",
    });
  });

  it("after the second lost append on, waits a drawn share of 2^losses ms (at most 100) through its ports", async () => {
    const store = new FakeStore();
    const sleeps: number[] = [];
    const draws = [0.5, 0.25, 1 - 2 ** -20, 0, 0.5, 0.5, 0.5];
    const ledger = new LoopLedger(
      store,
      async (ms) => {
        sleeps.push(ms);
      },
      () => draws.shift() ?? 0.5,
    );
    const wide = [{ "max/passages": 1000, "max/experiments": 1, "max/wall-time-ms": 60_000 }];
    await ledger.execute(QUERY, open(wide), at(0));
    const rival = new LoopLedger(store);
    let n = 0;
    const arm = () => {
      store.beforeAppend = async () => {
        n += 1;
        await rival.execute(QUERY, passage(100 + n, "summarizer"), at(1));
        if (n < 8) arm();
      };
    };
    arm();
    expect((await ledger.execute(QUERY, passage(1), at(2))).result).toBe("appended");
    // Losses 1..8: none after the first; then 4, 8, 16, 32, 64, 100, 100 ms times the draw.
    expect(sleeps).toEqual([2, 2, (1 - 2 ** -20) * 16, 0, 32, 50, 50]);
  });

  it("throws on an open command for another query (a caller bug)", async () => {
    const ledger = new LoopLedger(new FakeStore());
    await expect(ledger.execute("query:other", open(), at(0))).rejects.toMatchObject({
      code: "loop/query-mismatch",
    });
  });
});
