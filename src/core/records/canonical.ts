// Canonical JSON (RFC 8785 / JCS) and the content refs and digests taken over it (docs/spec/contracts.md).
//
// JCS is JSON with every object's keys sorted by UTF-16 code units, numbers as ECMAScript writes
// them and strings as JSON.stringify escapes them. The writer here produces exactly that for plain
// JSON data; anything it does not vouch for (non-finite numbers, lone surrogates, toJSON, objects
// that are not plain, functions, bigints, very deep or cyclic values) goes to the reference
// implementation (`canonicalize`), so the text is byte-identical to it on all JSON data.
import { sha256 } from "@noble/hashes/sha2.js";
import canonicalizeImpl from "canonicalize";
import { WarrantError } from "../result.js";

const encoder = new TextEncoder();

/** Deeper values go to the reference implementation (which also detects cycles). */
const MAX_FAST_DEPTH = 256;

/** Thrown inside the writer when a value needs the reference implementation. */
const SLOW: unique symbol = Symbol("slow");

/** Object texts already made, by identity: each must be the object's canonical JSON. */
export type CanonicalTexts = Pick<WeakMap<object, string>, "get">;

type WellFormed = { isWellFormed(): boolean };

/** One-byte strings answer at once: only two-byte strings are scanned for lone surrogates. */
function wellFormed(s: string): boolean {
  return (s as string & WellFormed).isWellFormed();
}

/**
 * Quoted object keys, bounded: keys repeat across entries far more than values do. The memo only
 * saves work; a miss computes the same text.
 */
const QUOTED_LIMIT = 4096;
const quotedKeys = new Map<string, string>();

function quotedKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    if (!wellFormed(k)) throw SLOW;
    q = JSON.stringify(k);
    if (quotedKeys.size < QUOTED_LIMIT) quotedKeys.set(k, q);
  }
  return q;
}

/** What JSON.stringify escapes in a string (`"`, `\\`, controls), and any surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const MAY_NEED_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function quotedEscaped(s: string): string {
  if (!wellFormed(s)) throw SLOW;
  return JSON.stringify(s);
}

/**
 * A plain object's keys in JCS order (UTF-16 code units); SLOW for anything else: another
 * prototype, or a `toJSON` method, is the reference implementation's to write.
 */
function plainKeys(o: object): string[] {
  const proto: unknown = Object.getPrototypeOf(o);
  if (proto !== Object.prototype && proto !== null) throw SLOW;
  if (typeof (o as { toJSON?: unknown }).toJSON === "function") throw SLOW;
  const keys = Object.keys(o);
  // Insertion sort: objects have few keys, and most arrive nearly sorted.
  for (let j = 1; j < keys.length; j++) {
    const k = keys[j] as string;
    let i = j;
    while (i > 0 && (keys[i - 1] as string) > k) {
      keys[i] = keys[i - 1] as string;
      i--;
    }
    keys[i] = k;
  }
  return keys;
}

/** The JCS text of `v`, or undefined where JSON has no value (undefined, a symbol). */
function write(v: unknown, depth: number, known: CanonicalTexts | undefined): string | undefined {
  switch (typeof v) {
    case "string":
      return MAY_NEED_ESCAPE.test(v) ? quotedEscaped(v) : `"${v}"`;
    case "number":
      if (!Number.isFinite(v)) throw SLOW;
      return `${v}`;
    case "boolean":
      return v ? "true" : "false";
    case "object":
      if (v === null) return "null";
      return writeObject(v, depth, known);
    case "undefined":
    case "symbol":
      return undefined;
    case "function":
    case "bigint":
      throw SLOW;
  }
}

function writeItem(x: unknown, depth: number, known: CanonicalTexts | undefined): string {
  return write(x, depth + 1, known) ?? "null";
}

function writeObject(v: object, depth: number, known: CanonicalTexts | undefined): string {
  if (known !== undefined) {
    const made = known.get(v);
    if (made !== undefined) return made;
  }
  if (depth > MAX_FAST_DEPTH) throw SLOW;
  if (Array.isArray(v)) {
    const n = v.length;
    if (n === 0) return "[]";
    let s = `[${writeItem(v[0], depth, known)}`;
    for (let i = 1; i < n; i++) s += `,${writeItem(v[i], depth, known)}`;
    return `${s}]`;
  }
  const o = v as Record<string, unknown>;
  const keys = plainKeys(o);
  let s = "{";
  let first = true;
  for (const k of keys) {
    const x = write(o[k], depth + 1, known);
    if (x === undefined) continue;
    s += first ? `${quotedKey(k)}:${x}` : `,${quotedKey(k)}:${x}`;
    first = false;
  }
  return `${s}}`;
}

