// Canonical JSON (JCS) written as UTF-8 straight into a byte buffer: the same bytes as
// `canonicalJson` (canonical.ts) encoded, without building the text as a string first. What is
// hashed or kept as bytes (request digests, a passage transcript's entries) is so written once,
// with no string pieces for the garbage collector and no second pass to encode them.
//
// The writer vouches for the same plain JSON data as `canonicalJson`'s: anything else (non-finite
// numbers, lone surrogates, toJSON, objects that are not plain, functions, bigints, very deep or
// cyclic values) needs the reference implementation. `value` then throws `NeedsReference`, for a
// caller that writes a larger document by pieces; `canonical` writes the reference's text instead.
import canonicalizeImpl from "canonicalize";
import { WarrantError } from "../result.js";

/** Bytes already written somewhere: `buf[0, pos)`. */
export interface WrittenBytes {
  readonly buf: Uint8Array;
  readonly pos: number;
}

/** Canonical bytes already made for some objects, by identity (each must be the object's JCS). */
export type KnownBytes = { get(o: object): WrittenBytes | undefined };

/** Thrown by `CanonicalWriter.value` when the value needs the reference implementation. */
export class NeedsReference extends Error {
  constructor() {
    super("the value needs the reference JCS implementation");
  }
}

const NEEDS_REFERENCE = new NeedsReference();

const MAX_FAST_DEPTH = 256;
/** Longer strings are checked with one regular expression and encoded natively. */
const LONG_STRING = 64;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;

const encoder = new TextEncoder();
const TRUE = encoder.encode("true");
const FALSE = encoder.encode("false");
const NULL = encoder.encode("null");

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const MAY_NEED_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

type WellFormed = { isWellFormed(): boolean };

/** `,"key":` as UTF-8 (the first key of an object goes without its comma), by key, bounded. */
const KEY_LIMIT = 4096;
const keyBytes = new Map<string, Uint8Array>();

function keyOf(k: string): Uint8Array {
  let b = keyBytes.get(k);
  if (b === undefined) {
    if (!(k as string & WellFormed).isWellFormed()) throw NEEDS_REFERENCE;
    b = encoder.encode(`,${JSON.stringify(k)}:`);
    if (keyBytes.size < KEY_LIMIT) keyBytes.set(k, b);
  }
  return b;
}

/**
 * `,"k":` as UTF-8: a member's key as `CanonicalWriter.member` takes it, made once by a writer of
 * a fixed shape. Throws NeedsReference for a key that is not well-formed UTF-16.
 */
export function memberKey(k: string): Uint8Array {
  return keyOf(k);
}

/** Whether plain objects list only their own keys (see `prototypeEnumerates`). */
export function plainPrototypes(): boolean {
  return !prototypeEnumerates();
}

const HEX = "0123456789abcdef";

/** The short escapes JSON.stringify writes; the other control characters are `\u00xx`. */
const SHORT_ESCAPES: Readonly<Record<number, number>> = {
  8: 0x62,
  9: 0x74,
  10: 0x6e,
  12: 0x66,
  13: 0x72,
  [QUOTE]: QUOTE,
  [BACKSLASH]: BACKSLASH,
};

/** Writes the escape of ASCII `c` (a control character, `"` or `\`) at `p`; the new position. */
function escapeAt(buf: Uint8Array, p: number, c: number): number {
  buf[p++] = BACKSLASH;
  const short = SHORT_ESCAPES[c];
  if (short !== undefined) {
    buf[p++] = short;
    return p;
  }
  buf[p++] = 0x75; // u
  buf[p++] = 0x30;
  buf[p++] = 0x30;
  buf[p++] = HEX.charCodeAt(c >> 4);
  buf[p++] = HEX.charCodeAt(c & 15);
  return p;
}

