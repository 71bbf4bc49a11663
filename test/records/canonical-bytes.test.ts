// The canonical writer's bytes are exactly the UTF-8 of canonicalJson on every value, whatever the
// buffer it writes into must become, and a write that fails leaves nothing behind.
import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/records/canonical.js";
import {
  CanonicalWriter,
  type KnownBytes,
  NeedsReference,
} from "../../src/core/records/canonical-bytes.js";
import { trickyKey, wellFormed } from "../helpers/json-arbitraries.js";

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Strings that hit every branch: escapes, 1–4 byte UTF-8, long strings (natively encoded). */
const tricky = fc.oneof(
  fc.string({ unit: "grapheme" }),
  fc.string({ unit: "binary" }).filter(wellFormed),
  fc.string({ unit: "binary", minLength: 60, maxLength: 200 }).filter(wellFormed),
  fc.constantFrom('"', "\\", "\b\f\n\r\t\u0000\u001f\u007f", "\u2028\u2029", "x".repeat(65)),
);

const value = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.constantFrom(-0, 0.1, 1e21, 5e-324, Number.MAX_SAFE_INTEGER, -1),
    tricky,
    fc.array(tie("json"), { maxLength: 5 }),
    fc.dictionary(trickyKey, tie("json"), { maxKeys: 6 }),
  ),
})).json;

function bytesOf(v: unknown, known?: KnownBytes, size = 1024): string {
  const w = new CanonicalWriter(new Uint8Array(size));
  w.canonical(v, known);
  return decoder.decode(w.buf.subarray(0, w.pos));
}

describe("CanonicalWriter", () => {
  it("writes the UTF-8 of canonicalJson on random JSON values", () => {
    fc.assert(
      fc.property(value, (v) => {
        const w = new CanonicalWriter(new Uint8Array(1));
        w.canonical(v);
        const written = w.buf.subarray(0, w.pos);
        expect(Buffer.from(written).equals(Buffer.from(encoder.encode(canonicalJson(v))))).toBe(
          true,
        );
        expect(decoder.decode(written)).toBe(canonicalize(v));
      }),
      { numRuns: 3000 },
    );
  });

  it("writes after what is already in the buffer, growing it as needed", () => {
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 6 }),
        fc.integer({ min: 1, max: 64 }),
        (vs, size) => {
          const w = new CanonicalWriter(new Uint8Array(size));
          for (const [i, v] of vs.entries()) {
            if (i > 0) w.byte(0x2c);
            w.canonical(v);
          }
          expect(decoder.decode(w.buf.subarray(0, w.pos))).toBe(
            vs.map((v) => canonicalJson(v)).join(","),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("writes objects listing the same keys alike, and others by their own keys, however many", () => {
    // Same first key, other keys, other orders; then enough new listings to fill what is kept.
    const alike = [
      { kind: "a", z: 1, b: 2 },
      { kind: "a", b: 2, z: 1 },
      { kind: "a", z: 1 },
      { kind: "a", z: 1, b: 2, a: 0 },
      { kind: "a", z: 1, b: undefined },
      { kind: "a", z: 1, b: 2 },
    ];
    for (const v of alike) expect(bytesOf(v)).toBe(canonicalJson(v));
    for (let i = 0; i < 1500; i++) {
      const v = { [`k${i}`]: i, [`j${i % 7}`]: [i], a: { [`k${i}`]: 1, b: 0 } };
      expect(bytesOf(v)).toBe(canonicalize(v));
    }
    for (const v of alike) expect(bytesOf(v)).toBe(canonicalJson(v));
    expect(bytesOf({ q: 1, p: 2, o: 3 })).toBe('{"o":3,"p":2,"q":1}');
  });

  it("uses bytes already made for an object, by identity", () => {
    const raw = { b: 1, a: 2 };
    const made = new CanonicalWriter();
    made.canonical(raw);
    const known: KnownBytes = { get: (o) => (o === raw ? made : undefined) };
    expect(bytesOf({ z: raw, y: [raw] }, known)).toBe('{"y":[{"a":2,"b":1}],"z":{"a":2,"b":1}}');
    // What is known is what is written: the object itself is not read again.
    raw.a = 3;
    expect(bytesOf({ z: raw }, known)).toBe('{"z":{"a":2,"b":1}}');
  });

  it("lists an object's own keys only, even when Object.prototype was given an enumerable one", () => {
    const v = { b: [{ d: 1, c: 2 }], a: "x" };
    Object.defineProperty(Object.prototype, "polluted", {
      value: 1,
      enumerable: true,
      configurable: true,
      writable: true,
    });
    try {
      expect(bytesOf(v)).toBe(canonicalJson(v));
      expect(bytesOf(v)).toBe('{"a":"x","b":[{"c":2,"d":1}]}');
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
    expect(bytesOf(v)).toBe('{"a":"x","b":[{"c":2,"d":1}]}');
  });

  it("hands toJSON, dates, class instances and deep values to the reference implementation", () => {
    const d = new Date(0);
    expect(bytesOf({ d })).toBe(canonicalize({ d }));
    expect(bytesOf([{ toJSON: () => ({ b: 1, a: 2 }) }])).toBe('[{"a":2,"b":1}]');
    let deep: unknown = { b: 1, a: 0 };
    for (let i = 0; i < 400; i++) deep = { z: deep, a: [i] };
    expect(bytesOf(deep)).toBe(canonicalize(deep));
  });

  it("value() throws NeedsReference where canonical() would ask the reference implementation", () => {
    const w = new CanonicalWriter();
    expect(() => w.value({ d: new Date(0) })).toThrow(NeedsReference);
    expect(() => w.value(["x\uD800"])).toThrow(NeedsReference);
    expect(() => w.value({ "\uDC00": 1 })).toThrow(NeedsReference);
    expect(() => w.value(Number.NaN)).toThrow(NeedsReference);
    expect(w.value(undefined)).toBe(false);
  });

  it("refuses what canonicalJson refuses and leaves nothing of the refused value", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    for (const bad of [
      { a: Number.NaN },
      [Number.POSITIVE_INFINITY],
      { a: "x\uD800" },
      { a: `${"y".repeat(100)}\uD800` },
      { "\uDC00": 1 },
      cyclic,
      { a: 1n },
    ]) {
      expect(() => canonicalJson(bad)).toThrow();
      const w = new CanonicalWriter(new Uint8Array(4));
      w.ascii("[1,");
      expect(() => w.canonical(bad)).toThrow();
      expect(decoder.decode(w.buf.subarray(0, w.pos))).toBe("[1,");
    }
    const w = new CanonicalWriter();
    expect(() => w.canonical(undefined)).toThrow(
      expect.objectContaining({ code: "records/not-json" }),
    );
    expect(w.pos).toBe(0);
  });
});
