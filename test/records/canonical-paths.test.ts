// Which values the canonical writer writes itself and which it hands to the reference JCS
// implementation: the text is the same either way, but only the writer itself uses the texts
// already made for an object (`known`). A marker text for a shared part shows which one wrote a
// value: plain JSON data (strings that need escaping, numbers, booleans, null, arrays, plain and
// null-prototype objects) up to depth 256 is the writer's; a non-finite number, a bigint, a
// function, an object that is not plain or has toJSON, or a deeper value is the reference's.
import { describe, expect, it } from "vitest";
import { base64url, canonicalJson } from "../../src/core/records/canonical.js";

const shared = { b: 1, a: 2 };
const MARK = '"made before"';
const known = () => new WeakMap<object, string>([[shared, MARK]]);
/** The text of `{v, m: shared}` with the marker: shows whether the writer used it. */
const written = (v: unknown) => canonicalJson({ v, m: shared }, known());
const byWriter = (text: string) => `{"m":${MARK},"v":${text}}`;
const byReference = (text: string) => `{"m":{"a":2,"b":1},"v":${text}}`;

describe("plain JSON data is written by the writer itself (the texts already made are used)", () => {
  it("strings, plain or needing escapes (quote, backslash, control, astral), numbers, booleans, null", () => {
    const cases: [unknown, string][] = [
      ["plain", '"plain"'],
      ['a"b\\c\n', '"a\\"b\\\\c\\n"'],
      ["\u{1F600}", '"\u{1F600}"'],
      [0, "0"],
      [-1.5e-7, "-1.5e-7"],
      [true, "true"],
      [false, "false"],
      [null, "null"],
    ];
    for (const [v, text] of cases) expect(written(v), String(v)).toBe(byWriter(text));
  });

  it("arrays and objects, keys needing escapes, members JSON drops (undefined, symbol)", () => {
    expect(written([1, "x", [true]])).toBe(byWriter('[1,"x",[true]]'));
    expect(written([])).toBe(byWriter("[]"));
    expect(written({ 'k"\n': 1, u: undefined, s: Symbol("s") })).toBe(byWriter('{"k\\"\\n":1}'));
    expect(written([undefined, Symbol("s")])).toBe(byWriter("[null,null]"));
    const bare = Object.create(null) as Record<string, unknown>;
    bare.z = 1;
    bare.a = shared;
    expect(canonicalJson(bare, known())).toBe(`{"a":${MARK},"z":1}`);
  });

  it("values down to depth 256 are the writer's; below that, the reference's", () => {
    /** `shared` under `levels` objects: the outermost at depth 0. */
    const nested = (levels: number) => {
      let v: unknown = shared;
      for (let i = 0; i < levels; i++) v = { n: v };
      return v;
    };
    const text = (levels: number, inner: string) =>
      `${'{"n":'.repeat(levels)}${inner}${"}".repeat(levels)}`;
    // 257 objects above it: the deepest at depth 256, the shared part at 257.
    expect(canonicalJson(nested(257), known())).toBe(text(257, MARK));
    expect(canonicalJson(nested(258), known())).toBe(text(258, '{"a":2,"b":1}'));
    // The same for arrays.
    let a: unknown = shared;
    for (let i = 0; i < 257; i++) a = [a];
    expect(canonicalJson(a, known())).toBe(`${"[".repeat(257)}${MARK}${"]".repeat(257)}`);
    expect(canonicalJson([a], known())).toBe(`${"[".repeat(258)}{"a":2,"b":1}${"]".repeat(258)}`);
  });
});

describe("what the writer does not vouch for goes to the reference implementation", () => {
  it("an object that is not plain, or has toJSON; a function member", () => {
    class Thing {
      m = shared;
      x = 1;
    }
    expect(canonicalJson(new Thing(), known())).toBe('{"m":{"a":2,"b":1},"x":1}');
    expect(written({ toJSON: () => ({ z: 1 }) })).toBe(byReference('{"z":1}'));
    // (What the reference writes for a function member is its own affair: only who wrote the
    // shared part is asserted here.)
    expect(written({ f: () => 1, y: 2 })).toMatch(/^\{"m":\{"a":2,"b":1\},/);
    expect(written(() => 1)).toMatch(/^\{"m":\{"a":2,"b":1\}/);
  });

  it("a non-finite number or a bigint: the reference refuses them", () => {
    expect(() => written(Number.NaN)).toThrow();
    expect(() => written(Number.NEGATIVE_INFINITY)).toThrow();
    expect(() => written(1n)).toThrow();
  });

  it("an error raised while reading the value is the caller's, not retried by the reference", () => {
    let reads = 0;
    const flaky = {
      get a() {
        reads += 1;
        if (reads === 1) throw new RangeError("first read fails");
        return 1;
      },
    };
    expect(() => canonicalJson(flaky)).toThrow(RangeError);
    expect(reads).toBe(1);
  });
});

describe("base64url", () => {
  it("is unpadded, with - and _ for + and /", () => {
    expect(base64url(new Uint8Array([0xfb, 0xff]))).toBe("-_8");
    expect(base64url(new Uint8Array([0xfb]))).toBe("-w");
    expect(base64url(new Uint8Array([1, 2, 3]))).toBe("AQID");
    expect(base64url(new Uint8Array())).toBe("");
  });
});