/** Writes the UTF-8 of `s` at `p` (room made), JSON escapes included; the new position. */
function stringAt(buf: Uint8Array, p: number, s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c >= 0x20 && c !== QUOTE && c !== BACKSLASH) buf[p++] = c;
      else p = escapeAt(buf, p, c);
    } else if (c < 0x800) {
      buf[p++] = 0xc0 | (c >> 6);
      buf[p++] = 0x80 | (c & 63);
    } else if (c < 0xd800 || c > 0xdfff) {
      buf[p++] = 0xe0 | (c >> 12);
      buf[p++] = 0x80 | ((c >> 6) & 63);
      buf[p++] = 0x80 | (c & 63);
    } else {
      const d = c <= 0xdbff && i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (d < 0xdc00 || d > 0xdfff) throw NEEDS_REFERENCE; // a lone surrogate
      const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
      buf[p++] = 0xf0 | (cp >> 18);
      buf[p++] = 0x80 | ((cp >> 12) & 63);
      buf[p++] = 0x80 | ((cp >> 6) & 63);
      buf[p++] = 0x80 | (cp & 63);
      i++;
    }
  }
  return p;
}

/**
 * How to write objects whose keys are listed in `listed`'s order: the key at sorted place `i` is
 * the one listed at `from[i]`, and `bytes[i]` its bytes.
 */
interface KeyOrder {
  readonly listed: readonly string[];
  readonly from: readonly number[];
  readonly bytes: readonly Uint8Array[];
}

/** Orders by first key listed; bounded, and a few per first key (`kind` starts many shapes). */
const ORDER_LIMIT = 1024;
const ORDERS_PER_FIRST_KEY = 8;
const orders = new Map<string, KeyOrder[]>();
let ordersKept = 0;

/**
 * The order of the first `n` keys (as an object lists them): the one kept for that listing, or a
 * new one kept while there is room; undefined when there is none (the caller sorts them itself).
 */
function orderOf(keys: readonly string[], n: number): KeyOrder | undefined {
  if (n < 2) return undefined;
  const first = keys[0] as string;
  let kept = orders.get(first);
  if (kept !== undefined) {
    for (const order of kept) {
      const { listed } = order;
      if (listed.length !== n) continue;
      let i = 1;
      while (i < n && listed[i] === keys[i]) i++;
      if (i === n) return order;
    }
  }
  if (ordersKept >= ORDER_LIMIT || (kept !== undefined && kept.length >= ORDERS_PER_FIRST_KEY)) {
    return undefined;
  }
  const listed = keys.slice(0, n);
  const sorted = [...listed];
  const from = listed.map((_, i) => i);
  sortEntries(sorted, from, n);
  const order = { listed, from, bytes: sorted.map(keyOf) };
  if (kept === undefined) {
    kept = [];
    orders.set(first, kept);
  }
  kept.push(order);
  ordersKept++;
  return order;
}

/**
 * Whether Object.prototype has an enumerable property (someone added one): a `for…in` over a plain
 * object would list it, Object.keys would not, so the writer hands every value to the reference.
 */
function prototypeEnumerates(): boolean {
  for (const _ in Object.prototype) return true;
  return false;
}

/**
 * Sorts the first `n` keys by UTF-16 code units, in place, and their companions with them:
 * objects have few keys, most nearly sorted.
 */
function sortEntries<T>(keys: string[], companions: T[], n: number): void {
  for (let j = 1; j < n; j++) {
    const k = keys[j] as string;
    const w = companions[j] as T;
    let i = j;
    while (i > 0 && (keys[i - 1] as string) > k) {
      keys[i] = keys[i - 1] as string;
      companions[i] = companions[i - 1] as T;
      i--;
    }
    keys[i] = k;
    companions[i] = w;
  }
}

/**
 * A byte buffer that canonical JSON is written into at `pos`. When it runs out of room it grows
 * (`grow`, which a subclass may change); `mark` is where the piece being written began, so that a
 * failed write is undone back to it whatever the buffer became meanwhile.
 */
export class CanonicalWriter implements WrittenBytes {
  buf: Uint8Array;
  pos = 0;
  mark = 0;

  constructor(buf: Uint8Array = new Uint8Array(1024)) {
    this.buf = buf;
  }

