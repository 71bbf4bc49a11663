// Audit bundles, each rule decided alone: every bundle below is a sound bundle of a signed loop
// with one part changed, so the rule under test is the one that refuses it (bundle/invalid at the
// part whose shape is wrong, bundle/head-missing, bundle/head-mismatch, bundle/loop-mismatch for
// a seed-valid loop document that is not the projection of the bundled facts); and which head a
// bundle is exported under.
import { describe, expect, it } from "vitest";
import { auditBundle, isBundle, makeBundle } from "../../src/core/loop/bundle.js";
import { project } from "../../src/core/loop/project.js";
import { fold } from "../../src/core/loop/state.js";
import type { Fact, LoopDocument } from "../../src/core/loop/types.js";
import { base64url, canonicalJson } from "../../src/core/records/canonical.js";
import { headRecord } from "../../src/core/records/host-records.js";
import { publicKeyOf } from "../../src/core/records/signature.js";
import { type CachedLoop, cachedLoops } from "./audited-rows.js";
import { at, QUERY } from "./gwt.js";

// The loops of audited-loop.ts, as cached data (audited-rows.ts): nothing is built or signed
// before a bundle is made of them, and the runtime is not loaded.
type Built = CachedLoop;
const KEY = new Uint8Array(32).fill(5);
const OTHER = new Uint8Array(32).fill(8);
const built = async (outcome: "verification-failed" | "verified" = "verification-failed") =>
  cachedLoops()[outcome === "verified" ? "verified" : "failed"];
const pub = async (k: Uint8Array) => base64url(await publicKeyOf(k));
const body = (r: { readonly text: string }) => JSON.parse(r.text) as Record<string, unknown>;

type Bundle = Record<string, unknown>;

async function docOf(b: Built, when = at(100)): Promise<LoopDocument> {
  return project(fold(b.rows.facts.map((f) => JSON.parse(f.text) as Fact)), when) as LoopDocument;
}

async function bundleOf(b: Built, exportHead?: Awaited<ReturnType<typeof headRecord>>) {
  const doc = await docOf(b);
  return JSON.parse(
    JSON.stringify(makeBundle(QUERY, b.rows, b.acts, doc, at(100), exportHead)),
  ) as Bundle;
}

/** The stored head that matches the last fact (what the drive signed when it ended). */
function lastHead(b: Built) {
  const last = b.rows.facts.at(-1);
  return { sequence: last?.sequence ?? 0, hash: last?.hash ?? "", acts: b.acts.length };
}

async function firstProblem(bundle: unknown, options?: Parameters<typeof auditBundle>[1]) {
  const r = await auditBundle(bundle, options);
  if (r.ok) throw new Error("expected the bundle to be refused");
  return r.errors[0];
}

