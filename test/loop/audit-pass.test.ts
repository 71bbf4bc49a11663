// auditLoop's own checks (audit.ts) over the rows of a cached loop (audited-rows.json), each input
// forged so that it passes every earlier check and the check under test decides: rows that parse
// but disagree with their fact, records of a kind their ref does not name, of another loop, or
// edited; a well-formed, correctly hashed record that is unsigned, signed by a key the loop never
// reached, or wrongly signed; a pin the key it names did not sign; rotations only the previous key
// can make. Most inputs carry no host key (or no signatures), so the audit verifies few or no
// signatures and each test stays a pure call of the audit.
import { describe, expect, it } from "vitest";
import { type AuditInput, auditLoop } from "../../src/core/loop/audit.js";
import { chainHash, GENESIS_HASH } from "../../src/core/loop/chain.js";
import { checkFacts } from "../../src/core/loop/check.js";
import type { Fact } from "../../src/core/loop/types.js";
import type { OperatorAct, RawLoop } from "../../src/core/ports/ledger-store.js";
import { contentRef } from "../../src/core/records/canonical.js";
import { OUTSIDE_REF_FIELD, RECORD_KIND_TABLE } from "../../src/core/records/record-kinds.js";
import { signRecord } from "../../src/core/records/signature.js";
import { cachedLoops } from "./audited-rows.js";

type Body = Record<string, unknown>;
type Row = RawLoop["records"][number];
interface Loop {
  rows: RawLoop;
  acts: OperatorAct[];
}

const QUERY = "query:demo-1";
const NOW = new Date(Date.parse("2026-12-01T10:00:00Z") + 100_000);
const KEY = new Uint8Array(32).fill(5);
const NEXT = new Uint8Array(32).fill(6);
const OTHER = new Uint8Array(32).fill(8);
const PUB = cachedLoops().keys;

function loop(which: "failed" | "verified" = "failed"): Loop {
  const c = cachedLoops()[which];
  return { rows: c.rows, acts: [...c.acts] };
}

async function audit(l: Loop, o: Partial<AuditInput> = {}) {
  return auditLoop({ query: QUERY, rows: l.rows, acts: l.acts, now: NOW, ...o });
}
/** The problems of an audit that fails, as [code, path]. */
async function problems(l: Loop, o: Partial<AuditInput> = {}): Promise<[string, string][]> {
  const r = await audit(l, o);
  if (r.ok) return [];
  return r.errors.map((p) => [p.code, p.path] as [string, string]);
}
/** What `l`'s audit finds beyond what `base`'s does (each of base's problems taken once). */
async function beyond(l: Loop, base: Loop, o: Partial<AuditInput> = {}) {
  const left = await problems(base, o);
  const more: [string, string][] = [];
  for (const p of await problems(l, o)) {
    const i = left.findIndex((q) => q[0] === p[0] && q[1] === p[1]);
    if (i < 0) more.push(p);
    else left.splice(i, 1);
  }
  return more;
}

const body = (r: Row) => JSON.parse(r.text) as Body;
const rowOf = (l: Loop, kind: string, nth = 0) =>
  l.rows.records.filter((r) => r.kind === kind)[nth] as Row;
const indexOf = (l: Loop, kind: string, nth = 0) => l.rows.records.indexOf(rowOf(l, kind, nth));

/** The loop with its record rows mapped (undefined: deleted). */
function records(l: Loop, f: (r: Row, i: number) => Row | undefined): Loop {
  return { ...l, rows: { ...l.rows, records: l.rows.records.flatMap((r, i) => f(r, i) ?? []) } };
}
/** The loop with the `nth` row of `kind` mapped. */
function row(l: Loop, kind: string, f: (r: Row) => Row | undefined, nth = 0): Loop {
  const target = rowOf(l, kind, nth);
  return records(l, (r) => (r === target ? f(r) : r));
}
const unpinned = (l: Loop) => records(l, (r) => (r.kind === "hostKey" ? undefined : r));
/** The loop with every record's signature removed but the pin's. */
const unsigned = (l: Loop) =>
  records(l, (r) => {
    if (r.kind === "hostKey") return r;
    const { signature: _s, ...b } = body(r);
    return { ...r, text: JSON.stringify(b) };
  });