  /** Makes room for `need` more bytes after `pos`: doubles, keeping everything written. */
  protected grow(need: number): void {
    const next = new Uint8Array(Math.max(2 * this.buf.length, this.pos + need));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  /** Room for `n` more bytes. */
  room(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  /** Empties the buffer (keeping its memory). */
  reset(): void {
    this.pos = 0;
    this.mark = 0;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.pos++] = b;
  }

  /** Text known to be ASCII and to need no escape (punctuation, a digest, a number's text). */
  ascii(s: string): void {
    const n = s.length;
    this.room(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Bytes written elsewhere. */
  bytes(b: Uint8Array, length: number): void {
    this.room(length);
    if (length < 32) {
      const buf = this.buf;
      let p = this.pos;
      for (let i = 0; i < length; i++) buf[p++] = b[i] as number;
      this.pos = p;
    } else {
      this.buf.set(length === b.length ? b : b.subarray(0, length), this.pos);
      this.pos += length;
    }
  }

  /** UTF-8 text (any), as it is. */
  utf8(s: string): void {
    this.room(3 * s.length);
    this.pos += encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
  }

  /**
   * The JCS bytes of `v`, or nothing where JSON has no value (undefined, a symbol: the answer is
   * then false). Throws NeedsReference, having written part of it, when `v` needs the reference
   * implementation.
   */
  value(v: unknown, known?: KnownBytes): boolean {
    if (prototypeEnumerates()) throw NEEDS_REFERENCE;
    return this.#value(v, 0, known);
  }

  /**
   * Exactly the UTF-8 of `canonicalJson(v)`: the reference implementation's text when `v` needs
   * it. Throws what canonicalJson throws, having written nothing.
   */
  canonical(v: unknown, known?: KnownBytes): void {
    const at = this.pos - this.mark;
    let written: boolean;
    try {
      if (prototypeEnumerates()) throw NEEDS_REFERENCE;
      written = this.#value(v, 0, known);
    } catch (e) {
      this.pos = this.mark + at;
      if (!(e instanceof NeedsReference)) throw e;
      const text: string | undefined = canonicalizeImpl(v);
      if (text === undefined) throw new WarrantError("records/not-json", "value has no JSON form");
      this.utf8(text);
      return;
    }
    if (!written) throw new WarrantError("records/not-json", "value has no JSON form");
  }

  /**
   * One member of an object being written by a writer that knows its shape: `key` (from
   * `memberKey`; its comma left out right after the object's `{`) and `v`'s JCS bytes, or nothing
   * at all where `v` has no JSON value (undefined, a symbol), as canonical JSON leaves the member
   * out. The caller writes the members in canonical key order and has checked `plainPrototypes()`
   * once for the document. Throws NeedsReference, having written part of it, as `value` does.
   */
  member(key: Uint8Array, v: unknown, known?: KnownBytes): void {
    if (v === undefined || typeof v === "symbol") return;
    this.key(key);
    this.#value(v, 1, known);
  }

  /** A member's key alone (its value written next): `,"k":`, the comma left out after `{`. */
  key(key: Uint8Array): void {
    const len = key.length;
    this.room(len);
    const buf = this.buf;
    let p = this.pos;
    for (let j = buf[p - 1] === OPEN_BRACE ? 1 : 0; j < len; j++) buf[p++] = key[j] as number;
    this.pos = p;
  }

  /** One array of keys per depth, emptied and reused by every object written at that depth. */
  readonly #keys: string[][] = [];

  #keysAt(depth: number): string[] {
    return slotAt(this.#keys, depth);
  }

  /** Their values, likewise (each emptied once written). */
  readonly #values: unknown[][] = [];

  #valuesAt(depth: number): unknown[] {
    return slotAt(this.#values, depth);
  }

  #value(v: unknown, depth: number, known: KnownBytes | undefined): boolean {
    switch (typeof v) {
      case "string":
        this.#string(v);
        return true;
      case "number":
        if (!Number.isFinite(v)) throw NEEDS_REFERENCE;
        if ((v | 0) === v && v >= 0) {
          // A non-negative 32-bit integer (-0 included, written 0 as JSON writes it): its digits,
          // with no number text to make.
          this.#digits(v);
        } else {
          this.ascii(`${v}`);
        }
        return true;
      case "boolean":
        this.bytes(v ? TRUE : FALSE, v ? 4 : 5);
        return true;
      case "object":
        if (v === null) this.bytes(NULL, 4);
        else this.#object(v, depth, known);
        return true;
      case "undefined":
      case "symbol":
        return false;
      case "function":
      case "bigint":
        throw NEEDS_REFERENCE;
    }
  }

  /** The decimal digits of `v`, a non-negative integer below 2^31. */
  #digits(v: number): void {
    let n = 1;
    for (let x = v; x >= 10; x = (x / 10) | 0) n++;
    this.room(n);
    const buf = this.buf;
    let p = this.pos + n;
    this.pos = p;
    let x = v;
    do {
      const q = (x / 10) | 0;
      buf[--p] = 0x30 + x - 10 * q;
      x = q;
    } while (x > 0);
  }

  #string(s: string): void {
    const n = s.length;
    if (n <= LONG_STRING) {
      // At most six bytes per UTF-16 unit (`\u00xx`), and the quotes.
      this.room(6 * n + 2);
      const buf = this.buf;
      buf[this.pos] = QUOTE;
      const p = stringAt(buf, this.pos + 1, s);
      buf[p] = QUOTE;
      this.pos = p + 1;
      return;
    }
    let text = s;
    if (MAY_NEED_ESCAPE.test(s)) {
      if (!(s as string & WellFormed).isWellFormed()) throw NEEDS_REFERENCE;
      text = JSON.stringify(s).slice(1, -1);
    }
    this.byte(QUOTE);
    this.utf8(text);
    this.byte(QUOTE);
  }