describe("a bundle's shape (bundle/invalid at the part that is wrong)", () => {
  it("not a bundle: no object, or another format", async () => {
    for (const v of [undefined, null, [], "x", { format: "warrant-loop-bundle.v2" }])
      expect(await firstProblem(v)).toMatchObject({ code: "bundle/invalid", path: "/format" });
    expect(isBundle({ format: "warrant-loop-bundle.v1" })).toBe(true);
    for (const v of [undefined, null, "warrant-loop-bundle.v1", { format: "v1" }, 1])
      expect(isBundle(v)).toBe(false);
  });

  it("each top-level part of the wrong type", async () => {
    const b = await bundleOf(await built());
    const cases: [string, unknown, string][] = [
      ["query/id", 1, "/query~1id"],
      ["exported-at", "yesterday", "/exported-at"],
      ["facts", {}, "/facts"],
      ["records", "[]", "/records"],
      ["acts", null, "/acts"],
    ];
    for (const [field, value, path] of cases)
      expect(await firstProblem({ ...b, [field]: value }), field).toMatchObject({
        code: "bundle/invalid",
        path,
      });
  });

  it("a fact row with one field of the wrong type", async () => {
    const b = await bundleOf(await built());
    const facts = b.facts as Bundle[];
    const row = facts[1] as Bundle;
    for (const [field, value] of [
      ["sequence", 1.5],
      ["sequence", "2"],
      ["charge-key", 1],
      ["kind", null],
      ["fact", {}],
      ["hash", 0],
    ] as const) {
      const t = { ...b, facts: facts.map((f) => (f === row ? { ...row, [field]: value } : f)) };
      expect(await firstProblem(t), `${field}=${String(value)}`).toMatchObject({
        code: "bundle/invalid",
        path: "/facts/1",
      });
    }
    const notObject = { ...b, facts: [facts[0], "row"] };
    expect(await firstProblem(notObject)).toMatchObject({ path: "/facts/1" });
  });

  it("a record row with one field of the wrong type", async () => {
    const b = await bundleOf(await built());
    const records = b.records as Bundle[];
    for (const [field, value] of [
      ["ref", 1],
      ["kind", null],
      ["body", {}],
    ] as const) {
      const t = { ...b, records: records.map((r, i) => (i === 2 ? { ...r, [field]: value } : r)) };
      expect(await firstProblem(t), field).toMatchObject({
        code: "bundle/invalid",
        path: "/records/2",
      });
    }
    expect(await firstProblem({ ...b, records: [records[0], 7] })).toMatchObject({
      path: "/records/1",
    });
  });

  it("an act with one field wrong: another loop, an unknown kind, a field not a string", async () => {
    const b = await bundleOf(await built());
    const act = (b.acts as Bundle[])[0] as Bundle;
    for (const [field, value] of [
      ["query", "query:other"],
      ["kind", "approved"],
      ["target", 1],
      ["operator", null],
      ["at", 0],
      ["text", 1],
    ] as const) {
      const t = { ...b, acts: [{ ...act, [field]: value }] };
      expect(await firstProblem(t), field).toMatchObject({
        code: "bundle/invalid",
        path: "/acts/0",
      });
    }
    expect(await firstProblem({ ...b, acts: ["approve"] })).toMatchObject({ path: "/acts/0" });
  });

  it("every act kind (approve, deny, answer) and an act with its text are of the right shape", async () => {
    const b = await bundleOf(await built());
    const act = (b.acts as Bundle[])[0] as Bundle;
    for (const kind of ["deny", "answer"]) {
      // A deny or answer in place of the approval is well formed: the audit, not the shape, refuses it.
      const p = await firstProblem({ ...b, acts: [{ ...act, kind, text: "why" }] });
      expect(p?.code, kind).not.toBe("bundle/invalid");
    }
  });
});