/** A record of a kind whose ref is kept beside its body, its ref correct, signed by `signer`. */
async function made(kind: keyof typeof RECORD_KIND_TABLE, b: Body, signer?: Uint8Array) {
  const ref = contentRef(RECORD_KIND_TABLE[kind].prefix, b, OUTSIDE_REF_FIELD);
  const text = JSON.stringify(signer === undefined ? b : await signRecord(b, signer));
  return { ref, kind, query: QUERY, text } as Row;
}

/** The fact rows in the given order, numbered again and chained again; and their facts. */
function reordered(l: Loop, order: number[]): { rows: RawLoop["facts"]; facts: Fact[] } {
  let previous = GENESIS_HASH;
  const facts: Fact[] = [];
  const rows = order.map((from, i) => {
    const old = l.rows.facts[from] as RawLoop["facts"][number];
    const fact = { ...(JSON.parse(old.text) as Fact), sequence: i + 1 };
    facts.push(fact);
    const hash = chainHash(previous, fact);
    previous = hash;
    return { ...old, sequence: i + 1, text: JSON.stringify(fact), hash };
  });
  return { rows, facts };
}
const withFacts = (l: Loop, facts: RawLoop["facts"]): Loop => ({
  ...l,
  rows: { ...l.rows, facts },
});

describe("the fact rows: each parses, and its columns agree with the fact it holds", () => {
  it("no fact: loop/not-opened, and nothing else", async () => {
    const l = loop();
    expect(await problems(withFacts(l, []))).toEqual([["loop/not-opened", ""]]);
  });

  it("a row that is not a fact in JSON: store/row-invalid there, and the audit ends at it", async () => {
    const l = loop();
    const f = l.rows.facts;
    for (const text of [
      "nope",
      "[]",
      "null",
      "1",
      '{"step":[]}',
      '{"step":null}',
      '{"step":{"kind":1}}',
      '{"step":{}}',
    ]) {
      const broken = f.map((r, i) => (i === 2 ? { ...r, text } : r));
      expect(await problems(withFacts(l, broken)), text).toEqual([
        ["store/row-invalid", "/facts/2"],
      ]);
    }
    // What was found before it is reported with it; what follows is not read.
    const both = f.map((r, i) =>
      i === 1
        ? { ...r, kind: "opened" }
        : i === 2
          ? { ...r, text: "nope" }
          : i === 4
            ? { ...r, kind: "x" }
            : r,
    );
    expect(await problems(withFacts(l, both))).toEqual([
      ["store/kind-mismatch", "/facts/1"],
      ["store/row-invalid", "/facts/2"],
    ]);
  });

  it("a kind or sequence column that is not the fact's: store/kind-mismatch, store/row-mismatch", async () => {
    const l = unpinned(loop());
    const f = l.rows.facts;
    const kind = withFacts(
      l,
      f.map((r, i) => (i === 3 ? { ...r, kind: "run-admitted" } : r)),
    );
    expect(await beyond(kind, l)).toEqual([["store/kind-mismatch", "/facts/3"]]);
    const seq = withFacts(
      l,
      f.map((r, i) => (i === 3 ? { ...r, sequence: 9 } : r)),
    );
    expect(await beyond(seq, l)).toEqual([["store/row-mismatch", "/facts/3"]]);
  });

  it("a broken chain after a mismatch: both, and nothing after", async () => {
    const l = loop();
    const f = l.rows.facts;
    const broken = f.map((r, i) =>
      i === 1 ? { ...r, kind: "x" } : i === 3 ? { ...r, hash: "0".repeat(64) } : r,
    );
    expect(await problems(withFacts(l, broken))).toEqual([
      ["store/kind-mismatch", "/facts/1"],
      ["store/chain-broken", "/facts/3"],
    ]);
  });

  it("facts that chain but do not follow the loop's rules: those problems, and nothing after", async () => {
    const l = loop();
    // The conclusion before its admission, renumbered and chained again.
    const swapped = reordered(l, [0, 1, 2, 3, 5, 4]);
    const rows = swapped.rows.map((r, i) => (i === 0 ? { ...r, kind: "x" } : r));
    const checked = checkFacts(swapped.facts);
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(await problems(withFacts(l, rows))).toEqual([
      ["store/kind-mismatch", "/facts/0"],
      ...checked.errors.map((e) => [e.code, e.path]),
    ]);
  });
});

