// RFC 3339 instants as the loop reads and stores them (src/core/loop/time.ts): every field at its
// bounds, the spellings RFC 3339 allows, and days the month does not have.
import { describe, expect, it } from "vitest";
import { decide } from "../../src/core/loop/decide.js";
import { initialState } from "../../src/core/loop/state.js";
import { formatInstant, parseInstant } from "../../src/core/loop/time.js";

const ms = (iso: string) => new Date(iso).getTime();

describe("parseInstant", () => {
  it("reads a UTC instant, with or without a fraction", () => {
    expect(parseInstant("2026-12-01T10:00:00Z")).toBe(ms("2026-12-01T10:00:00.000Z"));
    expect(parseInstant("2026-12-01T10:00:00.250Z")).toBe(ms("2026-12-01T10:00:00.250Z"));
    expect(parseInstant("2026-12-01T10:00:00.5Z")).toBe(ms("2026-12-01T10:00:00.500Z"));
  });
  it("reads lower-case t and z, and numeric offsets either way", () => {
    expect(parseInstant("2026-12-01t10:00:00z")).toBe(ms("2026-12-01T10:00:00Z"));
    expect(parseInstant("2026-12-01T10:00:00+01:30")).toBe(ms("2026-12-01T08:30:00Z"));
    expect(parseInstant("2026-12-01T10:00:00-02:00")).toBe(ms("2026-12-01T12:00:00Z"));
  });
  it("accepts every field at its upper and lower bound", () => {
    expect(parseInstant("2026-01-01T00:00:00Z")).toBe(ms("2026-01-01T00:00:00Z"));
    expect(parseInstant("2026-12-31T23:59:59Z")).toBe(ms("2026-12-31T23:59:59Z"));
    expect(parseInstant("2026-01-31T23:00:00Z")).toBe(ms("2026-01-31T23:00:00Z"));
    expect(parseInstant("2026-11-30T00:59:00Z")).toBe(ms("2026-11-30T00:59:00Z"));
  });
  it("refuses a field just past its bound", () => {
    for (const bad of [
      "2026-00-01T10:00:00Z",
      "2026-13-01T10:00:00Z",
      "2026-12-00T10:00:00Z",
      "2026-12-32T10:00:00Z",
      // Date.parse would read 24:00 as the next day's midnight.
      "2026-12-01T24:00:00Z",
      "2026-12-01T23:60:00Z",
      // A leap second is no stored instant.
      "2026-12-01T23:59:60Z",
      "2026-12-01T23:59:61Z",
      "2026-12-01T25:00:00Z",
      "2026-12-01T99:00:00Z",
    ]) {
      expect(parseInstant(bad), bad).toBeUndefined();
    }
  });
  it("refuses an offset past 23:59, whose every field is in range", () => {
    expect(parseInstant("2026-12-01T10:00:00+24:00")).toBeUndefined();
    expect(parseInstant("2026-12-01T10:00:00-25:00")).toBeUndefined();
    expect(parseInstant("2026-12-01T10:00:00+23:59")).toBe(ms("2026-11-30T10:01:00Z"));
  });
  it("refuses a day the month does not have (which Date.parse rolls over)", () => {
    expect(parseInstant("2026-02-29T10:00:00Z")).toBeUndefined();
    expect(parseInstant("2026-02-31T10:00:00Z")).toBeUndefined();
    expect(parseInstant("2026-04-31T10:00:00Z")).toBeUndefined();
    expect(parseInstant("2028-02-29T10:00:00Z")).toBe(ms("2028-02-29T10:00:00Z"));
    expect(parseInstant("2026-04-30T10:00:00Z")).toBe(ms("2026-04-30T10:00:00Z"));
  });
  it("refuses what is not an RFC 3339 date-time, even when Date.parse reads it", () => {
    for (const bad of [
      "2026-12-01 10:00:00Z",
      "2026-12-01T10:00:00",
      "2026-12-01",
      "2026-12-01T10:00Z",
      "2026-12-01T10:00:00.Z",
      "2026-12-01T10:00:00+0100",
      "+002026-12-01T10:00:00Z",
      " 2026-12-01T10:00:00Z",
      "2026-12-01T10:00:00Z ",
      "x2026-12-01T10:00:00Z",
      "2026-12-01T10:00:00Zx",
      "26-12-01T10:00:00Z",
      "2026-1-01T10:00:00Z",
      "2026-12-1T10:00:00Z",
      "2026-12-01T1:00:00Z",
      "2026-12-01T10:0:00Z",
      "2026-12-01T10:00:0Z",
      "2026-12-01T10:00:00+1:00",
      "2026-12-01T10:00:00+01:0",
      "2026-12-01X10:00:00Z",
      "2026-12-01T10:00:00A",
      "tomorrow",
      "",
    ]) {
      expect(parseInstant(bad), bad).toBeUndefined();
    }
  });
});

describe("formatInstant", () => {
  it("drops a zero millisecond part and keeps any other", () => {
    expect(formatInstant(ms("2026-12-01T10:00:00Z"))).toBe("2026-12-01T10:00:00Z");
    expect(formatInstant(ms("2026-12-01T10:00:00.001Z"))).toBe("2026-12-01T10:00:00.001Z");
    expect(formatInstant(ms("2026-12-01T10:00:00.100Z"))).toBe("2026-12-01T10:00:00.100Z");
  });
  it("reads back what it writes", () => {
    for (const t of ["2026-12-01T10:00:00Z", "2026-12-01T10:00:00.010Z"]) {
      expect(formatInstant(parseInstant(t) ?? Number.NaN)).toBe(t);
    }
  });
});

describe("the decider's clock", () => {
  it("a time that is not one is refused as an invalid command, before the command is read", () => {
    const d = decide(initialState(), { op: "cancel" }, new Date(Number.NaN));
    expect(d).toMatchObject({ result: "refused", refusal: { code: "loop/command-invalid" } });
  });
});
