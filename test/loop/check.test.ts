// checkLoopDocument / checkStoredLoop: the published open loop is accepted; every tampering is refused
// with a loop/… (or store/…) code naming the first bad fact or the disagreeing field.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { chainHash } from "../../src/core/loop/chain.js";
import { checkLoopDocument, checkStoredLoop } from "../../src/core/loop/check.js";
import { project } from "../../src/core/loop/project.js";
import { fold } from "../../src/core/loop/state.js";
import type { Fact, LoopDocument } from "../../src/core/loop/types.js";
import type { LedgerRecord, StoredFact } from "../../src/core/ports/ledger-store.js";
import { withContentRef } from "../../src/core/records/content-ref.js";
import {
  buildExecution,
  EXECUTION_PREFIX,
  EXECUTION_REF_FIELD,
} from "../../src/core/records/execution.js";
import { toLedgerRecord } from "../../src/core/records/ledger-record.js";
import { buildProposal } from "../../src/core/records/proposal.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { seedExamplesDir } from "../helpers/cli.js";
import { admit, at, conclude, cycle, execution, history, open, passage, QUERY } from "./gwt.js";

const published = JSON.parse(
  readFileSync(path.join(seedExamplesDir, "open.corpus-task-pack-loop.json"), "utf8"),
) as LoopDocument;

type Mutable = { -readonly [K in keyof LoopDocument]: unknown } & Record<string, unknown>;
const clone = <T>(x: T): T => structuredClone(x) as T;

/** A healthy document: open, passages, a failed run, a second cycle. */
function sampleDoc(): LoopDocument {
  const facts = history(
    open(),
    passage(1),
    cycle(1),
    passage(2, "reviewer"),
    admit(1),
    conclude(1, "verification-failed"),
    cycle(2),
  );
  return project(fold(facts), at(100)) as LoopDocument;
}

const firstError = (value: unknown, now?: Date) => {
  const r = checkLoopDocument(value, now === undefined ? {} : { now });
  if (r.ok) throw new Error("expected a refusal");
  return r.errors[0];
};