describe("the record rows: each parses, its kind column is the kind its ref names, it is this loop's and reproduces its ref", () => {
  // Without a pinned key no signature is verified: what these rules find is all that differs.
  const base = () => unpinned(loop());

  it("a body that is not a JSON object: store/row-invalid where the record is named, else at its row", async () => {
    const l = base();
    for (const text of ["nope", "[1]", "null", '"x"']) {
      const p = row(l, "proposal", (r) => ({ ...r, text }));
      // Unreadable, it is also missing for the cycle that names it.
      expect(await beyond(p, l), text).toEqual([
        ["store/row-invalid", "/facts/2"],
        ["records/missing", "/facts/2"],
      ]);
    }
    const report = row(l, "runReport", (r) => ({ ...r, text: "[]" }));
    expect(await beyond(report, l)).toEqual([
      ["records/missing", "/facts/5"],
      ["store/row-invalid", `/records/${indexOf(l, "runReport")}`],
    ]);
  });

  it("a kind column that is no kind, or not the kind its ref names: store/kind-mismatch", async () => {
    const l = base();
    const bogus = row(l, "runReport", (r) => ({ ...r, kind: "bogus" }));
    expect((await beyond(bogus, l))[0]).toEqual(["store/kind-mismatch", "/facts/5"]);
    const other = row(l, "runReport", (r) => ({ ...r, kind: "runStarted" }));
    expect(await beyond(other, l)).toContainEqual(["store/kind-mismatch", "/facts/5"]);
    // The location follows the kind the ref names: a head stored as a transcript is still at its fact.
    const head = row(l, "head", (r) => ({ ...r, kind: "transcript" }));
    expect(await beyond(head, l)).toContainEqual(["store/kind-mismatch", "/facts/4"]);
    const inherited = row(l, "runReport", (r) => ({ ...r, kind: "toString" }));
    expect((await beyond(inherited, l))[0]).toEqual(["store/kind-mismatch", "/facts/5"]);
  });

  it("a record of another loop, by its row or by its body: records/mismatch", async () => {
    const l = base();
    const byRow = row(l, "binding", (r) => ({ ...r, query: "query:other" }));
    expect(await beyond(byRow, l)).toEqual([["records/mismatch", "/facts/0"]]);
    const byBody = row(l, "binding", (r) => ({
      ...r,
      text: JSON.stringify({ ...body(r), "query/id": "query:other" }),
    }));
    expect(await beyond(byBody, l)).toEqual([["records/mismatch", "/facts/0"]]);
  });

  it("a record edited after it was made: store/record-mismatch, for a ref beside the body and a ref inside it", async () => {
    const l = base();
    const end = row(l, "passageEnd", (r) => ({
      ...r,
      text: JSON.stringify({ ...body(r), role: "reviewer" }),
    }));
    expect(await beyond(end, l)).toContainEqual(["store/record-mismatch", "/facts/1"]);
    const proposal = row(l, "proposal", (r) => ({
      ...r,
      text: JSON.stringify({ ...body(r), evidence: ["x"] }),
    }));
    expect(await beyond(proposal, l)).toEqual([["store/record-mismatch", "/facts/2"]]);
    // Stored under another ref of its kind than the one it names itself by.
    const alias = row(l, "review", (r) => ({ ...r, ref: `${r.ref.slice(0, -4)}AAAA` }));
    expect(await beyond(alias, l)).toContainEqual(["store/record-mismatch", "/facts/3"]);
    // A body that carries the field its outside ref is kept in: same ref, but not a sound body.
    const carried = row(l, "binding", (r) => ({
      ...r,
      text: JSON.stringify({ ...body(r), ref: r.ref }),
    }));
    expect(await beyond(carried, l)).toEqual([["store/record-mismatch", "/facts/0"]]);
  });

  it("a record that is sound passes every one of these rules", async () => {
    const l = base();
    const resaid = row(l, "binding", (r) => ({ ...r, text: JSON.stringify(body(r)) }));
    expect(await beyond(resaid, l)).toEqual([]);
  });
});

