// The audit's key and signature checks, each decided alone: every input below is well formed,
// reproduces its content ref and passes every check before the one under test, so that check is
// the one that refuses (a forged rotation signed by the key it introduces, a signature that names
// a key of the loop but was made by another, a record signed by a key the loop never reached).
import { describe, expect, it } from "vitest";
import { auditLoop } from "../../src/core/loop/audit.js";
import type { RawLoop } from "../../src/core/ports/ledger-store.js";
import { base64url, contentRef } from "../../src/core/records/canonical.js";
import { hostKeyRecord, keyRotationRecord } from "../../src/core/records/host-records.js";
import { OUTSIDE_REF_FIELD, RECORD_KIND_TABLE } from "../../src/core/records/record-kinds.js";
import { publicKeyOf, signRecord } from "../../src/core/records/signature.js";
import {
  audit,
  type Built,
  body,
  built,
  firstError,
  KEY,
  NEXT,
  OTHER,
  pub,
  type Row,
  withRecords,
} from "./audited-loop.js";
import { at, QUERY } from "./gwt.js";

type Rows = RawLoop["records"];

/** The loop with every passage end re-signed by `signer`, and `extra` records added. */
async function reSigned(b: Built, signer: Uint8Array, extra: Rows = []): Promise<Built> {
  const records: Row[] = [];
  for (const r of b.rows.records) {
    if (r.kind !== "passageEnd") {
      records.push(r);
      continue;
    }
    const { signature: _s, ...rest } = body(r);
    records.push({ ...r, text: JSON.stringify(await signRecord(rest, signer)) });
  }
  return { ...b, rows: { ...b.rows, records: [...records, ...extra] } };
}

/** A key rotation from `previous` to `next`, its ref correct, signed by `signer`. */
async function rotation(previous: string, next: string, signer: Uint8Array): Promise<Row> {
  const b = {
    "query/id": QUERY,
    "key/previous": previous,
    "key/next": next,
    "at/sequence": 3,
    "rotated-at": at(9).toISOString(),
  };
  const ref = contentRef(RECORD_KIND_TABLE.keyRotation.prefix, b, OUTSIDE_REF_FIELD);
  return {
    ref,
    kind: "keyRotation",
    query: QUERY,
    text: JSON.stringify(await signRecord(b, signer)),
  };
}