describe("the head a bundle is exported under", () => {
  it("the latest stored head is named when none is signed for the export, and the bundle audits", async () => {
    const b = await built();
    const bundle = await bundleOf(b);
    const heads = b.rows.records.filter((r) => r.kind === "head");
    const latest = heads.reduce((x, y) =>
      Number(body(y).sequence) > Number(body(x).sequence) ||
      (Number(body(y).sequence) === Number(body(x).sequence) &&
        String(body(y)["signed-at"]) >= String(body(x)["signed-at"]))
        ? y
        : x,
    );
    expect(bundle.head).toBe(latest.ref);
    const r = await auditBundle(bundle, await pub(KEY));
    expect(r.ok, JSON.stringify(r.ok ? [] : r.errors)).toBe(true);
    if (r.ok) expect(r.value.query).toBe(QUERY);
  });

  it("a head signed for the export is added and named; signed at another instant: bundle/head-mismatch", async () => {
    const b = await built();
    const exportHead = await headRecord(QUERY, lastHead(b), "export", KEY, at(100).toISOString());
    const bundle = await bundleOf(b, exportHead);
    expect(bundle.head).toBe(exportHead.ref);
    expect((bundle.records as Bundle[]).at(-1)).toEqual({
      ref: exportHead.ref,
      kind: "head",
      body: canonicalJson(exportHead.body),
    });
    expect((await auditBundle(bundle)).ok).toBe(true);
    const early = await headRecord(QUERY, lastHead(b), "export", KEY, at(99).toISOString());
    expect(await firstProblem(await bundleOf(b, early))).toMatchObject({
      code: "bundle/head-mismatch",
      path: "/head",
    });
  });

  it("a head signed for another reason at another instant is fine: only an export head is dated", async () => {
    const b = await built();
    const stop = await headRecord(QUERY, lastHead(b), "stop", KEY, at(99).toISOString());
    expect((await auditBundle(await bundleOf(b, stop))).ok).toBe(true);
  });

  it("no head named, or one that is not among the head records: bundle/head-missing", async () => {
    const b = await built();
    const bundle = await bundleOf(b);
    expect(await firstProblem({ ...bundle, head: null })).toMatchObject({
      code: "bundle/head-missing",
      path: "/head",
    });
    // A record of the bundle, but not a head.
    const proposal = (bundle.records as Bundle[]).find((r) => r.kind === "proposal") as Bundle;
    expect(await firstProblem({ ...bundle, head: proposal.ref })).toMatchObject({
      code: "bundle/head-missing",
    });
    expect(await firstProblem({ ...bundle, head: "head:sha256:none" })).toMatchObject({
      code: "bundle/head-missing",
    });
  });

  it("an earlier head named while a later one is among the records: bundle/head-mismatch", async () => {
    const b = await built();
    const bundle = await bundleOf(b);
    const heads = (bundle.records as Bundle[]).filter((r) => r.kind === "head");
    const earliest = heads.reduce((x, y) =>
      Number(JSON.parse(String(y.body)).sequence) < Number(JSON.parse(String(x.body)).sequence)
        ? y
        : x,
    );
    expect(await firstProblem({ ...bundle, head: earliest.ref })).toMatchObject({
      code: "bundle/head-mismatch",
      path: "/head",
    });
  });

  it("a head of the last fact that counts fewer acts than another: bundle/head-mismatch", async () => {
    const b = await built();
    const fewer = await headRecord(
      QUERY,
      { ...lastHead(b), acts: 0 },
      "stop",
      KEY,
      at(99).toISOString(),
    );
    expect(await firstProblem(await bundleOf(b, fewer))).toMatchObject({
      code: "bundle/head-mismatch",
    });
  });

  it("of stored heads of one fact, the one counting more acts, then the later one, is named", () => {
    const row = (ref: string, b: object) => ({
      ref,
      kind: "head",
      query: QUERY,
      text: JSON.stringify(b),
    });
    const fact = { sequence: 1, chargeKey: "", kind: "opened", text: "{}", hash: "h" };
    const doc = {} as LoopDocument;
    const headOf = (records: ReturnType<typeof row>[]) =>
      makeBundle(QUERY, { facts: [fact], records }, [], doc, at(1)).head;
    const h = (sequence: number, acts: number, signed: number) => ({
      sequence,
      acts,
      "signed-at": at(signed).toISOString(),
    });
    expect(headOf([row("a", h(2, 0, 5)), row("b", h(3, 0, 1))])).toBe("b");
    expect(headOf([row("b", h(3, 0, 1)), row("a", h(2, 9, 5))])).toBe("b");
    expect(headOf([row("a", h(3, 1, 5)), row("b", h(3, 2, 1))])).toBe("b");
    expect(headOf([row("b", h(3, 2, 1)), row("a", h(3, 1, 5))])).toBe("b");
    expect(headOf([row("a", h(3, 1, 1)), row("b", h(3, 1, 5))])).toBe("b");
    expect(headOf([row("b", h(3, 1, 5)), row("a", h(3, 1, 1))])).toBe("b");
    // A head without signed-at is signed before any that has one.
    const { "signed-at": _s, ...undated } = h(3, 1, 1);
    expect(headOf([row("b", h(3, 1, 1)), row("a", undated)])).toBe("b");
    // Equal in all three: the later row.
    expect(headOf([row("a", h(3, 1, 1)), row("b", h(3, 1, 1))])).toBe("b");
    // A head whose body is not JSON is passed over; no head at all: null.
    expect(headOf([row("b", h(1, 0, 1)), { ...row("a", {}), text: "{" }])).toBe("b");
    expect(headOf([{ ...row("p", h(9, 9, 9)), kind: "proposal" }])).toBeNull();
  });
});