describe("where a record's problem is reported: the fact that names it or that it belongs to", () => {
  /** Each record's location, by kind (in row order), from records every rule refuses alone. */
  async function located(l: Loop): Promise<Record<string, string[]>> {
    const moved = records(l, (r) => ({ ...r, query: "query:other" }));
    const r = await audit(moved);
    expect(r.ok).toBe(false);
    if (r.ok) return {};
    const out: Record<string, string[]> = {};
    const mismatches = r.errors.filter(
      (e) => e.code === "records/mismatch" && e.message.endsWith("belongs to another loop"),
    );
    for (const row of l.rows.records) {
      const e = mismatches.find((x) => x.message === `record ${row.ref} belongs to another loop`);
      out[row.kind] = [...(out[row.kind] ?? []), e?.path ?? "none"];
    }
    return out;
  }

  it("each kind of record of the loop", async () => {
    expect(await located(loop("verified"))).toEqual({
      binding: ["/facts/0"],
      hostKey: ["/facts/0"],
      transcript: ["/facts/1"],
      passageEnd: ["/facts/1", "/facts/3"],
      proposal: ["/facts/2"],
      review: ["/facts/3"],
      runStarted: ["/facts/4"],
      actSignature: ["/facts/5"],
      head: ["/facts/4", "/facts/5", "/facts/5"],
      stepStarted: ["/facts/4"],
      runReport: ["/facts/5"],
      changeset: ["/facts/5"],
      execution: ["/facts/5"],
    });
  });

  it("a run's records before its conclusion: at its admission, else its cycle", async () => {
    const l = loop();
    const admitted = withFacts(l, l.rows.facts.slice(0, 5));
    const at = await located(admitted);
    expect([at.runReport, at.execution, at.stepStarted, at.runStarted]).toEqual([
      ["/facts/4"],
      ["/facts/4"],
      ["/facts/4"],
      ["/facts/4"],
    ]);
    const opened = withFacts(l, l.rows.facts.slice(0, 3));
    const o = await located(opened);
    expect([o.runReport, o.execution, o.stepStarted, o.review, o.passageEnd]).toEqual([
      ["/facts/2"],
      ["/facts/2"],
      [`/records/${indexOf(l, "stepStarted")}`],
      ["/facts/2"],
      ["/facts/1", `/records/${indexOf(l, "passageEnd", 1)}`],
    ]);
  });

  it("rotations and heads by the sequence they name, within the facts; memory writes by their passage; others at their row", async () => {
    const l = loop();
    const extra = await Promise.all([
      ...[3, 1, 99, 0, "3"].map((n) =>
        made("keyRotation", {
          "query/id": QUERY,
          "key/previous": "a",
          "key/next": "b",
          "at/sequence": n,
        }),
      ),
      ...[1, 99, 0, "3"].map((n) => made("head", { "query/id": QUERY, sequence: n, hash: "x" })),
      made("memoryWrite", { "query/id": QUERY, "passage/ref": "passage:r1" }),
      made("memoryWrite", { "query/id": QUERY, "passage/ref": "passage:p9" }),
      made("driveTrace", { "query/id": QUERY }),
      made("actSignature", { "query/id": QUERY, "act/ref": "warrant-operator-act:none" }),
      made("review", { "query/id": QUERY, "proposal/ref": cachedLoops().failed.proposal }),
    ]);
    const at = await located(records(l, (r) => r));
    expect(at.head).toEqual(["/facts/4", "/facts/5", "/facts/5"]);
    const n = l.rows.records.length;
    const all = await located({
      ...l,
      rows: { ...l.rows, records: [...l.rows.records, ...extra] },
    });
    expect(all.keyRotation).toEqual(["/facts/2", "/facts/0", "/facts/5", "/facts/0", "/facts/0"]);
    expect(all.head?.slice(3)).toEqual(["/facts/0", "/facts/5", "/facts/0", "/facts/0"]);
    expect(all.memoryWrite).toEqual(["/facts/3", `/records/${n + 10}`]);
    expect(all.driveTrace).toEqual([`/records/${n + 11}`]);
    expect(all.actSignature).toEqual(["/facts/5", `/records/${n + 12}`]);
    expect(all.review).toEqual(["/facts/3", "/facts/2"]);
  });

  it("an unreadable record: where a fact names it (a transcript by its passage's end), else at its row", async () => {
    const l = unpinned(loop());
    const t = row(l, "transcript", (r) => ({ ...r, text: "x" }));
    expect(await beyond(t, l)).toContainEqual(["store/row-invalid", "/facts/1"]);
    const e = row(l, "execution", (r) => ({ ...r, text: "x" }));
    expect(await beyond(e, l)).toContainEqual(["store/row-invalid", "/facts/5"]);
    const s = row(l, "stepStarted", (r) => ({ ...r, text: "x" }));
    expect(await beyond(s, l)).toContainEqual([
      "store/row-invalid",
      `/records/${indexOf(l, "stepStarted")}`,
    ]);
    // A transcript named by a review (not a passage end) is not placed by it.
    const notEnd = row(
      row(l, "transcript", (r) => ({ ...r, text: "x" })),
      "review",
      (r) => ({ ...r, kind: "passageEnd" }),
    );
    expect(await beyond(notEnd, l)).toContainEqual(["store/row-invalid", "/facts/1"]);
  });
});

