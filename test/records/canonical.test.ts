// The canonical JSON writer is byte-identical to the reference JCS implementation (`canonicalize`)
// on every JSON value, and refuses what JCS refuses.
import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalBytes,
  canonicalBytesInto,
  canonicalJson,
  digestOfBytes,
  hex,
} from "../../src/core/records/canonical.js";
import { trickyKey, wellFormed } from "../helpers/json-arbitraries.js";

const value = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.string({ unit: "grapheme" }),
    fc.string({ unit: "binary" }).filter(wellFormed),
    fc.array(tie("json"), { maxLength: 5 }),
    fc.dictionary(trickyKey, tie("json"), { maxKeys: 6 }),
  ),
})).json;

describe("canonicalJson", () => {
  it("equals canonicalize on random JSON values", () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(canonicalize(v));
      }),
      { numRuns: 3000 },
    );
  });

  it("equals canonicalize on values JSON.parse made (own __proto__ keys included)", () => {
    fc.assert(
      fc.property(value, (v) => {
        const parsed: unknown = JSON.parse(JSON.stringify(v));
        expect(canonicalJson(parsed)).toBe(canonicalize(parsed));
      }),
      { numRuns: 1000 },
    );
    const own = JSON.parse('{"b":1,"__proto__":{"x":2},"a":[{"10":0,"9":1}]}') as unknown;
    expect(canonicalJson(own)).toBe('{"__proto__":{"x":2},"a":[{"10":0,"9":1}],"b":1}');
  });

  it("sorts by UTF-16 code units, not by code points or integer order", () => {
    expect(canonicalJson({ "\u{1F600}": 1, "\uFB33": 2 })).toBe('{"😀":1,"דּ":2}');
    expect(canonicalJson({ 9: "a", 10: "b", a: 0 })).toBe('{"10":"b","9":"a","a":0}');
  });

  it("skips undefined members and writes undefined array items as null, as JSON does", () => {
    expect(canonicalJson({ b: undefined, a: [undefined, 1] })).toBe('{"a":[null,1]}');
  });

  it("uses a text already made for an object, by identity", () => {
    const raw = { b: 1, a: 2 };
    const known = new WeakMap<object, string>([[raw, canonicalJson(raw)]]);
    expect(canonicalJson({ z: raw, y: [raw] }, known)).toBe(
      '{"y":[{"a":2,"b":1}],"z":{"a":2,"b":1}}',
    );
  });

  it("hands toJSON, dates and class instances to the reference implementation", () => {
    const d = new Date(0);
    expect(canonicalJson({ d })).toBe(canonicalize({ d }));
    const withToJson = { toJSON: () => ({ b: 1, a: 2 }) };
    expect(canonicalJson([withToJson])).toBe('[{"a":2,"b":1}]');
  });

  it("refuses what JCS refuses: NaN, infinities, lone surrogates (values and keys), cycles, no value", () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow();
    expect(() => canonicalJson([Number.POSITIVE_INFINITY])).toThrow();
    expect(() => canonicalJson({ a: "x\uD800" })).toThrow();
    expect(() => canonicalJson({ "\uDC00": 1 })).toThrow();
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow();
    expect(() => canonicalJson(undefined)).toThrow(/no JSON form/);
    expect(() => canonicalJson(undefined)).toThrow(
      expect.objectContaining({ code: "records/not-json" }),
    );
    expect(() => canonicalJson(1n)).toThrow();
  });

  it("writes deep values the reference way", () => {
    let deep: unknown = { b: 1, a: 0 };
    for (let i = 0; i < 400; i++) deep = { z: deep, a: [i] };
    expect(canonicalJson(deep)).toBe(canonicalize(deep));
  });
});

/** A sink that keeps every chunk it is given, and the sinks made. */
function collecting(): {
  open: () => { chunks: Uint8Array[]; update(c: Uint8Array): void };
  made: number;
} {
  const state = {
    made: 0,
    open: () => {
      state.made++;
      const sink = {
        chunks: [] as Uint8Array[],
        update(c: Uint8Array) {
          sink.chunks.push(c.slice());
        },
      };
      return sink;
    },
  };
  return state;
}

