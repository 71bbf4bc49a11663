// auditLoop and audit bundles on the memory store: a loop written through the signing store, with
// every kind of record, audits valid; each record rule, the key rules (pinning, rotation) and the
// signed heads refuse what breaks them, each at the first fact it touches; a bundle made from the
// rows audits the same offline.
import { describe, expect, it } from "vitest";
import { auditBundle, makeBundle } from "../../src/core/loop/bundle.js";
import { chainHash, GENESIS_HASH } from "../../src/core/loop/chain.js";
import { project } from "../../src/core/loop/project.js";
import type { Fact, LoopDocument } from "../../src/core/loop/types.js";
import type { RawLoop } from "../../src/core/ports/ledger-store.js";
import { canonicalJson, contentRef } from "../../src/core/records/canonical.js";
import { keyRotationRecord } from "../../src/core/records/host-records.js";
import { toLedgerRecord } from "../../src/core/records/ledger-record.js";
import { buildReview } from "../../src/core/records/review.js";
import { publicKeyOf, signRecord } from "../../src/core/records/signature.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { makeRecord } from "../../src/runtime/records.js";
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
import { at, QUERY } from "./gwt.js";

describe("auditLoop", () => {
  it("a loop written through the signing store audits valid, signed through its last fact", async () => {
    const b = await built();
    const r = await audit(b, await pub(KEY));
    expect(r.ok, JSON.stringify(r.ok ? [] : r.errors)).toBe(true);
    if (!r.ok) return;
    expect(r.value.keys).toEqual([await pub(KEY)]);
    expect(r.value.signedThrough).toBe(b.rows.facts.length);
    expect(b.rows.records.map((x) => x.kind).sort()).toEqual(
      [
        "actSignature",
        "binding",
        "execution",
        "head",
        "head",
        "head",
        "hostKey",
        "passageEnd",
        "passageEnd",
        "proposal",
        "review",
        "runReport",
        "runStarted",
        "stepStarted",
        "transcript",
      ].sort(),
    );
  });

  it("records/key-missing when no key is pinned, records/key-not-trusted for another key", async () => {
    const b = await built();
    expect(
      await firstError(withRecords(b, (r) => (r.kind === "hostKey" ? undefined : r))),
    ).toMatchObject({
      code: "records/key-missing",
      path: "/facts/0",
    });
    expect(await firstError(b, await pub(OTHER))).toMatchObject({
      code: "records/key-not-trusted",
      path: "/facts/0",
    });
  });

  it("a rotation signed by the pinned key admits the next key; one signed by the next key does not", async () => {
    const b = await built();
    const reSigned = async (signer: Uint8Array, rotation: Row | undefined) => {
      const records: Row[] = [];
      for (const r of b.rows.records) {
        if (r.kind !== "passageEnd") {
          records.push(r);
          continue;
        }
        const { signature: _s, ...rest } = body(r);
        records.push({ ...r, text: JSON.stringify(await signRecord(rest, signer)) });
      }
      if (rotation !== undefined) records.push(rotation);
      return { ...b, rows: { ...b.rows, records } };
    };
    const rotate = async (by: Uint8Array) => {
      const rec = await keyRotationRecord(
        QUERY,
        by,
        await publicKeyOf(NEXT),
        3,
        at(9).toISOString(),
      );
      return { ref: rec.ref, kind: rec.kind, query: QUERY, text: JSON.stringify(rec.body) };
    };
    expect((await audit(await reSigned(NEXT, await rotate(KEY)), await pub(NEXT))).ok).toBe(true);
    expect(await firstError(await reSigned(NEXT, undefined))).toMatchObject({
      code: "records/signature-key",
      path: "/facts/1",
    });
    // A rotation signed by the key it introduces proves nothing.
    const selfMade = await rotate(NEXT);
    const forged = {
      ...selfMade,
      text: JSON.stringify({ ...JSON.parse(selfMade.text), "key/previous": await pub(KEY) }),
    };
    const r = await audit(await reSigned(NEXT, forged));
    expect(r.ok).toBe(false);
  });

  it("a review whose verdict is not its passage's: records/mismatch at the reviewer passage", async () => {
    const b = await built();
    const reject = { decision: "reject", findings: [] };
    // The review is re-signed and keeps a sound ref: only the rule that ties it to its passage tells.
    const records: Row[] = [];
    for (const row of b.rows.records) {
      if (row.kind !== "review") {
        records.push(row);
        continue;
      }
      const { signature: _s, "review/ref": _r, ...rest } = body(row);
      const rebuilt = toLedgerRecord(
        "review",
        await signRecord(
          buildReview({
            query: QUERY,
            proposalRef: String(rest["proposal/ref"]),
            agentId: AGENT,
            passageRef: String(rest["passage/ref"]),
            verdict: reject,
            createdAt: String(rest["created-at"]),
          }),
          KEY,
        ),
      );
      records.push({ ...row, ref: rebuilt.ref, text: JSON.stringify(rebuilt.body) });
    }
    const r = await audit({ ...b, rows: { ...b.rows, records } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const reviewer = `/facts/${factOf(b, "passage-charged", 1) - 1}`;
    expect(r.errors[0]).toMatchObject({ code: "records/mismatch", path: reviewer });
    // And nothing accepts the run any more, nor is the review the execution names there.
    expect(r.errors.map((e) => e.path)).toContain(`/facts/${factOf(b, "run-admitted") - 1}`);
  });

  it("a proposal not planned by its passage: records/mismatch at its cycle", async () => {
    const b = await built();
    const other = { type: "Plan", payload: { hypothesis: "other", steps: [] } };
    const r = await audit(
      withRecords(b, (row) =>
        row.kind === "passageEnd" && body(row).role === "implementer"
          ? { ...row, text: JSON.stringify({ ...body(row), message: other }) }
          : row,
      ),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // The edited end no longer reproduces its ref (at its passage), and the cycle's proposal is
    // not its Plan any more.
    expect(r.errors[0]).toMatchObject({ path: `/facts/${factOf(b, "passage-charged") - 1}` });
    expect(r.errors).toContainEqual(
      expect.objectContaining({
        code: "records/mismatch",
        path: `/facts/${factOf(b, "cycle-opened") - 1}`,
      }),
    );
  });

  it("a step journal deleted: records/missing at the conclusion", async () => {
    const b = await built();
    expect(
      await firstError(withRecords(b, (r) => (r.kind === "stepStarted" ? undefined : r))),
    ).toMatchObject({
      code: "records/missing",
      path: `/facts/${factOf(b, "concluded") - 1}`,
    });
  });

  it("a passage end deleted while later work followed: records/missing at its passage", async () => {
    const b = await built();
    expect(
      await firstError(
        withRecords(b, (r) =>
          r.kind === "passageEnd" && body(r).role === "implementer" ? undefined : r,
        ),
      ),
    ).toMatchObject({ code: "records/missing", path: "/facts/1" });
  });

  it("an execution that names no approval for a mutation that ran: records/approval-missing", async () => {
    const b = await built();
    const acts = b.acts.map((a) => ({ ...a, at: at(50).toISOString() }));
    const r = await audit({ rows: b.rows, acts });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors.map((e) => e.code)).toContain("records/missing");
      expect(r.errors.map((e) => e.code)).toContain("records/approval-missing");
    }
  });

  it("a record of another loop, or that no fact names: records/orphan", async () => {
    const b = await built();
    const stray = makeRecord("passageEnd", QUERY, {
      "query/id": QUERY,
      "passage/ref": "passage:none",
      role: "implementer",
    });
    const signed = await signRecord(stray.body as object, KEY);
    const r = await audit({
      ...b,
      rows: {
        ...b.rows,
        records: [
          ...b.rows.records,
          { ref: stray.ref, kind: "passageEnd", query: QUERY, text: JSON.stringify(signed) },
        ],
      },
    });
    expect(!r.ok && r.errors[0]).toMatchObject({
      code: "records/orphan",
      path: `/records/${b.rows.records.length}`,
    });
  });

  it("a changeset naming an execution that was not verified: records/mismatch", async () => {
    const b = await built();
    const execution = b.rows.records.find((r) => r.kind === "execution");
    const changeset = makeRecord("changeset", QUERY, {
      "query/id": QUERY,
      "proposal/ref": b.proposal,
      "execution/ref": execution?.ref,
      baseline: "sha256:x",
      files: [],
      complete: true,
    });
    const signed = await signRecord(changeset.body as object, KEY);
    const r = await audit({
      ...b,
      rows: {
        ...b.rows,
        records: [
          ...b.rows.records,
          { ref: changeset.ref, kind: "changeset", query: QUERY, text: JSON.stringify(signed) },
        ],
      },
    });
    expect(!r.ok && r.errors.map((e) => e.code)).toContain("records/mismatch");
    expect(!r.ok && r.errors.find((e) => e.code === "records/mismatch")?.message).toContain(
      "not a verified execution",
    );
  });

  it("the memory store's rows carry its kind column and fact text", async () => {
    const b = await built();
    for (const f of b.rows.facts) expect(JSON.parse(f.text).step.kind).toBe(f.kind);
  });
});

/** The rows with fact `i` replaced and every hash from it on recomputed, as a careful forger would. */
function rechained(b: Built, i: number, fact: Fact): Built {
  const facts = [...b.rows.facts];
  let prev = i === 0 ? GENESIS_HASH : (facts[i - 1]?.hash ?? "");
  for (let j = i; j < facts.length; j++) {
    const f = j === i ? fact : (JSON.parse(facts[j]?.text ?? "") as Fact);
    const hash = chainHash(prev, f);
    facts[j] = { ...(facts[j] as RawLoop["facts"][number]), text: canonicalJson(f), hash };
    prev = hash;
  }
  return { ...b, rows: { ...b.rows, facts } };
}

const bodyWhere = (
  b: Built,
  kind: string,
  where: (x: Record<string, unknown>) => boolean = () => true,
) => b.rows.records.find((r) => r.kind === kind && where(body(r))) as Row;
const edit = (
  b: Built,
  ref: string,
  f: (x: Record<string, unknown>) => Record<string, unknown>,
  newRef = ref,
) =>
  withRecords(b, (r) =>
    r.ref === ref ? { ...r, ref: newRef, text: JSON.stringify(f(body(r))) } : r,
  );

/** The tamperings of the store tests, on the memory store's rows: where each must be reported. */
const MEMORY_TAMPERINGS: Record<string, (b: Built) => Promise<[Built, string, string[]]>> = {
  "a signature corrupted": async (b) => {
    const e = bodyWhere(b, "execution");
    const t = edit(b, e.ref, (x) => {
      const sig = x.signature as { value: string };
      return { ...x, signature: { ...sig, value: `${sig.value.slice(0, -2)}AA` } };
    });
    return [t, `/facts/${factOf(b, "concluded") - 1}`, ["records/signature-invalid"]];
  },
  "a signature removed": async (b) => {
    const r = bodyWhere(b, "review");
    const t = edit(b, r.ref, ({ signature: _s, ...x }) => x);
    return [t, `/facts/${factOf(b, "passage-charged", 1) - 1}`, ["records/signature-missing"]];
  },
  "a signature swapped": async (b) => {
    const p = body(bodyWhere(b, "proposal"));
    const r = bodyWhere(b, "review");
    const t = edit(b, r.ref, (x) => ({ ...x, signature: p.signature }));
    return [t, `/facts/${factOf(b, "passage-charged", 1) - 1}`, ["records/signature-invalid"]];
  },
  "a record re-keyed": async (b) => {
    const e = bodyWhere(b, "passageEnd");
    const { signature: _s, ...rest } = body(e);
    const signed = await signRecord(rest, OTHER);
    const t = edit(b, e.ref, () => signed as Record<string, unknown>);
    return [t, "/facts/1", ["records/signature-key"]];
  },
  "a forged execution with its ref, fact and chain recomputed": async (b) => {
    const e = bodyWhere(b, "execution");
    const forged = { ...body(e), outcome: "verification-failed", "ended-at": at(99).toISOString() };
    const ref = contentRef("corpus-task-pack-execution", forged, "execution/ref");
    const c = factOf(b, "concluded") - 1;
    const fact = JSON.parse(b.rows.facts[c]?.text ?? "") as Fact;
    const t = rechained(
      edit(b, e.ref, () => ({ ...forged, "execution/ref": ref }), ref),
      c,
      { ...fact, step: { ...fact.step, "execution/ref": ref } as Fact["step"] },
    );
    return [t, `/facts/${c}`, ["records/signature-invalid", "store/head-mismatch"]];
  },
  "a review flipped": async (b) => {
    const r = bodyWhere(b, "review");
    const t = edit(b, r.ref, (x) => ({
      ...x,
      verdict: { ...(x.verdict as object), decision: "reject" },
    }));
    return [t, `/facts/${factOf(b, "passage-charged", 1) - 1}`, ["store/record-mismatch"]];
  },
  "a review deleted": async (b) => {
    const t = withRecords(b, (r) => (r.kind === "review" ? undefined : r));
    return [t, `/facts/${factOf(b, "passage-charged", 1) - 1}`, ["records/missing"]];
  },
  "a run report deleted": async (b) => {
    const t = withRecords(b, (r) => (r.kind === "runReport" ? undefined : r));
    return [t, `/facts/${factOf(b, "concluded") - 1}`, ["records/missing"]];
  },
  "a transcript edited": async (b) => {
    const tr = bodyWhere(b, "transcript");
    const t = edit(b, tr.ref, (x) => ({ ...x, entries: [{ kind: "model-error" }] }));
    return [t, "/facts/1", ["store/record-mismatch"]];
  },
  // The head signed after the approval counted it.
  "an approval deleted": async (b) => [
    { ...b, acts: [] },
    `/facts/${factOf(b, "run-admitted") - 1}`,
    ["store/truncated"],
  ],
  "the last fact removed": async (b) => [
    { ...b, rows: { ...b.rows, facts: b.rows.facts.slice(0, -1) } },
    `/facts/${b.rows.facts.length - 1}`,
    ["store/truncated"],
  ],
};

describe("every tampering on the memory store's rows", () => {
  for (const [name, tamper] of Object.entries(MEMORY_TAMPERINGS)) {
    it(`${name}: refused at the first fact it touches`, async () => {
      const [t, path, codes] = await tamper(await built());
      const e = await firstError(t, await pub(KEY));
      expect(e?.path, JSON.stringify(e)).toBe(path);
      expect(codes).toContain(e?.code);
    });
  }
});

describe("audit bundles", () => {
  async function bundleOf(b: Built) {
    const doc = project(await new LoopLedger(b.store).state(QUERY), at(100)) as LoopDocument;
    return JSON.parse(JSON.stringify(makeBundle(QUERY, b.rows, b.acts, doc, at(100)))) as Record<
      string,
      unknown
    >;
  }

  it("a bundle audits offline as the store does; its loop document is seed-valid", async () => {
    const b = await built();
    const bundle = await bundleOf(b);
    expect(bundle["host/key"]).toBe(await pub(KEY));
    const r = await auditBundle(bundle, await pub(KEY));
    expect(r.ok, JSON.stringify(r.ok ? [] : r.errors)).toBe(true);
  });

  it("a bundle whose document disagrees with its rows, or whose shape is wrong, is refused", async () => {
    const b = await built();
    const bundle = await bundleOf(b);
    const loop = bundle.loop as { facts: unknown[] };
    const shorter = { ...bundle, loop: { ...loop, facts: loop.facts.slice(0, 2) } };
    const r = await auditBundle(shorter);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors[0]?.path.startsWith("/loop")).toBe(true);
    const bad = await auditBundle({ ...bundle, facts: [{ sequence: "1" }] });
    expect(!bad.ok && bad.errors[0]).toMatchObject({ code: "bundle/invalid", path: "/facts/0" });
    const acts = await auditBundle({ ...bundle, acts: [{ query: "query:other" }] });
    expect(!acts.ok && acts.errors[0]).toMatchObject({ code: "bundle/invalid", path: "/acts/0" });
  });

  it("a tampered bundle is refused like a tampered store (the approval removed)", async () => {
    const b = await built();
    const bundle = await bundleOf(b);
    const r = await auditBundle({ ...bundle, acts: [] });
    expect(!r.ok && r.errors[0]).toMatchObject({
      code: "store/truncated",
      path: `/facts/${factOf(b, "run-admitted") - 1}`,
    });
    expect(!r.ok && r.errors.map((e) => e.code)).toContain("records/missing");
    expect(canonicalJson(bundle.acts)).not.toBe("[]");
  });
});