describe("checkLoopDocument", () => {
  it("accepts the published open loop, open before its deadline", () => {
    expect(checkLoopDocument(published).ok).toBe(true);
    expect(checkLoopDocument(published, { now: new Date("2026-09-25T11:59:59Z") }).ok).toBe(true);
  });
  it("after its deadline the published loop's `open` is stale", () => {
    expect(firstError(published, new Date("2026-09-25T12:00:00Z"))).toMatchObject({
      code: "loop/projection-mismatch",
      path: "/state",
    });
  });
  it("accepts open and deadline-passed without --now, not stopped without a stop", () => {
    const doc = sampleDoc();
    expect(checkLoopDocument(doc).ok).toBe(true);
    expect(checkLoopDocument({ ...doc, state: "deadline-passed" }).ok).toBe(true);
  });
  it("accepts a stopped loop", () => {
    const facts = history(open(), cycle(1), admit(1), conclude(1, "verified"));
    const doc = project(fold(facts), at(10)) as LoopDocument;
    expect(doc.state).toBe("stopped");
    expect(checkLoopDocument(doc, { now: at(10) }).ok).toBe(true);
  });
  it("refuses a document that breaks the seed schema: loop/schema", () => {
    expect(firstError({ ...sampleDoc(), extra: 1 })).toMatchObject({ code: "loop/schema" });
    expect(firstError({ ...sampleDoc(), facts: [] })).toMatchObject({
      code: "loop/schema",
      path: "/facts",
    });
  });
  it("refuses an edited counter at its path", () => {
    const doc = clone(sampleDoc()) as Mutable;
    (doc.spent as Record<string, number>).cycles = 1;
    expect(firstError(doc)).toMatchObject({
      code: "loop/projection-mismatch",
      path: "/spent/cycles",
    });
  });
  it("refuses an edited limit or deadline", () => {
    const doc = clone(sampleDoc()) as Mutable;
    doc.limits = { ...(doc.limits as object), "max/cycles": 9 };
    expect(firstError(doc)).toMatchObject({
      code: "loop/projection-mismatch",
      path: "/limits/max~1cycles",
    });
    expect(firstError({ ...sampleDoc(), deadline: "2030-01-01T00:00:00Z" })).toMatchObject({
      code: "loop/projection-mismatch",
      path: "/deadline",
    });
    expect(
      firstError({ ...sampleDoc(), "binding/ref": "operator-task-local-binding:x" }),
    ).toMatchObject({ path: "/binding/ref" });
  });
  it("refuses a missing fact: loop/sequence-gap at the first fact out of place", () => {
    const doc = clone(sampleDoc());
    const facts = [...doc.facts];
    facts.splice(2, 1);
    expect(firstError({ ...doc, facts })).toMatchObject({
      code: "loop/sequence-gap",
      path: "/facts/2/sequence",
    });
  });
  it("refuses renumbered facts whose precondition then fails (a cycle removed)", () => {
    const doc = clone(sampleDoc());
    const facts = doc.facts.filter((f) => f.step.kind !== "cycle-opened" || f.sequence !== 3);
    const renumbered = facts.map((f, i) => ({ ...f, sequence: i + 1 }));
    expect(firstError({ ...doc, facts: renumbered })).toMatchObject({
      code: "loop/cycle-missing",
      path: "/facts/3",
    });
  });
  it("refuses a second opening", () => {
    const doc = clone(sampleDoc());
    const first = doc.facts[0] as Fact;
    const again = { ...first, sequence: doc.facts.length + 1 };
    expect(firstError({ ...doc, facts: [...doc.facts, again] })).toMatchObject({
      code: "loop/duplicate-fact",
      path: "/facts/7",
    });
    const other = {
      ...again,
      step: { ...first.step, "binding/ref": "operator-task-local-binding:x" },
    };
    expect(firstError({ ...doc, facts: [...doc.facts, other] })).toMatchObject({
      code: "loop/key-conflict",
      path: "/facts/7",
    });
  });
  it("refuses a stop that disagrees with the facts", () => {
    const doc = clone(sampleDoc());
    const stopped = {
      ...doc,
      state: "stopped",
      stop: { reason: "succeeded", "execution/ref": execution(1) },
    };
    expect(firstError(stopped)).toMatchObject({ code: "loop/stop-mismatch", path: "/stop" });
    const facts = history(open(), cycle(1), admit(1), conclude(1, "unknown"));
    const unknown = project(fold(facts), at(10)) as LoopDocument;
    expect(
      firstError({ ...unknown, stop: { reason: "succeeded", "execution/ref": execution(1) } }),
    ).toMatchObject({ code: "loop/stop-mismatch", path: "/stop" });
  });
  it("refuses a fact whose precondition did not hold, with the loop's code at /facts/N", () => {
    const doc = clone(sampleDoc());
    const facts = [...doc.facts];
    const bad = {
      ...(facts[4] as Fact),
      step: {
        kind: "run-admitted",
        "proposal/ref":
          (facts[6] as Fact).step.kind === "cycle-opened"
            ? ((facts[6] as Fact).step as { "proposal/ref": string })["proposal/ref"]
            : "",
      },
    } as Fact;
    facts[4] = bad;
    expect(firstError({ ...doc, facts })).toMatchObject({
      code: "loop/cycle-missing",
      path: "/facts/4",
    });
  });
  it("refuses a charge past the budget or the deadline", () => {
    const layers = [{ "max/passages": 1, "max/experiments": 1, "max/wall-time-ms": 60_000 }];
    const facts = history(open(layers), passage(1));
    const doc = project(fold(facts), at(2)) as LoopDocument;
    const extra = {
      ...(facts[1] as Fact),
      sequence: 3,
      step: { ...(facts[1] as Fact).step, "passage/ref": "passage:p9" },
    } as Fact;
    const over = {
      ...doc,
      spent: { ...doc.spent, passages: 2, "solver-passages": 2 },
      facts: [...facts, extra],
    };
    expect(firstError(over)).toMatchObject({
      code: "loop/budget-exhausted",
      path: "/facts/2",
      detail: { counter: "max/passages" },
    });
    const late = { ...(facts[1] as Fact), "recorded-at": "2026-12-01T10:01:00Z" };
    expect(firstError({ ...doc, facts: [facts[0], late] })).toMatchObject({
      code: "loop/deadline-passed",
      path: "/facts/1",
    });
  });
  it("refuses an opening whose deadline is not its time plus the wall time: loop/fact-mismatch", () => {
    const doc = clone(published) as Mutable;
    const facts = doc.facts as Array<{ step: { deadline: string } }>;
    (facts[0] as { step: { deadline: string } }).step.deadline = "2026-09-25T13:00:00Z";
    doc.deadline = "2026-09-25T13:00:00Z";
    expect(firstError(doc)).toMatchObject({ code: "loop/fact-mismatch", path: "/facts/0" });
  });
  it("refuses a fact of another query and a recorded-at without Z", () => {
    const doc = clone(sampleDoc());
    const facts = [...doc.facts];
    facts[1] = { ...(facts[1] as Fact), "query/id": "query:other" };
    expect(firstError({ ...doc, facts })).toMatchObject({
      code: "loop/fact-mismatch",
      path: "/facts/1",
    });
    const facts2 = [...doc.facts];
    facts2[1] = { ...(facts2[1] as Fact), "recorded-at": "2026-12-01T10:00:01+00:00" };
    expect(firstError({ ...doc, facts: facts2 })).toMatchObject({
      code: "loop/recorded-at",
      path: "/facts/1/recorded-at",
    });
  });
});