describe("key rotations: only a rotation the previous key signed reaches the next key", () => {
  it("the genuine rotation (signed by the pinned key) admits records signed by the next key", async () => {
    const b = await built();
    const genuine = await rotation(await pub(KEY), await pub(NEXT), KEY);
    const r = await audit(await reSigned(b, NEXT, [genuine]), await pub(NEXT));
    expect(r.ok, JSON.stringify(r.ok ? [] : r.errors)).toBe(true);
    if (r.ok) expect(r.value.keys).toEqual([await pub(KEY), await pub(NEXT)]);
  });

  it("a well-formed rotation with a correct ref, naming the pinned key as previous but signed by the next key, admits nothing", async () => {
    const b = await built();
    const forged = await rotation(await pub(KEY), await pub(NEXT), NEXT);
    const r = await audit(await reSigned(b, NEXT, [forged]));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // Its ref reproduces (no store/record-mismatch): the signature rule alone refuses it.
    expect(r.errors.map((e) => e.code)).not.toContain("store/record-mismatch");
    expect(r.errors[0]).toMatchObject({ code: "records/signature-key", path: "/facts/1" });
    // Signed by a key the loop never reached, the rotation itself is refused where it is dated.
    expect(r.errors).toContainEqual(
      expect.objectContaining({ code: "records/signature-key", path: "/facts/2" }),
    );
  });

  it("a rotation signed by the pinned key but from a key the loop does not hold admits nothing", async () => {
    const b = await built();
    // Signed by KEY (a loop key, so its own signature verifies) but naming OTHER as the previous key.
    const stray = await rotation(await pub(OTHER), await pub(NEXT), KEY);
    expect(await firstError(await reSigned(b, NEXT, [stray]))).toMatchObject({
      code: "records/signature-key",
      path: "/facts/1",
    });
  });

  it("a rotation to a key that is not 32 bytes of base64url admits nothing", async () => {
    const b = await built();
    const nextKey = await pub(NEXT);
    for (const bad of [`${nextKey}=`, nextKey.slice(0, 42), `${nextKey.slice(0, 42)}+`]) {
      const r = await audit(await reSigned(b, NEXT, [await rotation(await pub(KEY), bad, KEY)]));
      expect(r.ok, bad).toBe(false);
    }
  });

  it("a rotation to a malformed key, signed by the pinned key, adds no key", async () => {
    const b = await built();
    const nextKey = await pub(NEXT);
    const r = await audit({
      ...b,
      rows: {
        ...b.rows,
        records: [
          ...b.rows.records,
          await rotation(await pub(KEY), `${nextKey.slice(0, 42)}+`, KEY),
        ],
      },
    });
    expect(r.ok && r.value.keys).toEqual([await pub(KEY)]);
  });

  it("a rotation signed by the pinned key but stored under another ref (not sound) admits nothing", async () => {
    const b = await built();
    const genuine = await rotation(await pub(KEY), await pub(NEXT), KEY);
    const moved = { ...genuine, ref: `${genuine.ref.slice(0, -4)}AAAA` };
    const r = await audit(await reSigned(b, NEXT, [moved]));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toContainEqual(
      expect.objectContaining({ code: "records/signature-key", path: "/facts/1" }),
    );
  });

  it("a record of another kind carrying rotation fields, signed by the pinned key, admits nothing", async () => {
    const b = await built();
    const fields = {
      "query/id": QUERY,
      "key/previous": await pub(KEY),
      "key/next": await pub(NEXT),
      "at/sequence": 3,
      "rotated-at": at(9).toISOString(),
    };
    const ref = contentRef(RECORD_KIND_TABLE.head.prefix, fields, OUTSIDE_REF_FIELD);
    const head = {
      ref,
      kind: "head",
      query: QUERY,
      text: JSON.stringify(await signRecord(fields, KEY)),
    };
    const r = await audit(await reSigned(b, NEXT, [head]));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toContainEqual(
      expect.objectContaining({ code: "records/signature-key", path: "/facts/1" }),
    );
  });

  it("a chain of rotations is followed whatever their order among the records", async () => {
    const b = await built();
    const third = new Uint8Array(32).fill(9);
    const second = await rotation(await pub(NEXT), base64url(await publicKeyOf(third)), NEXT);
    const first = await rotation(await pub(KEY), await pub(NEXT), KEY);
    // The later rotation comes first: it is reached only once the first one admitted NEXT.
    const r = await audit(await reSigned(b, third, [second, first]));
    expect(r.ok, JSON.stringify(r.ok ? [] : r.errors)).toBe(true);
    if (r.ok) expect(r.value.keys).toHaveLength(3);
  });
});

describe("trusted keys", () => {
  const trustedAudit = (b: Built, keys: string[]) =>
    auditLoop({
      query: QUERY,
      rows: b.rows,
      acts: b.acts,
      now: at(100),
      trusted: { keys, source: "/etc/warrant/keys.json" },
    });

  it("none of several trusted keys vouches for the loop: records/key-not-trusted naming how many and where from", async () => {
    const b = await built();
    const third = base64url(await publicKeyOf(new Uint8Array(32).fill(9)));
    const r = await trustedAudit(b, [await pub(OTHER), third]);
    expect(!r.ok && r.errors[0]).toMatchObject({
      code: "records/key-not-trusted",
      path: "/facts/0",
    });
    const message = r.ok ? "" : (r.errors[0]?.message ?? "");
    expect(message).toContain(await pub(KEY));
    expect(message).toContain("any of 2 keys trusted by /etc/warrant/keys.json");
    expect(message).not.toContain("rotated");
  });

  it("one trusted key that is not the loop's: the message names it", async () => {
    const b = await built();
    const r = await trustedAudit(b, [await pub(OTHER)]);
    expect(r.ok ? "" : r.errors[0]?.message).toContain(`not to ${await pub(OTHER)} trusted by`);
  });

  it("a loop rotated to another key, trusting neither: the message says keys were rotated to", async () => {
    const b = await built();
    const genuine = await rotation(await pub(KEY), await pub(NEXT), KEY);
    const r = await trustedAudit(await reSigned(b, NEXT, [genuine]), [await pub(OTHER)]);
    expect(r.ok ? "" : r.errors[0]?.message).toContain("(and keys rotated to from it)");
  });

  it("one of several trusted keys is a key the loop rotated to: vouched for, pinned by that source", async () => {
    const b = await built();
    const genuine = await rotation(await pub(KEY), await pub(NEXT), KEY);
    const r = await trustedAudit(await reSigned(b, NEXT, [genuine]), [
      await pub(OTHER),
      await pub(NEXT),
    ]);
    expect(r.ok && r.value.pinnedBy).toBe("/etc/warrant/keys.json");
  });
});

