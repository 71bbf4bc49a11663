// No silent rollback: the host signs a head after every conclusion, stop and operator act (not per
// charge), each act is signed, and a verified run keeps its changeset; the audit refuses a loop
// rolled back past a head, an act no head covers or no host key signed, a deleted changeset, a key
// rotation the previous key did not sign, and a bundle that is not what its rows say — each at the
// first fact it touches. The trusted keys pin the loop's key, and `requirePinned` refuses without.
import { describe, expect, it } from "vitest";
import { auditLoop } from "../../src/core/loop/audit.js";
import { auditBundle, makeBundle } from "../../src/core/loop/bundle.js";
import { approvalTarget } from "../../src/core/loop/next-action.js";
import { project } from "../../src/core/loop/project.js";
import { fold } from "../../src/core/loop/state.js";
import type { Fact, LoopDocument } from "../../src/core/loop/types.js";
import type { OperatorAct, RawLoop } from "../../src/core/ports/ledger-store.js";
import { canonicalJson, contentRef } from "../../src/core/records/canonical.js";
import { actSignatureRecord, headRecord } from "../../src/core/records/host-records.js";
import { operatorActRef } from "../../src/core/records/operator-act.js";
import { RECORD_KIND_TABLE } from "../../src/core/records/record-kinds.js";
import { signRecord } from "../../src/core/records/signature.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { signingStore } from "../../src/runtime/signing-store.js";
import {
  AGENT,
  audit,
  type Built,
  body,
  built,
  factOf,
  firstError,
  KEY,
  NEXT,
  OTHER,
  pub,
  type Row,
  withRecords,
} from "./audited-loop.js";
import { at, OPERATOR, QUERY } from "./gwt.js";

const heads = (b: Built) => b.rows.records.filter((r) => r.kind === "head").map(body);
const errorsOf = async (b: Pick<Built, "rows" | "acts">) => {
  const r = await audit(b, await pub(KEY));
  if (r.ok) throw new Error("expected the audit to refuse");
  return r.errors;
};

/** The loop with its last `n` facts gone, every head gone, and the records only they named. */
function rolledBack(b: Built, n: number, orphans: readonly string[]): Built {
  const facts = b.rows.facts.slice(0, -n);
  const records = b.rows.records.filter((r) => r.kind !== "head" && !orphans.includes(r.kind));
  return { ...b, rows: { facts, records } };
}