describe("checkStoredLoop", () => {
  async function storedLoop() {
    const store = new MemoryLedgerStore();
    const ledger = new LoopLedger(store);
    const proposal = buildProposal({
      query: QUERY,
      agentId: "agent:a1",
      passageRef: "passage:p1",
      candidate: { hypothesis: "h", steps: [{ id: "s1", action: "observe", read: ["a"] }] },
      evidence: [],
      createdAt: "2026-12-01T10:00:01Z",
    });
    const exec = buildExecution({
      query: QUERY,
      proposalRef: proposal["proposal/ref"],
      environmentRef: "environment:e1",
      steps: [],
      checks: [],
      outcome: "verification-failed",
      startedAt: "2026-12-01T10:00:03Z",
      endedAt: "2026-12-01T10:00:04Z",
    });
    const p = proposal["proposal/ref"];
    await ledger.execute(QUERY, open(), at(0));
    await ledger.execute(QUERY, { op: "open-cycle", proposal: p }, at(1), [
      toLedgerRecord("proposal", proposal),
    ]);
    await ledger.execute(QUERY, { op: "admit-run", proposal: p }, at(2));
    await ledger.execute(
      QUERY,
      {
        op: "conclude",
        proposal: p,
        execution: exec["execution/ref"],
        outcome: "verification-failed",
      },
      at(3),
      [toLedgerRecord("execution", exec)],
    );
    const stored = await store.readFacts(QUERY);
    const records = new Map((await store.listRecords(QUERY)).map((r) => [r.ref, r] as const));
    return { stored, records, p, exec: exec["execution/ref"] };
  }
  const errorOf = (stored: readonly StoredFact[], records: ReadonlyMap<string, LedgerRecord>) => {
    const r = checkStoredLoop(QUERY, stored, records, at(10));
    if (r.ok) throw new Error("expected a refusal");
    return r.errors[0];
  };
  it("accepts a loop written through LoopLedger into the memory store", async () => {
    const { stored, records } = await storedLoop();
    expect(checkStoredLoop(QUERY, stored, records, at(10)).ok).toBe(true);
  });
  it("refuses a loop that is not there", () => {
    expect(checkStoredLoop(QUERY, [], new Map(), at(0)).ok).toBe(false);
  });
  it("refuses a broken hash chain: store/chain-broken", async () => {
    const { stored, records } = await storedLoop();
    const tampered = stored.map((s, i) =>
      i === 2 ? { ...s, hash: chainHash("f".repeat(64), s.fact) } : s,
    );
    expect(errorOf(tampered, records)).toMatchObject({
      code: "store/chain-broken",
      path: "/facts/2",
    });
    const edited = stored.map((s, i) =>
      i === 1 ? { ...s, fact: { ...s.fact, "recorded-at": "2026-12-01T10:00:00Z" } } : s,
    );
    expect(errorOf(edited, records)).toMatchObject({
      code: "store/chain-broken",
      path: "/facts/1",
    });
  });
  it("refuses a wrong charge key: store/charge-key-mismatch", async () => {
    const { stored, records } = await storedLoop();
    const tampered = stored.map((s, i) => (i === 1 ? { ...s, chargeKey: "x" } : s));
    expect(errorOf(tampered, records)).toMatchObject({
      code: "store/charge-key-mismatch",
      path: "/facts/1",
    });
  });
  it("refuses a missing proposal or execution record: store/record-missing", async () => {
    const { stored, records, p, exec } = await storedLoop();
    const noProposal = new Map(records);
    noProposal.delete(p);
    expect(errorOf(stored, noProposal)).toMatchObject({
      code: "store/record-missing",
      path: "/facts/1",
    });
    const noExec = new Map(records);
    noExec.delete(exec);
    expect(errorOf(stored, noExec)).toMatchObject({
      code: "store/record-missing",
      path: "/facts/3",
    });
  });
  it("refuses a record whose body does not reproduce its ref: store/record-mismatch", async () => {
    const { stored, records, p } = await storedLoop();
    const bad = new Map(records);
    const r = bad.get(p) as LedgerRecord;
    bad.set(p, { ...r, body: { ...(r.body as object), evidence: ["x:y"] } });
    expect(errorOf(stored, bad)).toMatchObject({ code: "store/record-mismatch", path: "/facts/1" });
  });
  it("refuses a record that is not of its kind, its ref reproduced or not: store/record-mismatch", async () => {
    const { stored, records, exec } = await storedLoop();
    const bad = new Map(records);
    const r = bad.get(exec) as LedgerRecord;
    const { outcome: _, ...noOutcome } = r.body as Record<string, unknown>;
    bad.set(exec, {
      ...r,
      body: withContentRef<Record<string, unknown>, typeof EXECUTION_REF_FIELD>(
        EXECUTION_PREFIX,
        EXECUTION_REF_FIELD,
        noOutcome,
      ),
    });
    const error = errorOf(stored, bad);
    expect(error).toMatchObject({ code: "store/record-mismatch", path: "/facts/3" });
    expect(error?.message).toContain("is not one");
  });
});
