// A run named by a prefix of its ref (`approve 3fJk9aQz STEP`): a full ref as it is; a unique
// prefix of at least 8 characters of its digest, with or without `corpus-experiment:sha256:`; too
// short or malformed (usage), ambiguous (usage, with the candidates), or naming no run.
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { decideStep } from "../../src/library/operator-acts.js";
import { resolveRunRef } from "../../src/library/run-ref.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";

const HEAD = "corpus-experiment:sha256:";
const ref = (digest: string) => `${HEAD}${digest.padEnd(43, "x")}`;
const A = ref("AbCdEfGh1");
const B = ref("AbCdEfGh2");
const C = ref("Zz_-09Qq");

/** Two loops holding proposals A and B (sharing 8 characters) and C. */
async function seeded(): Promise<MemoryLedgerStore> {
  const store = new MemoryLedgerStore();
  const ledger = new LoopLedger(store);
  const now = new Date("2026-12-01T10:00:00Z");
  for (const query of ["query:one", "query:two"]) {
    const d = await ledger.execute(
      query,
      {
        op: "open",
        query,
        binding: "operator-task-local-binding:t",
        operator: "node-operator-binding:alice",
        layers: [{ "max/passages": 8, "max/experiments": 2, "max/wall-time-ms": 3_600_000 }],
      },
      now,
    );
    expect(d.result).toBe("appended");
  }
  const proposal = (query: string, r: string) => ({
    ref: r,
    kind: "proposal",
    query,
    body: { "proposal/ref": r, candidate: { hypothesis: "h", steps: [{ id: "fix" }] } },
  });
  await store.putRecords([proposal("query:one", A), proposal("query:one", C)]);
  await store.putRecords([proposal("query:two", B)]);
  // Other kinds never match, whatever their ref.
  await store.putRecords([
    { ref: `${HEAD}AbCdEfGh3`, kind: "review", query: "query:two", body: {} },
  ]);
  return store;
}

describe("resolveRunRef", () => {
  it("takes a full ref as it is, and a unique prefix of 8 or more digest characters, with or without the head", async () => {
    const store = await seeded();
    expect(await resolveRunRef(store, A)).toEqual({ ok: true, ref: A });
    expect(await resolveRunRef(store, "Zz_-09Qq")).toEqual({ ok: true, ref: C });
    expect(await resolveRunRef(store, `${HEAD}Zz_-09Qqx`)).toEqual({ ok: true, ref: C });
    expect(await resolveRunRef(store, "AbCdEfGh1")).toEqual({ ok: true, ref: A });
    // Across loops: B lives in another loop.
    expect(await resolveRunRef(store, `${HEAD}AbCdEfGh2`)).toEqual({ ok: true, ref: B });
  });

  it("a prefix shared by two runs is hil/ambiguous-ref (usage) with both as candidates", async () => {
    const store = await seeded();
    const r = await resolveRunRef(store, "AbCdEfGh");
    expect(r).toMatchObject({
      ok: false,
      code: "hil/ambiguous-ref",
      usage: true,
      candidates: [A, B],
    });
    if (!r.ok) expect(r.message).toContain(`${A}, ${B}`);
  });

  it("fewer than 8 digest characters is hil/ref-too-short; characters no ref holds hil/ref-invalid", async () => {
    const store = await seeded();
    for (const text of ["Zz_-09Q", `${HEAD}Zz_-09Q`, "corpus-exp", HEAD, ""]) {
      expect(await resolveRunRef(store, text), text).toMatchObject({
        ok: false,
        code: "hil/ref-too-short",
        usage: true,
      });
    }
    for (const text of ["query:one", "AbCd EfGh", `${HEAD}AbCd/EfGh`]) {
      expect(await resolveRunRef(store, text), text).toMatchObject({
        ok: false,
        code: "hil/ref-invalid",
        usage: true,
      });
    }
  });

  it("a prefix no run has is loop/run-missing, not a usage error", async () => {
    const store = await seeded();
    expect(await resolveRunRef(store, "QQQQQQQQ")).toMatchObject({
      ok: false,
      code: "loop/run-missing",
      usage: false,
    });
  });
});

describe("decideStep by prefix", () => {
  const ctx = (store: MemoryLedgerStore) => ({
    store,
    operator: "node-operator-binding:bob",
    now: () => new Date("2026-12-01T10:01:00Z"),
  });

  it("refuses an ambiguous prefix with the candidates and posts nothing", async () => {
    const store = await seeded();
    const r = await decideStep(ctx(store), "AbCdEfGh", "fix", "deny", "no");
    expect(r).toMatchObject({ ok: false, code: "hil/ambiguous-ref", candidates: [A, B] });
    expect(await store.readOperatorActs("query:one")).toEqual([]);
    expect(await store.readOperatorActs("query:two")).toEqual([]);
  });

  it("a denial by prefix records its reason as the act's text; an approval carries none", async () => {
    const store = await seeded();
    const denied = await decideStep(ctx(store), "Zz_-09Qq", "fix", "deny", "too broad");
    expect(denied).toMatchObject({ ok: true, result: "posted" });
    if (denied.ok) expect(denied.message).toBe(`denied fix of ${C}: too broad`);
    const approved = await decideStep(ctx(store), "AbCdEfGh1", "fix", "approve");
    expect(approved).toMatchObject({ ok: true, result: "posted" });
    expect(await store.readOperatorActs("query:one")).toEqual([
      expect.objectContaining({ kind: "deny", target: `${C} fix`, text: "too broad" }),
      expect.not.objectContaining({ text: expect.anything() }),
    ]);
  });
});