/**
 * JCS text of a JSON value. Throws on values JSON cannot carry (undefined root, cycles, NaN, lone
 * surrogates). `known` supplies texts already made for some of the value's objects (by identity),
 * so a part shared by two documents is written once. The text is built by concatenation, which
 * V8 flattens when it is first read as a whole (hashed, encoded, written).
 */
export function canonicalJson(value: unknown, known?: CanonicalTexts): string {
  let text: string | undefined;
  try {
    text = write(value, 0, known);
  } catch (e) {
    if (e !== SLOW) throw e;
    text = canonicalizeImpl(value);
  }
  if (text === undefined) throw new WarrantError("records/not-json", "value has no JSON form");
  return text;
}

export function canonicalBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalJson(value));
}

/** What takes canonical JSON's bytes chunk by chunk (a hash); a chunk is its own to keep. */
export interface ByteSink {
  update(chunk: Uint8Array): unknown;
}

/** Pieces are gathered up to about this many UTF-16 code units, then encoded as one chunk. */
const CHUNK_UNITS = 1 << 15;

/**
 * The writer of `write` above, giving its text piece by piece instead of building it: the same
 * text, never held whole. Pieces are whole tokens, so a chunk never splits a surrogate pair.
 */
class ChunkWriter {
  #pending = "";
  constructor(readonly sink: ByteSink) {}

  put(piece: string): void {
    this.#pending += piece;
    if (this.#pending.length >= CHUNK_UNITS) this.flush();
  }

  flush(): void {
    if (this.#pending === "") return;
    this.sink.update(encoder.encode(this.#pending));
    this.#pending = "";
  }

  /** Writes `v`; false (and nothing written) where JSON has no value. */
  value(v: unknown, depth: number): boolean {
    if (v !== null && typeof v === "object") {
      this.object(v, depth);
      return true;
    }
    const text = write(v, depth, undefined);
    if (text === undefined) return false;
    this.put(text);
    return true;
  }

  object(v: object, depth: number): void {
    if (depth > MAX_FAST_DEPTH) throw SLOW;
    if (Array.isArray(v)) {
      this.put("[");
      for (let i = 0; i < v.length; i++) {
        if (i > 0) this.put(",");
        if (!this.value(v[i], depth + 1)) this.put("null");
      }
      this.put("]");
      return;
    }
    const o = v as Record<string, unknown>;
    const keys = plainKeys(o);
    this.put("{");
    let first = true;
    for (const k of keys) {
      const x = o[k];
      if (x === undefined || typeof x === "symbol") continue;
      this.put(first ? `${quotedKey(k)}:` : `,${quotedKey(k)}:`);
      first = false;
      this.value(x, depth + 1);
    }
    this.put("}");
  }
}

/**
 * The UTF-8 bytes of `canonicalJson(value)` given to a sink in chunks of at most a few tens of
 * kilobytes, so that hashing a large value never holds its whole text. `open` makes the sink; when
 * the value needs the reference implementation part way through, the sink given the chunks so far
 * is dropped and a fresh one gets the reference text. Returns the sink that got the whole text.
 */
export function canonicalBytesInto<S extends ByteSink>(value: unknown, open: () => S): S {
  const sink = open();
  const writer = new ChunkWriter(sink);
  try {
    if (!writer.value(value, 0)) {
      throw new WarrantError("records/not-json", "value has no JSON form");
    }
    writer.flush();
    return sink;
  } catch (e) {
    if (e !== SLOW) throw e;
  }
  const text = canonicalizeImpl(value);
  if (text === undefined) throw new WarrantError("records/not-json", "value has no JSON form");
  const fresh = open();
  fresh.update(encoder.encode(text));
  return fresh;
}

/** Unpadded base64url. */
export function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** `sha256:<43 base64url>` over the JCS bytes of a value. */
export function digestOf(value: unknown): string {
  return `sha256:${base64url(sha256(canonicalBytes(value)))}`;
}

/** `sha256:<43 base64url>` over raw bytes. */
export function digestOfBytes(bytes: Uint8Array): string {
  return `sha256:${base64url(sha256(bytes))}`;
}

/**
 * A content ref `<prefix>:sha256:<b64>`: the digest of the record without its own ref field and
 * without any `signature` field.
 */
export function contentRef(prefix: string, record: object, refField: string): string {
  const {
    [refField]: _ref,
    signature: _sig,
    ...rest
  } = record as Readonly<Record<string, unknown>>;
  return `${prefix}:${digestOf(rest)}`;
}

/** Lower-case hex. */
export function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}