describe("the host key record", () => {
  it("a host key record with a correct ref, pinning KEY but signed by OTHER: records/signature-invalid", async () => {
    const b = await built();
    const genuine = b.rows.records.find((r) => r.kind === "hostKey") as Row;
    const { signature: _s, ...rest } = body(genuine);
    const signed = await signRecord(rest, OTHER);
    const forged = {
      ...genuine,
      text: JSON.stringify({
        ...signed,
        signature: { ...signed.signature, "key/public": await pub(KEY) },
      }),
    };
    const t = {
      ...b,
      rows: { ...b.rows, records: b.rows.records.map((r) => (r === genuine ? forged : r)) },
    };
    const r = await audit(t);
    // Refused at the pin: no key of the loop, so no record counts as signed (nor the heads, nor the act).
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["records/signature-invalid", "/facts/0"],
      ["audit/unsigned-tail", "/facts/5"],
      ["audit/unsigned-tail", "/facts/5"],
      ["records/act-unsigned", "/facts/5"],
    ]);
  });

  it("two host keys pinned, each well formed and self-signed: records/key-conflict", async () => {
    const b = await built();
    const second = await hostKeyRecord(QUERY, OTHER, at(0).toISOString());
    const t = {
      ...b,
      rows: {
        ...b.rows,
        records: [
          ...b.rows.records,
          { ref: second.ref, kind: "hostKey", query: QUERY, text: JSON.stringify(second.body) },
        ],
      },
    };
    expect(await firstError(t)).toMatchObject({ code: "records/key-conflict", path: "/facts/0" });
  });
});

describe("what is checked for a signature", () => {
  it("the report counts every record row", async () => {
    const b = await built();
    const r = await audit(b);
    expect(r.ok && r.value.records).toBe(b.rows.records.length);
  });

  it("no key pinned: no record is checked for a signature (only the missing key is reported)", async () => {
    const b = await built();
    const r = await audit(withRecords(b, (x) => (x.kind === "hostKey" ? undefined : x)));
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["records/key-missing", "/facts/0"],
      ["audit/unsigned-tail", "/facts/5"],
      ["audit/unsigned-tail", "/facts/5"],
      ["records/act-unsigned", "/facts/5"],
    ]);
  });

  it("a row that is not JSON, or whose kind column is not its ref's: reported once, not checked for a signature", async () => {
    const b = await built();
    const cases: [(r: Row) => Row, string][] = [
      [(r) => ({ ...r, text: "{" }), "store/row-invalid"],
      [(r) => ({ ...r, kind: "review" }), "store/kind-mismatch"],
    ];
    for (const [edit, code] of cases) {
      const r = await audit(withRecords(b, (x) => (x.kind === "transcript" ? edit(x) : x)));
      expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path]), code).toEqual([
        [code, "/facts/1"],
        ["records/missing", "/facts/1"],
      ]);
    }
  });
});

describe("record signatures", () => {
  it("a record signed in the name of the loop's key by another key: records/signature-invalid", async () => {
    const b = await built();
    const end = b.rows.records.find((r) => r.kind === "passageEnd") as Row;
    const { signature: _s, ...rest } = body(end);
    const signed = await signRecord(rest, OTHER);
    const forged = {
      ...end,
      text: JSON.stringify({
        ...signed,
        signature: { ...signed.signature, "key/public": await pub(KEY) },
      }),
    };
    const t = {
      ...b,
      rows: { ...b.rows, records: b.rows.records.map((r) => (r === end ? forged : r)) },
    };
    expect(await firstError(t, await pub(KEY))).toMatchObject({
      code: "records/signature-invalid",
      path: "/facts/1",
    });
  });

  it("a rotation is never needed for the pinned key: a loop signed by KEY audits with or without NEXT rotated to", async () => {
    const b = await built();
    const rotated = await keyRotationRecord(
      QUERY,
      KEY,
      await publicKeyOf(NEXT),
      3,
      at(9).toISOString(),
    );
    const row = {
      ref: rotated.ref,
      kind: rotated.kind,
      query: QUERY,
      text: JSON.stringify(rotated.body),
    };
    const r = await audit(
      { ...b, rows: { ...b.rows, records: [...b.rows.records, row] } },
      await pub(NEXT),
    );
    expect(r.ok, JSON.stringify(r.ok ? [] : r.errors)).toBe(true);
  });
});