  #object(v: object, depth: number, known: KnownBytes | undefined): void {
    if (known !== undefined) {
      const made = known.get(v);
      if (made !== undefined) {
        this.bytes(made.buf, made.pos);
        return;
      }
    }
    if (depth > MAX_FAST_DEPTH) throw NEEDS_REFERENCE;
    if (Array.isArray(v)) {
      this.byte(0x5b);
      for (let i = 0; i < v.length; i++) {
        if (i > 0) this.byte(COMMA);
        if (!this.#value(v[i], depth + 1, known)) this.ascii("null");
      }
      this.byte(0x5d);
      return;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) throw NEEDS_REFERENCE;
    if (typeof (v as { toJSON?: unknown }).toJSON === "function") throw NEEDS_REFERENCE;
    const o = v as Record<string, unknown>;
    // The keys, as Object.keys lists them, into the first `n` places of an array kept for this
    // depth (never emptied: setting its length would free its storage).
    // Each value is read inside the for…in over its object, where V8 reads it by the key's place
    // rather than looking the key up.
    const keys = this.#keysAt(depth);
    const values = this.#valuesAt(depth);
    let n = 0;
    for (const k in o) {
      keys[n] = k;
      values[n++] = o[k];
    }
    // Objects whose keys are listed alike are written alike: their order is looked up, not sorted.
    const order = orderOf(keys, n);
    if (order === undefined) sortEntries(keys, values, n);
    this.byte(OPEN_BRACE);
    let first = true;
    for (let i = 0; i < n; i++) {
      const at = order === undefined ? i : (order.from[i] as number);
      const x = values[at];
      values[at] = undefined; // not kept alive by the writer
      if (x === undefined || typeof x === "symbol") continue;
      const key = order === undefined ? keyOf(keys[i] as string) : (order.bytes[i] as Uint8Array);
      const len = key.length;
      this.room(len);
      const buf = this.buf;
      let p = this.pos;
      for (let j = first ? 1 : 0; j < len; j++) buf[p++] = key[j] as number;
      this.pos = p;
      this.#value(x, depth + 1, known);
      first = false;
    }
    this.byte(0x7d);
  }
}

/** The array at `depth` of `slots`, made on first use and kept for reuse. */
function slotAt<T>(slots: T[][], depth: number): T[] {
  let slot = slots[depth];
  if (slot === undefined) {
    slot = [];
    slots[depth] = slot;
  }
  return slot;
}