describe("the keys: one pin signed by the key it pins, and the keys rotations signed by a key of the loop reach", () => {
  it("no pin: records/key-missing at the opening; two: records/key-conflict; an unsound pin is no pin", async () => {
    const l = loop();
    const none = await problems(unpinned(l));
    expect(none[0]).toEqual(["records/key-missing", "/facts/0"]);
    expect(none.filter(([c]) => c.startsWith("records/signature"))).toEqual([]);
    const second = await made(
      "hostKey",
      { ...body(rowOf(l, "hostKey")), "created-at": "x", signature: undefined },
      NEXT,
    );
    const two = await problems({ ...l, rows: { ...l.rows, records: [...l.rows.records, second] } });
    expect(two.filter(([c]) => c.startsWith("records/key"))).toEqual([
      ["records/key-conflict", "/facts/0"],
    ]);
    expect(two.filter(([c]) => c.startsWith("records/signature"))).toEqual([]);
    const unsound = row(l, "hostKey", (r) => ({ ...r, query: "query:other" }));
    expect((await problems(unsound)).filter(([c]) => c.startsWith("records/key"))).toEqual([
      ["records/key-missing", "/facts/0"],
    ]);
  });

  it("a pin not signed by the key it pins, or pinning no key: records/signature-invalid at the opening", async () => {
    const l = loop();
    const pin = body(rowOf(l, "hostKey"));
    const { signature: _s, ...plain } = pin;
    const cases = [
      await made("hostKey", plain, OTHER),
      await made("hostKey", { ...plain, "key/public": PUB.other }, KEY),
      await made("hostKey", { ...plain, "key/public": 5 }, KEY),
      // A pinned key that is not 32 bytes of base64url: refused though the signature names a key.
      await made("hostKey", { ...plain, "key/public": "short" }, KEY),
      await made("hostKey", plain),
    ];
    for (const forged of cases) {
      const p = await problems(row(l, "hostKey", () => forged));
      expect(
        p.filter(([c]) => c.startsWith("records/key") || c === "records/signature-invalid"),
        forged.text,
      ).toEqual([["records/signature-invalid", "/facts/0"]]);
    }
  });

  /** The loop with no signature but the pin's, and `extra` rows. */
  const bare = (extra: Row[]) => {
    const l = unsigned(loop());
    return { ...l, rows: { ...l.rows, records: [...l.rows.records, ...extra] } };
  };
  const rotation = (previous: string, next: string, signer: Uint8Array, more: Body = {}) =>
    made(
      "keyRotation",
      { "query/id": QUERY, "key/previous": previous, "key/next": next, "at/sequence": 3, ...more },
      signer,
    );
  const trusts = async (l: Loop, key: string) =>
    !(await problems(l, { expectedKey: key })).some(([c]) => c === "records/key-not-trusted");

  it("a rotation signed by the previous key reaches the next key; one signed by the next key does not", async () => {
    expect(await trusts(bare([await rotation(PUB.key, PUB.next, KEY)]), PUB.next)).toBe(true);
    expect(await trusts(bare([await rotation(PUB.key, PUB.next, NEXT)]), PUB.next)).toBe(false);
    expect(await trusts(bare([]), PUB.next)).toBe(false);
    expect(await trusts(bare([]), PUB.key)).toBe(true);
  });

  it("a rotation from a key the loop does not hold, to a key that is not 32 bytes, or not sound, reaches nothing", async () => {
    expect(await trusts(bare([await rotation(PUB.other, PUB.next, OTHER)]), PUB.next)).toBe(false);
    expect(await trusts(bare([await rotation(PUB.other, PUB.next, KEY)]), PUB.next)).toBe(false);
    for (const bad of [
      `${PUB.next}=`,
      PUB.next.slice(0, 42),
      `${PUB.next.slice(0, 42)}+`,
      `${PUB.next.slice(0, 42)}_`,
    ]) {
      expect(await trusts(bare([await rotation(PUB.key, bad, KEY)]), bad), bad).toBe(false);
    }
    const r = await rotation(PUB.key, PUB.next, KEY);
    expect(await trusts(bare([{ ...r, query: "query:other" }]), PUB.next)).toBe(false);
    expect(await trusts(bare([{ ...r, kind: "head" }]), PUB.next)).toBe(false);
    for (const [previous, next] of [
      [PUB.key, 7],
      [7, PUB.next],
      [undefined, PUB.next],
    ] as const) {
      const odd = await made(
        "keyRotation",
        { "query/id": QUERY, "key/previous": previous, "key/next": next },
        KEY,
      );
      expect(await trusts(bare([odd]), PUB.next)).toBe(false);
    }
  });

  it("rotations are followed in any order, and a rotation back to a key held already ends", async () => {
    const chain = [
      await rotation(PUB.next, PUB.other, NEXT),
      await rotation(PUB.key, PUB.next, KEY),
    ];
    expect(await trusts(bare(chain), PUB.other)).toBe(true);
    const back = [
      await rotation(PUB.key, PUB.key, KEY),
      await rotation(PUB.key, PUB.next, KEY),
      await rotation(PUB.next, PUB.key, NEXT),
    ];
    const r = await audit(bare(back), { expectedKey: PUB.next });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.code)).not.toContain("records/key-not-trusted");
  });

  it("the keys trusted: any one of them vouching suffices; none: records/key-not-trusted at the opening", async () => {
    const l = bare([]);
    const keys = async (trusted: AuditInput["trusted"]) =>
      (await problems(l, trusted === undefined ? {} : { trusted })).filter(([c]) =>
        c.startsWith("records/key"),
      );
    expect(await keys({ keys: [PUB.other, PUB.key], source: "file" })).toEqual([]);
    expect(await keys({ keys: [PUB.other, PUB.next], source: "file" })).toEqual([
      ["records/key-not-trusted", "/facts/0"],
    ]);
    expect(await keys({ keys: [], source: "file" })).toEqual([
      ["records/key-not-trusted", "/facts/0"],
    ]);
    expect(await keys(undefined)).toEqual([]);
    // A key named alone takes the place of any file.
    expect(
      (
        await problems(l, { expectedKey: PUB.other, trusted: { keys: [PUB.key], source: "file" } })
      ).filter(([c]) => c.startsWith("records/key")),
    ).toEqual([["records/key-not-trusted", "/facts/0"]]);
  });

  it("records/key-not-trusted names the one key trusted, or how many are", async () => {
    const l = bare([]);
    const message = async (keys: string[]) => {
      const r = await audit(l, { trusted: { keys, source: "file" } });
      const p = r.ok ? undefined : r.errors.find((e) => e.code === "records/key-not-trusted");
      return p?.message ?? "";
    };
    expect(await message([PUB.other])).toContain(`not to ${PUB.other} trusted by file`);
    expect(await message([PUB.other, PUB.next])).toContain("not to any of 2 keys trusted by file");
  });

  it("requirePinned: a loop no trusted key vouches for is refused (audit/key-not-pinned); one without keys is refused for that alone", async () => {
    const l = bare([]);
    const pinned = async (o: Partial<AuditInput>) =>
      (await problems(l, o)).filter(([c]) => c === "audit/key-not-pinned");
    expect(await pinned({ requirePinned: true })).toEqual([["audit/key-not-pinned", "/facts/0"]]);
    expect(await pinned({ requirePinned: false })).toEqual([]);
    expect(await pinned({})).toEqual([]);
    expect(await pinned({ requirePinned: true, expectedKey: PUB.key })).toEqual([]);
    expect(
      await pinned({ requirePinned: true, trusted: { keys: [PUB.key], source: "f" } }),
    ).toEqual([]);
    expect(
      await pinned({ requirePinned: true, trusted: { keys: [PUB.other], source: "f" } }),
    ).toEqual([["audit/key-not-pinned", "/facts/0"]]);
    const none = await problems(unpinned(loop()), { requirePinned: true });
    expect(none.filter(([c]) => c === "audit/key-not-pinned")).toEqual([]);
  });
});

