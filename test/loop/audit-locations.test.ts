// Where the audit places a record's problem: at the fact the record belongs to (the one that made
// it, or that it speaks of), so an operator reading the audit finds the step, and at the record's
// own row only when no fact names it. Each record of a cached verified loop (audited-rows.json) is
// given a kind column its ref does not name (store/kind-mismatch, located by the kind its ref
// names), or a body that is not a JSON object (store/row-invalid, located only by the facts that
// name its ref), and the problem's path is compared with the fact each kind belongs to.
import { describe, expect, it } from "vitest";
import { auditLoop } from "../../src/core/loop/audit.js";
import type { RawLoop } from "../../src/core/ports/ledger-store.js";
import { cachedLoops } from "./audited-rows.js";

const QUERY = "query:demo-1";
const NOW = new Date(Date.parse("2026-12-01T10:00:00Z") + 100_000);

/** The paths of the problems with `code` in the audit of `rows`. */
async function pathsOf(rows: RawLoop, code: string): Promise<string[]> {
  const c = cachedLoops().verified;
  const r = await auditLoop({ query: QUERY, rows, acts: c.acts, now: NOW });
  return r.ok ? [] : r.errors.filter((p) => p.code === code).map((p) => p.path);
}

// The verified loop's facts: 0 opened, 1 implementer passage p1 charged, 2 cycle opened,
// 3 reviewer passage r1 charged, 4 run admitted, 5 concluded (verified).
const rows = () => cachedLoops().verified.rows;

/** Each record of the verified loop, by its index: the fact its kind belongs to. */
const BELONGS: readonly [number, string, string][] = [
  [0, "binding", "/facts/0"],
  [1, "hostKey", "/facts/0"],
  [2, "transcript", "/facts/1"],
  [3, "passageEnd", "/facts/1"],
  [4, "proposal", "/facts/2"],
  [5, "passageEnd", "/facts/3"],
  [6, "review", "/facts/3"],
  [7, "runStarted", "/facts/4"],
  [8, "actSignature", "/facts/5"],
  [9, "head", "/facts/4"],
  [10, "stepStarted", "/facts/4"],
  [11, "runReport", "/facts/5"],
  [12, "changeset", "/facts/5"],
  [13, "execution", "/facts/5"],
  [14, "head", "/facts/5"],
  [15, "head", "/facts/5"],
];

describe("the audit places a record's problem at the fact the record belongs to", () => {
  it("the cached loop holds the records the table names, in that order", () => {
    expect(rows().records.map((r) => r.kind)).toEqual(BELONGS.map(([, kind]) => kind));
  });

  for (const [index, kind, path] of BELONGS) {
    it(`${kind} (record ${index}) with a kind column its ref does not name: ${path}`, async () => {
      const r = rows();
      const records = r.records.map((row, i) =>
        i === index ? { ...row, kind: kind === "review" ? "proposal" : "review" } : row,
      );
      expect(await pathsOf({ ...r, records }, "store/kind-mismatch")).toEqual([path]);
    });
  }
});

describe("a record whose body is not a JSON object: at the fact that names its ref, else its row", () => {
  for (const [index, kind, path] of [
    [4, "proposal", "/facts/2"],
    [13, "execution", "/facts/5"],
    // A transcript is named by its passage's end, which the passage's charge placed.
    [2, "transcript", "/facts/1"],
    [0, "binding", "/records/0"],
    [3, "passageEnd", "/records/3"],
    [7, "runStarted", "/records/7"],
  ] as const) {
    it(`${kind} (record ${index}): ${path}`, async () => {
      const r = rows();
      const records = r.records.map((row, i) => (i === index ? { ...row, text: "[]" } : row));
      expect(await pathsOf({ ...r, records }, "store/row-invalid")).toEqual([path]);
    });
  }
});

describe("a run's record naming a proposal no fact names", () => {
  it("is placed at its own row (a run report, a changeset)", async () => {
    for (const [index, kind] of [
      [11, "runReport"],
      [12, "changeset"],
    ] as const) {
      const r = rows();
      const records = r.records.map((row, i) => {
        if (i !== index) return row;
        const body = { ...JSON.parse(row.text), "proposal/ref": "corpus-experiment:sha256:none" };
        return { ...row, text: JSON.stringify(body) };
      });
      expect(r.records[index]?.kind).toBe(kind);
      expect(await pathsOf({ ...r, records }, "store/record-mismatch"), kind).toEqual([
        `/records/${index}`,
      ]);
    }
  });
});