describe("the heads the host signs", () => {
  it("after the act, the conclusion and the drive's end — not after each charge — each counting the acts", async () => {
    const b = await built();
    const signed = heads(b).map((h) => [h.reason, h.sequence, h.acts]);
    const admitted = factOf(b, "run-admitted");
    const concluded = factOf(b, "concluded");
    expect(signed).toEqual([
      ["act", admitted, 1],
      ["conclusion", concluded, 1],
      ["block", concluded, 1],
    ]);
    // The act itself is signed, by its ref.
    const sigs = b.rows.records.filter((r) => r.kind === "actSignature").map(body);
    expect(sigs.map((s) => s["act/ref"])).toEqual(b.acts.map(operatorActRef));
  });

  it("after a renewal and a cancellation appended through the signing store", async () => {
    const b = await built();
    const signing = signingStore(b.store, KEY, { now: () => at(60) });
    const ledger = new LoopLedger(signing);
    const renew = { op: "renew", deadline: at(3640).toISOString(), operator: OPERATOR } as const;
    expect((await ledger.execute(QUERY, renew, at(50))).result).toBe("appended");
    expect((await ledger.execute(QUERY, { op: "cancel", operator: OPERATOR }, at(51))).result).toBe(
      "appended",
    );
    const rows = await b.store.readRawLoop(QUERY);
    const after = heads({ ...b, rows }).slice(3);
    expect(after.map((h) => [h.reason, h.sequence])).toEqual([
      ["act", rows.facts.length - 1],
      ["stop", rows.facts.length],
    ]);
    expect((await audit({ rows, acts: b.acts }, await pub(KEY))).ok).toBe(true);
  });

  it("a conclusion's, stop's or renewal's head is stored in its own append: no crash falls between them", async () => {
    const b = await built();
    // A host that dies after the append: nothing written after it reaches the store.
    const dying = new Proxy(b.store, {
      get(target, prop, receiver) {
        if (prop === "putRecords") return () => Promise.reject(new Error("killed"));
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const ledger = new LoopLedger(signingStore(dying, KEY, { now: () => at(60) }));
    expect((await ledger.execute(QUERY, { op: "cancel", operator: OPERATOR }, at(51))).result).toBe(
      "appended",
    );
    const rows = await b.store.readRawLoop(QUERY);
    const last = heads({ ...b, rows }).at(-1);
    expect(last).toMatchObject({ reason: "stop", sequence: rows.facts.length, acts: 1 });
    expect((await audit({ rows, acts: b.acts }, await pub(KEY))).ok).toBe(true);
  });

  it("charges after the last head (a drive in flight, a crash) pass: the rule asks no head per charge", async () => {
    const b = await built();
    const plain = new LoopLedger(b.store);
    const charge = { op: "charge-passage", role: "implementer", agent: AGENT, passage: "p:2" };
    expect((await plain.execute(QUERY, charge as never, at(40))).result).toBe("appended");
    const rows = await b.store.readRawLoop(QUERY);
    const r = await audit({ rows, acts: b.acts }, await pub(KEY));
    expect(r.ok, JSON.stringify(r.ok ? "" : r.errors)).toBe(true);
    expect(r.ok && r.value.signedThrough).toBe(rows.facts.length - 1);
  });
});

describe("audit/unsigned-tail", () => {
  it("a conclusion after the last head (the heads since deleted): at the conclusion", async () => {
    const b = await built();
    const concluded = factOf(b, "concluded");
    const t = withRecords(b, (r) =>
      r.kind === "head" && Number(body(r).sequence) >= concluded ? undefined : r,
    );
    expect(await firstError(t, await pub(KEY))).toMatchObject({
      code: "audit/unsigned-tail",
      path: `/facts/${concluded - 1}`,
    });
  });

  it("the rollback: the last facts, every head and the records they orphan deleted — the act left uncovered", async () => {
    const b = await built("verified");
    const t = rolledBack(b, 1, ["execution", "runReport", "changeset"]);
    const errors = await errorsOf(t);
    expect(errors[0]).toMatchObject({
      code: "audit/unsigned-tail",
      path: `/facts/${factOf(b, "run-admitted") - 1}`,
    });
  });

  it("the rollback of a loop with an earlier conclusion: at that conclusion", async () => {
    const b = await built();
    // A later passage, then a renewal the host sealed; roll back to before the renewal.
    const signing = signingStore(b.store, KEY, { now: () => at(60) });
    const renew = { op: "renew", deadline: at(3640).toISOString(), operator: OPERATOR } as const;
    expect((await new LoopLedger(signing).execute(QUERY, renew, at(50))).result).toBe("appended");
    const rows = await b.store.readRawLoop(QUERY);
    const t = rolledBack({ ...b, rows }, 1, []);
    expect(await firstError(t, await pub(KEY))).toMatchObject({
      code: "audit/unsigned-tail",
      path: `/facts/${factOf(b, "concluded") - 1}`,
    });
  });

  it("an act no head counts: at the act's fact; a head counting more acts than stored: store/truncated", async () => {
    const b = await built();
    const t = withRecords(b, (r) => (r.kind === "head" ? undefined : r));
    const errors = await errorsOf(t);
    const codes = errors.map((e) => `${e.code} ${e.path}`);
    expect(codes).toContain(`audit/unsigned-tail /facts/${factOf(b, "concluded") - 1}`);
    // The approval deleted: the head after it counted one act.
    expect(await firstError({ ...b, acts: [] }, await pub(KEY))).toMatchObject({
      code: "store/truncated",
      path: `/facts/${factOf(b, "run-admitted") - 1}`,
    });
  });
});

describe("operator acts are signed", () => {
  it("a deny by mallory inserted as a row, in place of the approval: records/act-unsigned at its run's conclusion", async () => {
    const b = await built();
    const forged: OperatorAct = {
      query: QUERY,
      kind: "deny",
      target: approvalTarget(b.proposal, "fix"),
      text: "no",
      operator: "node-operator-binding:mallory",
      at: at(6).toISOString(),
    };
    // As many acts as the heads count: only the act's own signature tells.
    const errors = await errorsOf({ ...b, acts: [forged] });
    expect(errors[0]).toMatchObject({
      code: "records/act-unsigned",
      path: `/facts/${factOf(b, "concluded") - 1}`,
    });
    expect(errors[0]?.message).toContain("mallory");
    // Inserted beside the approval: no head counts it either.
    const extra = await errorsOf({ ...b, acts: [...b.acts, { ...forged, target: "x fix" }] });
    expect(extra.map((e) => e.code)).toEqual(
      expect.arrayContaining(["records/act-unsigned", "audit/unsigned-tail"]),
    );
  });

  it("an act signed by another key: records/signature-key at its fact, and the act unsigned", async () => {
    const b = await built();
    const act = b.acts[0] as OperatorAct;
    const other = await actSignatureRecord(act, OTHER);
    const t = withRecords(b, (r) =>
      r.kind === "actSignature" ? { ...r, text: canonicalJson(other.body) } : r,
    );
    const errors = await errorsOf(t);
    expect(errors.slice(0, 2).map((e) => e.code)).toEqual([
      "records/signature-key",
      "records/act-unsigned",
    ]);
    expect(errors[0]?.path).toBe(`/facts/${factOf(b, "concluded") - 1}`);
  });
});

describe("a verified run keeps its changeset", () => {
  it("audits valid with it; deleted: records/missing at the conclusion", async () => {
    const b = await built("verified");
    expect((await audit(b, await pub(KEY))).ok).toBe(true);
    const t = withRecords(b, (r) => (r.kind === "changeset" ? undefined : r));
    expect(await firstError(t, await pub(KEY))).toMatchObject({
      code: "records/missing",
      path: `/facts/${factOf(b, "concluded") - 1}`,
    });
  });
});

describe("key rotation", () => {
  it("a well-formed, correctly addressed rotation signed by the key it introduces is refused by its signature", async () => {
    const b = await built();
    const rotation = {
      "query/id": QUERY,
      "key/previous": await pub(KEY),
      "key/next": await pub(NEXT),
      "at/sequence": 3,
      "rotated-at": at(9).toISOString(),
    };
    const ref = contentRef(RECORD_KIND_TABLE.keyRotation.prefix, rotation, "ref");
    const forged: Row = {
      ref,
      kind: "keyRotation",
      query: QUERY,
      text: canonicalJson(await signRecord(rotation, NEXT)),
    };
    // Every record after the rotation's fact re-signed by the new key, as a forger would.
    const records: Row[] = [];
    for (const r of b.rows.records) {
      if (r.kind !== "passageEnd") {
        records.push(r);
        continue;
      }
      const { signature: _s, ...rest } = body(r);
      records.push({ ...r, text: canonicalJson(await signRecord(rest, NEXT)) });
    }
    const t = { ...b, rows: { ...b.rows, records: [...records, forged] } };
    const r = await audit(t);
    expect(r.ok).toBe(false);
    const errors = r.ok ? [] : r.errors;
    // The rotation is sound (its ref reproduces): only its signature by the previous key decides.
    expect(errors.map((e) => e.code)).not.toContain("store/record-mismatch");
    expect(errors).toContainEqual(
      expect.objectContaining({ code: "records/signature-key", path: "/facts/2" }),
    );
    // Signed by the previous key, the same rotation admits the new key.
    const signed: Row = { ...forged, text: canonicalJson(await signRecord(rotation, KEY)) };
    const ok = await audit({ ...b, rows: { ...b.rows, records: [...records, signed] } });
    expect(ok.ok, JSON.stringify(ok.ok ? "" : ok.errors)).toBe(true);
  });
});

describe("pinning", () => {
  const input = (b: Built) => ({ query: QUERY, rows: b.rows, acts: b.acts, now: at(100) });

  it("a trusted key pins the loop; a trusted set without its key refuses it; requirePinned refuses an unpinned loop", async () => {
    const b = await built();
    const trusted = { keys: [await pub(OTHER), await pub(KEY)], source: "/etc/trusted" };
    const pinned = await auditLoop({ ...input(b), trusted, requirePinned: true });
    expect(pinned.ok && pinned.value.pinnedBy).toBe("/etc/trusted");
    const foreign = await auditLoop({
      ...input(b),
      trusted: { keys: [await pub(OTHER)], source: "f" },
    });
    expect(!foreign.ok && foreign.errors[0]).toMatchObject({
      code: "records/key-not-trusted",
      path: "/facts/0",
    });
    const loose = await auditLoop(input(b));
    expect(loose.ok && loose.value.pinnedBy).toBeUndefined();
    const required = await auditLoop({ ...input(b), requirePinned: true });
    expect(!required.ok && required.errors[0]).toMatchObject({
      code: "audit/key-not-pinned",
      path: "/facts/0",
    });
  });
});

describe("bundles", () => {
  const docOf = (rows: RawLoop, now: Date) =>
    project(fold(rows.facts.map((f) => JSON.parse(f.text) as Fact)), now) as LoopDocument;
  const bundleOf = (b: Built, exportHead?: Parameters<typeof makeBundle>[5]) =>
    JSON.parse(
      JSON.stringify(
        makeBundle(QUERY, b.rows, b.acts, docOf(b.rows, at(100)), at(100), exportHead),
      ),
    ) as Record<string, unknown> & { records: { ref: string; kind: string; body: string }[] };

  it("carries the head it was exported under: the latest stored, or one signed for the export", async () => {
    const b = await built();
    const latest = bundleOf(b);
    const last = b.rows.records.filter((r) => r.kind === "head").at(-1);
    expect(latest.head).toBe(last?.ref);
    expect((await auditBundle(latest, await pub(KEY))).ok).toBe(true);
    const tail = b.rows.facts.at(-1) as RawLoop["facts"][number];
    const head = await headRecord(
      QUERY,
      { sequence: tail.sequence, hash: tail.hash, acts: 1 },
      "export",
      KEY,
      at(100).toISOString(),
    );
    const exported = bundleOf(b, head);
    expect(exported.head).toBe(head.ref);
    expect((await auditBundle(exported, { key: await pub(KEY) })).ok).toBe(true);
  });

  it("no head, an earlier head, or an export head of another export: bundle/head-*", async () => {
    const b = await built();
    const bundle = bundleOf(b);
    const none = await auditBundle({ ...bundle, head: null });
    expect(!none.ok && none.errors[0]).toMatchObject({
      code: "bundle/head-missing",
      path: "/head",
    });
    const first = b.rows.records.find((r) => r.kind === "head");
    const earlier = await auditBundle({ ...bundle, head: first?.ref });
    expect(!earlier.ok && earlier.errors[0]).toMatchObject({
      code: "bundle/head-mismatch",
      path: "/head",
    });
    const tail = b.rows.facts.at(-1) as RawLoop["facts"][number];
    const stale = await headRecord(
      QUERY,
      { sequence: tail.sequence, hash: tail.hash, acts: 1 },
      "export",
      KEY,
      at(99).toISOString(),
    );
    const restamped = await auditBundle(bundleOf(b, stale));
    expect(!restamped.ok && restamped.errors[0]).toMatchObject({ code: "bundle/head-mismatch" });
  });

  it("rolled back in transit (last facts, every head, their orphans, the document redone): audit/unsigned-tail", async () => {
    const b = await built("verified");
    const t = rolledBack(b, 1, ["execution", "runReport", "changeset"]);
    const bundle = {
      ...bundleOf(b),
      ...JSON.parse(
        JSON.stringify(makeBundle(QUERY, t.rows, t.acts, docOf(t.rows, at(100)), at(100))),
      ),
    };
    for (const key of [undefined, await pub(KEY)]) {
      const r = await auditBundle(bundle, key);
      expect(!r.ok && r.errors[0]).toMatchObject({
        code: "audit/unsigned-tail",
        path: `/facts/${factOf(b, "run-admitted") - 1}`,
      });
    }
  });

  it("a loop document that differs from the rows in content but not in fact count: bundle/loop-mismatch", async () => {
    const b = await built();
    const bundle = bundleOf(b);
    // The document of the same number of facts, one of them recorded a second later: valid alone.
    const facts = b.rows.facts.map((f) => JSON.parse(f.text) as Fact);
    const last = facts.at(-1) as Fact;
    const moved = [
      ...facts.slice(0, -1),
      {
        ...last,
        "recorded-at": new Date(Date.parse(last["recorded-at"]) + 1000).toISOString(),
      },
    ];
    const doc = project(fold(moved), at(100)) as LoopDocument;
    expect(doc.facts).toHaveLength(b.rows.facts.length);
    const r = await auditBundle({ ...bundle, loop: doc }, await pub(KEY));
    expect(!r.ok && r.errors[0]).toMatchObject({ code: "bundle/loop-mismatch", path: "/loop" });
  });
});