describe("the signature pass: every record signed by a key of the loop, its signature verifying", () => {
  it("a record unsigned, signed by a key the loop never reached, or wrongly signed under a key of the loop", async () => {
    const l = unsigned(loop());
    const base = await problems(l, { expectedKey: PUB.key });
    // Every record but the pin is unsigned: each is reported where it belongs.
    const missing = base.filter(([c]) => c === "records/signature-missing").map(([, p]) => p);
    expect(missing).toEqual([
      "/facts/0",
      "/facts/1",
      "/facts/1",
      "/facts/2",
      "/facts/3",
      "/facts/3",
      "/facts/4",
      "/facts/4",
      "/facts/4",
      "/facts/5",
      "/facts/5",
      "/facts/5",
      "/facts/5",
      "/facts/5",
    ]);
    const sign = async (kind: string, f: (b: Body) => Promise<Body>) => {
      const text = JSON.stringify(await f(body(rowOf(l, kind))));
      return row(l, kind, (r) => ({ ...r, text }));
    };
    const byOther = await sign("binding", (b) => signRecord(b, OTHER));
    expect(await beyond(byOther, l, { expectedKey: PUB.key })).toEqual([
      ["records/signature-key", "/facts/0"],
    ]);
    const wrongly = await sign("binding", async (b) => {
      const s = await signRecord(b, OTHER);
      return { ...s, signature: { ...s.signature, "key/public": PUB.key } };
    });
    expect(await beyond(wrongly, l, { expectedKey: PUB.key })).toEqual([
      ["records/signature-invalid", "/facts/0"],
    ]);
    const genuine = await sign("binding", (b) => signRecord(b, KEY));
    const g = await problems(genuine, { expectedKey: PUB.key });
    expect(g.filter(([c]) => c === "records/signature-missing").length).toBe(missing.length - 1);
    expect(
      g.filter(([c]) => c.startsWith("records/signature") && c !== "records/signature-missing"),
    ).toEqual([]);
    for (const signature of ["x", null, { "key/public": 5 }, { alg: "ed25519" }]) {
      const odd = await sign("binding", async (b) => ({ ...b, signature }));
      expect(await beyond(odd, l, { expectedKey: PUB.key }), JSON.stringify(signature)).toEqual([
        ["records/signature-key", "/facts/0"],
      ]);
    }
  });

  it("a row whose kind column is not its ref's, or whose body does not parse, is not checked for a signature", async () => {
    const l = unsigned(loop());
    const wrongKind = row(l, "binding", (r) => ({ ...r, kind: "review" }));
    const p = await problems(wrongKind, { expectedKey: PUB.key });
    expect(p.filter(([, path]) => path === "/facts/0")).toEqual([
      ["store/kind-mismatch", "/facts/0"],
      ["records/missing", "/facts/0"],
    ]);
    const unreadable = row(l, "binding", (r) => ({ ...r, text: "x" }));
    const q = await problems(unreadable, { expectedKey: PUB.key });
    // No fact names a binding by its ref: the unreadable row is reported at its row.
    expect(q.filter(([, path]) => path === "/facts/0" || path === "/records/0")).toEqual([
      ["records/missing", "/facts/0"],
      ["store/row-invalid", "/records/0"],
    ]);
  });
});