function joined(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function streamed(v: unknown): {
  bytes: Uint8Array;
  chunks: number;
  largest: number;
  sinks: number;
} {
  const c = collecting();
  const sink = canonicalBytesInto(v, c.open);
  const largest = Math.max(0, ...sink.chunks.map((x) => x.length));
  return { bytes: joined(sink.chunks), chunks: sink.chunks.length, largest, sinks: c.made };
}

/** Byte-for-byte equality, cheaply (toEqual walks a large array element by element). */
function sameBytes(a: Uint8Array, b: Uint8Array): void {
  expect(a.length).toBe(b.length);
  expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
}

describe("canonicalBytesInto", () => {
  it("gives the bytes of canonicalBytes on random JSON values", () => {
    fc.assert(
      fc.property(value, (v) => {
        const s = streamed(v);
        sameBytes(s.bytes, canonicalBytes(v));
        expect(s.sinks).toBe(1);
      }),
      { numRuns: 2000 },
    );
  });

  it("gives a large value in chunks, none holding the whole text, multi-byte characters whole", () => {
    // Unicode of one to four UTF-8 bytes, escapes, nested arrays and numbers of every spelling,
    // repeated until the text spans many chunks, with chunk edges falling at every offset.
    const item = (i: number) => ({
      [`ключ${i}`]: [
        "\u{1F600}".repeat(i % 5),
        'é\u20ac"\\\n\u0001'.slice(0, i % 9),
        `x${"a".repeat(i % 7)}`,
      ],
      n: [i, -i / 7, 1e21 * i, 5e-324, -0, 0.1 + 0.2],
      deep: [[[[i]]], { "\u{10FFFF}": null, a: true }],
    });
    const v = { list: Array.from({ length: 6000 }, (_, i) => item(i)), z: "Z".repeat(70_000) };
    const s = streamed(v);
    const whole = canonicalBytes(v);
    sameBytes(s.bytes, whole);
    expect(s.chunks).toBeGreaterThan(10);
    expect(s.largest).toBeLessThan(whole.length / 4);
    expect(new TextDecoder("utf-8", { fatal: true }).decode(whole)).toBe(canonicalJson(v));
  });

  it("skips undefined members and writes undefined items as null", () => {
    const v = { b: undefined, a: [undefined, 1, Symbol("s")], c: Symbol("t") };
    expect(new TextDecoder().decode(streamed(v).bytes)).toBe(canonicalJson(v));
  });

  it("hands what the writer does not vouch for to the reference implementation, in a fresh sink", () => {
    let deep: unknown = { b: 1, a: 0 };
    for (let i = 0; i < 400; i++) deep = { z: deep, a: [i] };
    const big = Array.from({ length: 3_000 }, (_, i) => `item ${i} ${"é".repeat(i % 20)}`);
    for (const v of [
      { d: new Date(0), big },
      [big, { toJSON: () => ({ b: 1, a: 2 }) }],
      deep,
      [big, 1n].slice(0, 1),
    ]) {
      sameBytes(streamed(v).bytes, canonicalBytes(v));
    }
    // The date comes after the list: chunks were given to a first sink before it was met.
    const late = { big, d: new Date(0), z: { b: [1], a: "ü" } };
    const fallback = streamed(late);
    expect(fallback.sinks).toBe(2);
    sameBytes(fallback.bytes, canonicalBytes(late));
  });

  it("leaves to the reference what the writer does not vouch for: past its depth, a class, a hidden toJSON", () => {
    const nested = (levels: number) => {
      let v: unknown = 1;
      for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { a: v };
      return v;
    };
    // The writer goes 256 levels deep; the 257th is the reference's, in a fresh sink.
    expect(streamed(nested(257)).sinks).toBe(1);
    expect(streamed(nested(258)).sinks).toBe(2);
    sameBytes(streamed(nested(258)).bytes, canonicalBytes(nested(258)));
    class Point {
      x = 1;
    }
    const instance = streamed({ p: new Point() });
    expect(instance.sinks).toBe(2);
    expect(new TextDecoder().decode(instance.bytes)).toBe('{"p":{"x":1}}');
    // A toJSON that Object.keys does not list is still what JSON calls.
    const hidden = { a: 1 };
    Object.defineProperty(hidden, "toJSON", { value: () => "as JSON", enumerable: false });
    const viaToJson = streamed([hidden]);
    expect(new TextDecoder().decode(viaToJson.bytes)).toBe('["as JSON"]');
    expect(canonicalJson([hidden])).toBe('["as JSON"]');
    // A value the reference finds no JSON form for is refused there too.
    expect(() => canonicalBytesInto({ toJSON: () => undefined }, collecting().open)).toThrow(
      expect.objectContaining({ code: "records/not-json" }),
    );
  });

  it("gives chunks of about 32 K code units, cut only where one reaches that size, never empty", () => {
    const UNITS = 1 << 15;
    const sizes = (v: unknown) => {
      const c = collecting();
      return canonicalBytesInto(v, c.open).chunks.map((x) => x.length);
    };
    // "[" and the quoted string fill the first chunk exactly: it is cut there, "1]" follows.
    expect(sizes(["a".repeat(UNITS - 3), 1])).toEqual([UNITS, 3]);
    // The closing bracket completes it: one chunk, and no empty one after it.
    expect(sizes(["a".repeat(UNITS - 4)])).toEqual([UNITS]);
    expect(sizes(["a".repeat(100)])).toEqual([104]);
    const large = sizes(Array.from({ length: 20_000 }, (_, i) => `v${i}`));
    expect(large.length).toBeLessThanOrEqual(8);
    expect(large.every((n) => n > 0 && n < UNITS + 16)).toBe(true);
  });

  it("throws what the writer meets rather than asking the reference again", () => {
    let reads = 0;
    const v = {
      get a() {
        reads++;
        if (reads === 1) throw new Error("read once");
        return 1;
      },
    };
    expect(() => canonicalBytesInto(v, collecting().open)).toThrow("read once");
  });

  it("refuses what canonicalJson refuses", () => {
    const c = collecting();
    expect(() => canonicalBytesInto({ a: "x\uD800" }, c.open)).toThrow();
    expect(() => canonicalBytesInto({ "\uDC00": 1 }, c.open)).toThrow();
    expect(() => canonicalBytesInto([Number.NaN], c.open)).toThrow();
    expect(() => canonicalBytesInto({ a: 1n }, c.open)).toThrow();
    expect(() => canonicalBytesInto(undefined, c.open)).toThrow(
      expect.objectContaining({ code: "records/not-json" }),
    );
  });
});

describe("digests and hex", () => {
  it("digestOfBytes is sha256: and the unpadded base64url of SHA-256 over the bytes", () => {
    expect(digestOfBytes(new Uint8Array())).toBe(
      "sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
    );
  });

  it("hex is lower case, two digits a byte", () => {
    expect(hex(new Uint8Array([0, 15, 16, 255]))).toBe("000f10ff");
    expect(hex(new Uint8Array())).toBe("");
  });

  it("a bigint anywhere in the value is refused, as JSON refuses it", () => {
    expect(() => canonicalJson({ a: 1n })).toThrow();
    expect(() => canonicalJson([1n])).toThrow();
  });
});