describe("the keys a bundle is audited against", () => {
  it("a key named as a string or as {key}: the loop must be vouched for by it", async () => {
    const bundle = await bundleOf(await built());
    for (const options of [await pub(OTHER), { key: await pub(OTHER) }])
      expect(await firstProblem(bundle, options)).toMatchObject({
        code: "records/key-not-trusted",
        path: "/facts/0",
      });
    const r = await auditBundle(bundle, { key: await pub(KEY), requirePinned: true });
    expect(r.ok && r.value.pinnedBy).toBe("--key");
  });

  it("trusted keys from a file: another key refused, the loop's key pins it by that file", async () => {
    const bundle = await bundleOf(await built());
    const trusted = (k: string) => ({ trusted: { keys: [k], source: "/etc/keys.json" } });
    expect(await firstProblem(bundle, trusted(await pub(OTHER)))).toMatchObject({
      code: "records/key-not-trusted",
    });
    const r = await auditBundle(bundle, trusted(await pub(KEY)));
    expect(r.ok && r.value.pinnedBy).toBe("/etc/keys.json");
  });

  it("requirePinned without any trusted key: audit/key-not-pinned; without requirePinned it audits", async () => {
    const bundle = await bundleOf(await built());
    expect(await firstProblem(bundle, { requirePinned: true })).toMatchObject({
      code: "audit/key-not-pinned",
    });
    const r = await auditBundle(bundle, { requirePinned: false });
    expect(r.ok && r.value.pinnedBy).toBeUndefined();
  });
});

describe("the bundled loop document", () => {
  it("the pinned key is the bundle's host/key; none pinned, or unreadable: null", async () => {
    const b = await built();
    expect((await bundleOf(b))["host/key"]).toBe(await pub(KEY));
    const fact = { sequence: 1, chargeKey: "", kind: "opened", text: "{}", hash: "h" };
    const doc = {} as LoopDocument;
    const keyOf = (records: { ref: string; kind: string; query: string; text: string }[]) =>
      makeBundle(QUERY, { facts: [fact], records }, [], doc, at(1))["host/key"];
    expect(keyOf([])).toBeNull();
    expect(keyOf([{ ref: "k", kind: "hostKey", query: QUERY, text: "{" }])).toBeNull();
    expect(
      keyOf([{ ref: "k", kind: "hostKey", query: QUERY, text: '{"key/public":1}' }]),
    ).toBeNull();
  });

  it("the document of another loop with as many facts: bundle/loop-mismatch, not passed on its fact count", async () => {
    const failed = await built("verification-failed");
    const verified = await built("verified");
    const bundle = await bundleOf(failed);
    const other = await docOf(verified);
    const facts = (d: unknown) => (d as { facts: unknown[] }).facts;
    expect(facts(other)).toHaveLength(facts(bundle.loop).length);
    expect(await firstProblem({ ...bundle, loop: other })).toMatchObject({
      code: "bundle/loop-mismatch",
      path: "/loop",
    });
  });

  it("a document of the same facts whose deadline is written otherwise (the same instant): bundle/loop-mismatch", async () => {
    const bundle = await bundleOf(await built());
    const loop = bundle.loop as { deadline: string };
    const deadline = loop.deadline.replace(/Z$/, ".000Z");
    expect(deadline).not.toBe(loop.deadline);
    expect(await firstProblem({ ...bundle, loop: { ...loop, deadline } })).toMatchObject({
      code: "bundle/loop-mismatch",
      path: "/loop",
    });
  });

  it("the document's state is checked as of the export: one projected after the deadline is refused at /loop/state", async () => {
    const b = await built();
    const bundle = await bundleOf(b);
    const late = await docOf(
      b,
      new Date(Date.parse((bundle.loop as { deadline: string }).deadline) + 1),
    );
    expect((late as { state: string }).state).toBe("deadline-passed");
    expect(await firstProblem({ ...bundle, loop: late })).toMatchObject({
      code: "loop/projection-mismatch",
      path: "/loop/state",
    });
  });

  it("a document that is not seed-valid is refused at its own pointer under /loop", async () => {
    const bundle = await bundleOf(await built());
    const p = await firstProblem({ ...bundle, loop: { ...(bundle.loop as object), facts: 1 } });
    expect(p?.path.startsWith("/loop/")).toBe(true);
  });
});