describe("without a pinned key nothing is signed", () => {
  it("no head or act signature counts: the conclusion and the act are not covered", async () => {
    const p = await problems(unpinned(loop()));
    expect(p).toContainEqual(["audit/unsigned-tail", "/facts/5"]);
    expect(p).toContainEqual(["records/act-unsigned", "/facts/5"]);
  });
});

describe("the report of a loop that audits valid", () => {
  it("its state, keys, where the trusted key came from, records, what the heads cover, its last head", async () => {
    const l = loop();
    const r = await audit(l, { expectedKey: PUB.key });
    expect(r.ok, JSON.stringify(r.ok ? [] : r.errors)).toBe(true);
    if (!r.ok) return;
    // Of the two heads of the last fact, counting the same acts and signed at the same instant,
    // the first (the conclusion's).
    const lastHead = body(rowOf(l, "head", 1));
    expect(lastHead.reason).toBe("conclusion");
    expect(r.value).toEqual({
      state: expect.objectContaining({ lastSequence: 6 }),
      keys: [PUB.key],
      pinnedBy: "--key",
      records: l.rows.records.length,
      signedThrough: 6,
      actsCovered: 1,
      lastHead,
    });
    const plain = await audit(l);
    expect(plain.ok && Object.hasOwn(plain.value, "pinnedBy")).toBe(false);
    // Pinned by a file that trusts it among other keys.
    const filed = await audit(l, { trusted: { keys: [PUB.other, PUB.key], source: "keys.txt" } });
    expect(filed.ok && filed.value.pinnedBy).toBe("keys.txt");
    expect(plain.ok && plain.value.keys).toEqual([PUB.key]);
  });

  it("a loop in flight before any head: signed through 0, no last head", async () => {
    const l = loop();
    const early = records(withFacts(l, l.rows.facts.slice(0, 4)), (r) =>
      ["head", "actSignature", "runStarted", "stepStarted", "execution", "runReport"].includes(
        r.kind,
      )
        ? undefined
        : r,
    );
    const r = await audit({ ...early, acts: [] });
    expect(r.ok, JSON.stringify(r.ok ? [] : r.errors)).toBe(true);
    if (!r.ok) return;
    expect(r.value.signedThrough).toBe(0);
    expect(r.value.actsCovered).toBe(0);
    expect(r.value.records).toBe(early.rows.records.length);
    expect(Object.hasOwn(r.value, "lastHead")).toBe(false);
  });
});
