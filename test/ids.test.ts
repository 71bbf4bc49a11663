// Branded identifiers: each parser accepts exactly its contract spelling and refuses the rest with
// `id/invalid`; the compiler keeps one kind of id out of another's place.
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type PassageRef,
  parsePassageRef,
  parseQueryId,
  parseRecordRef,
  parseRunRef,
  type QueryId,
  type RecordRef,
  type RunRef,
  toQueryId,
  toRecordRef,
  toRunRef,
} from "../src/core/ids.js";

const DIGEST = "TtWteiqe_ts889wot_EvNtx6KrL9nC1mZ4EgtLubJRo";
const RUN = `corpus-experiment:sha256:${DIGEST}`;

describe("identifiers", () => {
  it("accept their spelling", () => {
    expect(parseQueryId("query:fix-failing-test-1")).toEqual({
      ok: true,
      value: "query:fix-failing-test-1",
    });
    expect(parseRunRef(RUN).ok).toBe(true);
    expect(parsePassageRef(`passage:sha256:${DIGEST}`).ok).toBe(true);
    expect(parseRecordRef(`warrant-loop-binding:sha256:${DIGEST}`).ok).toBe(true);
    expect(toQueryId("query:q")).toBe("query:q");
  });

  it.each([
    ["a query without its prefix", parseQueryId, "fix-failing-test-1"],
    ["a query with white space", parseQueryId, "query:a b"],
    ["a query past 512 characters", parseQueryId, `query:${"x".repeat(512)}`],
    ["a query that is not a string", parseQueryId, 42],
    [
      "a run that is another record's ref",
      parseRunRef,
      `corpus-task-pack-execution:sha256:${DIGEST}`,
    ],
    ["a run with a short digest", parseRunRef, "corpus-experiment:sha256:abc"],
    ["a passage ref without a prefix", parsePassageRef, ":x"],
    ["a record ref without a digest", parseRecordRef, "warrant-loop-binding:x"],
  ] as const)("refuse %s: id/invalid", (_what, parse, text) => {
    const r = parse(text as string);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]?.code).toBe("id/invalid");
  });

  it("throw a WarrantError id/invalid from text that is not one, naming the spelling", () => {
    expect(() => toQueryId("nope")).toThrow(expect.objectContaining({ code: "id/invalid" }));
    expect(() => toRunRef("query:q")).toThrow(/corpus-experiment:sha256:/);
    expect(() => toRecordRef(undefined)).toThrow(expect.objectContaining({ code: "id/invalid" }));
    // A hostile text is quoted short.
    const long = parseQueryId(`x${"y".repeat(10_000)}`);
    expect(long.ok).toBe(false);
    if (!long.ok) expect(long.errors[0]?.message.length).toBeLessThan(200);
  });

  it("are strings, but no string and no other id takes their place", () => {
    expectTypeOf<QueryId>().toExtend<string>();
    expectTypeOf<string>().not.toExtend<QueryId>();
    expectTypeOf<QueryId>().not.toExtend<RunRef>();
    expectTypeOf<RunRef>().not.toExtend<RecordRef>();
    expectTypeOf<PassageRef>().not.toExtend<QueryId>();
  });
});
