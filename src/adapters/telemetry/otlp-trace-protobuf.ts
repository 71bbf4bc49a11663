// The OTLP/HTTP protobuf body of a span export (ExportTraceServiceRequest), written in one pass,
// either from a batch of spans (`createTraceRequestWriter`) or span by span as each ends, wrapped
// into a request when the batch leaves (`createTraceBatcher`, which the protobuf export uses).
// It writes the same bytes as the SDK's own serializer (`ProtobufTraceSerializer` of
// @opentelemetry/otlp-transformer; test/otlp-trace-protobuf.test.ts compares the two), with less
// work per span: attribute keys, span names, the repeated attribute values (operation, provider,
// model, tool name, token counts, …), a span's attributes where they are the last span's of its
// name, and the closing fields of spans with nothing dropped and no events or links are encoded
// once and copied after, and each message is written once (the SDK estimates the whole request's
// size in a first pass, then writes it in a second).
import type { Attributes, AttributeValue, HrTime, Link, SpanContext } from "@opentelemetry/api";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace";

type Bytes = Uint8Array;

/**
 * The most strings kept encoded in each cache, the most distinct values per attribute key, and the
 * longest string kept (a captured prompt or tool result is written each time, never kept): at most
 * about 1024 names and 1024 × 64 values of 128 characters, a few MB however long a process runs.
 */
const NAMES_MAX = 1024;
const VALUES_PER_KEY = 64;
const KEPT_LENGTH_MAX = 128;

/** Span flags (OTLP): the trace flags, with "is-remote is known" and "is remote". */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

function varintSize(v: number): number {
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  return 5;
}

/** A hex digit's value by its character code, as the SDK reads one (any other character too). */
const HEX = Int32Array.from({ length: 128 }, (_, c) =>
  c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c - 55,
);

function hexDigit(c: number): number {
  return c < 128 ? (HEX[c] as number) : c - 55;
}

/** The `n` bytes of hex text `h`, at `at` of `buf`. */
function hexInto(buf: Bytes, at: number, h: string, n: number): void {
  for (let i = 0; i < n; i++)
    buf[at + i] = (hexDigit(h.charCodeAt(2 * i)) << 4) | hexDigit(h.charCodeAt(2 * i + 1));
}

/** Strings encoded once: keys and names (bounded), and each key's values while they repeat. */
class Encoded {
  private readonly names = new Map<string, Bytes>();
  /** A key's KeyValue messages by value, or null once it had more distinct values than are
   * worth keeping. */
  private readonly values = new Map<string, Map<string, Bytes> | null>();

  /** The bytes of every encoding kept. */
  bytes(): number {
    let n = 0;
    for (const b of this.names.values()) n += b.length;
    for (const of of this.values.values()) for (const b of of?.values() ?? []) n += b.length;
    for (const last of this.last.values()) n += last.bytes.length;
    for (const t of this.templates.values()) n += t.block.length;
    return n;
  }

  name(s: string): Bytes | undefined {
    let b = this.names.get(s);
    if (b === undefined && this.names.size < NAMES_MAX && s.length <= KEPT_LENGTH_MAX) {
      b = Buffer.from(s, "utf8");
      this.names.set(s, b);
    }
    return b;
  }

  private readonly templates = new Map<string, Template>();

  /** The template of span attributes for spans of `name`, or none past the bounds. */
  template(name: string): Template | undefined {
    let t = this.templates.get(name);
    if (t === undefined && this.templates.size < NAMES_MAX && name.length <= KEPT_LENGTH_MAX) {
      t = new Template();
      this.templates.set(name, t);
    }
    return t;
  }

  /**
   * The last number or array each key had, with its KeyValue message (length-prefixed): token
   * counts and finish reasons repeat from span to span, one value at a time.
   */
  private readonly last = new Map<string, { value: unknown; bytes: Bytes }>();

  /** The length-prefixed KeyValue message of a key and a number or short array, while it repeats. */
  lastKeyValue(key: string, value: number | readonly unknown[]): Bytes | undefined {
    if (key.length > KEPT_LENGTH_MAX) return undefined;
    const last = this.last.get(key);
    if (last !== undefined && sameValue(last.value, value)) return last.bytes;
    if (!keepable(value) || (last === undefined && this.last.size >= NAMES_MAX)) return undefined;
    const w = new Writer(64 + 3 * key.length);
    const at = w.start();
    keyValueBody(w, this, key, value);
    w.end(at);
    const bytes = Buffer.from(w.buf.subarray(0, w.pos));
    this.last.set(key, { value: Array.isArray(value) ? value.slice() : value, bytes });
    return bytes;
  }

  /**
   * The whole KeyValue message of a key and a string or boolean value, length-prefixed, while that
   * key's values repeat (a call id never does: its key stops being kept at its 65th value).
   */
  keyValue(key: string, value: string | boolean): Bytes | undefined {
    if (typeof value === "string" && value.length > KEPT_LENGTH_MAX) return undefined;
    if (key.length > KEPT_LENGTH_MAX) return undefined;
    let of = this.values.get(key);
    if (of === null) return undefined;
    if (of === undefined) {
      if (this.values.size >= NAMES_MAX) return undefined;
      of = new Map();
      this.values.set(key, of);
    }
    const k = typeof value === "string" ? value : value ? "\u0000true" : "\u0000false";
    let b = of.get(k);
    if (b === undefined) {
      if (of.size >= VALUES_PER_KEY) {
        this.values.set(key, null);
        return undefined;
      }
      const w = new Writer(64 + 3 * (key.length + k.length));
      const at = w.start();
      keyValueBody(w, this, key, value);
      w.end(at);
      b = Buffer.from(w.buf.subarray(0, w.pos));
      of.set(k, b);
    }
    return b;
  }
}

/** Arrays of at most this many items are kept as a key's last value. */
const KEPT_ITEMS = 8;

/** A number, or an array of a few short strings, numbers, booleans or nulls. */
function keepable(value: number | readonly unknown[]): boolean {
  if (typeof value === "number") return true;
  if (value.length > KEPT_ITEMS) return false;
  for (const item of value) {
    const t = typeof item;
    if (
      t === "string"
        ? (item as string).length > KEPT_LENGTH_MAX
        : !(item === null || t === "number" || t === "boolean")
    )
      return false;
  }
  return true;
}

/** Whether `a` (a kept value) and `b` are the same number, or arrays of the same items. */
function sameValue(a: unknown, b: unknown): boolean {
  // 0 and -0 are one varint.
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

class Writer {
  buf: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  ensure(n: number): void {
    const needed = this.pos + n;
    if (needed <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  /** A varint as the SDK's writer makes it: 64-bit two's complement for negative numbers. */
  varint(value: number): void {
    this.ensure(10);
    const buf = this.buf;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        buf[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[this.pos++] = v;
      return;
    }
    let low: number;
    let high: number;
    if (value >= 0) {
      low = value >>> 0;
      high = (value / 0x100000000) >>> 0;
    } else {
      const abs = Math.abs(value);
      low = ~(abs >>> 0) >>> 0;
      high = ~((abs / 0x100000000) >>> 0) >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      buf[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[this.pos++] = low & 0x7f;
  }

  /** A field's key: one byte below field 16, two from there (no field here reaches 2048). */
  tag(field: number, wire: number): void {
    this.ensure(2);
    const key = (field << 3) | wire;
    if (key < 0x80) this.buf[this.pos++] = key;
    else {
      this.buf[this.pos++] = (key & 0x7f) | 0x80;
      this.buf[this.pos++] = key >>> 7;
    }
  }

  fixed32(value: number): void {
    this.ensure(4);
    const buf = this.buf;
    const p = this.pos;
    buf[p] = value & 0xff;
    buf[p + 1] = (value >>> 8) & 0xff;
    buf[p + 2] = (value >>> 16) & 0xff;
    buf[p + 3] = (value >>> 24) & 0xff;
    this.pos = p + 4;
  }

  fixed64(low: number, high: number): void {
    this.fixed32(low);
    this.fixed32(high);
  }

  double(value: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** Length-prefixed bytes. */
  bytes(b: Bytes): void {
    this.varint(b.length);
    this.raw(b);
  }

  /** `b[start, end)` as it is. */
  copy(b: Bytes, start: number, end: number): void {
    const n = end - start;
    this.ensure(n);
    const buf = this.buf;
    const p = this.pos;
    if (n < 48) for (let i = 0; i < n; i++) buf[p + i] = b[start + i] as number;
    else buf.set(b.subarray(start, end), p);
    this.pos = p + n;
  }

  /** Bytes as they are, written before. */
  raw(b: Bytes): void {
    const n = b.length;
    this.ensure(n);
    const buf = this.buf;
    const p = this.pos;
    if (n < 48) for (let i = 0; i < n; i++) buf[p + i] = b[i] as number;
    else buf.set(b, p);
    this.pos = p + n;
  }

  /** A length-prefixed string, from its encoding when one is at hand. */
  string(s: string, encoded: Bytes | undefined): void {
    if (encoded !== undefined) {
      this.bytes(encoded);
      return;
    }
    // ASCII is copied as it is checked; at the first other character, the whole string is encoded.
    const n = s.length;
    const start = this.pos;
    this.varint(n);
    this.ensure(n);
    const buf = this.buf;
    const at = this.pos;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 127) {
        this.pos = start;
        this.bytes(Buffer.from(s, "utf8"));
        return;
      }
      buf[at + i] = c;
    }
    this.pos = at + n;
  }

  /** Hex text (a trace or span id) as length-prefixed bytes. */
  hex(h: string): void {
    const n = Math.floor(h.length / 2);
    this.varint(n);
    this.ensure(n);
    hexInto(this.buf, this.pos, h, n);
    this.pos += n;
  }

  /** Reserves `reserve` bytes for a message's length; `end` writes it. */
  start(reserve = 1): number {
    this.ensure(reserve);
    const at = this.pos;
    this.pos += reserve;
    return at;
  }

  end(at: number, reserve = 1): void {
    const length = this.pos - at - reserve;
    const size = varintSize(length);
    if (size !== reserve) {
      this.ensure(size - reserve);
      this.buf.copyWithin(at + size, at + reserve, this.pos);
      this.pos += size - reserve;
    }
    let v = length;
    let p = at;
    while (v > 0x7f) {
      this.buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[p] = v;
  }

  /** Nanoseconds since the epoch, as fixed64 (the SDK's arithmetic, exact past 2^53). */
  time(t: HrTime): void {
    const seconds = t[0];
    const nanos = t[1];
    const lower = (seconds & 0xffff) * 1e9;
    const upper = ((seconds / 0x10000) >>> 0) * 1e9;
    const lowWithCarry = (lower >>> 0) + (((upper & 0xffff) * 0x10000) >>> 0) + nanos;
    const carry = Math.floor(lowWithCarry / 0x100000000);
    this.fixed64(
      lowWithCarry >>> 0,
      Math.floor(lower / 0x100000000) + ((upper / 0x10000) >>> 0) + carry,
    );
  }
}

function anyValue(w: Writer, e: Encoded, key: string, value: unknown): void {
  if (typeof value === "string") {
    w.tag(1, 2);
    w.string(value, undefined);
  } else if (typeof value === "boolean") {
    w.tag(2, 0);
    w.varint(value ? 1 : 0);
  } else if (typeof value === "number") {
    if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
      w.tag(3, 0);
      w.varint(value);
    } else {
      w.tag(4, 1);
      w.double(value);
    }
  } else if (value instanceof Uint8Array) {
    w.tag(7, 2);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    w.tag(5, 2);
    const array = w.start();
    for (const item of value) {
      w.tag(1, 2);
      const at = w.start();
      anyValue(w, e, key, item);
      w.end(at);
    }
    w.end(array);
  } else if (typeof value === "object" && value !== null) {
    w.tag(6, 2);
    const list = w.start();
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      w.tag(1, 2);
      keyValue(w, e, k, (value as Record<string, unknown>)[k]);
    }
    w.end(list);
  }
}

/** A KeyValue message, without its length. */
function keyValueBody(w: Writer, e: Encoded, key: string, value: unknown): void {
  w.tag(1, 2);
  w.string(key, e.name(key));
  w.tag(2, 2);
  const at = w.start();
  anyValue(w, e, key, value);
  w.end(at);
}

/** A KeyValue message with its length. */
function keyValue(w: Writer, e: Encoded, key: string, value: unknown): void {
  const type = typeof value;
  const known =
    type === "string" || type === "boolean"
      ? e.keyValue(key, value as string | boolean)
      : type === "number" || Array.isArray(value)
        ? e.lastKeyValue(key, value as number | readonly unknown[])
        : undefined;
  if (known !== undefined) {
    w.raw(known);
    return;
  }
  const kv = w.start();
  keyValueBody(w, e, key, value);
  w.end(kv);
}

function attributes(w: Writer, e: Encoded, attrs: Attributes, field: number): void {
  for (const key in attrs) {
    if (!Object.hasOwn(attrs, key)) continue;
    w.tag(field, 2);
    keyValue(w, e, key, attrs[key] satisfies AttributeValue | undefined);
  }
}

/**
 * The attributes of the last spans of one name, as written: each position's key and value (none
 * where the value is not kept: long, or of a kind not compared) and where its field lies in
 * `block`. A span of that name whose attribute at a position has the same key and value copies
 * that field's bytes; runs of such fields are copied at once.
 */
class Template {
  readonly keys: (string | undefined)[] = [];
  readonly values: unknown[] = [];
  /** Position i's field is block[offsets[i], offsets[i + 1]). */
  readonly offsets: number[] = [0];
  block: Bytes = NO_BYTES;
  /** Per position, the kept value it last missed with: missing with it again remakes. */
  readonly missed: unknown[] = [];
  /** Its spans' attributes are too long to keep: each is written field by field. */
  unkept = false;

  /** Takes the fields just written from `from` (up to `w.pos`, ending at `ends`) as the template. */
  take(w: Writer, from: number, keys: string[], values: unknown[], ends: number[]): void {
    this.keys.length = 0;
    this.values.length = 0;
    this.offsets.length = 1;
    this.missed.length = 0;
    if (w.pos - from > TEMPLATE_BYTES_MAX) {
      this.block = NO_BYTES;
      this.unkept = true;
      return;
    }
    this.block = Buffer.from(w.buf.subarray(from, w.pos));
    for (let i = 0; i < keys.length; i++) {
      const v = values[i];
      const kept = keepableAttribute(v);
      this.keys.push(kept ? keys[i] : undefined);
      this.values.push(kept && Array.isArray(v) ? v.slice() : kept ? v : undefined);
      this.offsets.push((ends[i] as number) - from);
    }
  }
}

const NO_BYTES = Buffer.alloc(0);
/** The largest attribute block kept as a template (a span with captured content is written anew). */
const TEMPLATE_BYTES_MAX = 2048;

/** A value whose field a template may keep: not too long, and compared by `sameAttribute`. */
function keepableAttribute(v: unknown): boolean {
  const t = typeof v;
  if (t === "string") return (v as string).length <= KEPT_LENGTH_MAX;
  if (t === "number" || t === "boolean") return true;
  return Array.isArray(v) && keepable(v);
}

/** Whether a kept value and a span's are written alike. */
function sameAttribute(kept: unknown, v: unknown): boolean {
  // Strings, booleans and numbers (0 and -0 are one varint; NaN never equals, so is written anew).
  if (kept === v) return kept !== undefined;
  return Array.isArray(kept) && sameValue(kept, v);
}

/** Span attributes (field 9), from the template of the span's name where they are the same. */
function spanAttributes(w: Writer, e: Encoded, name: string, attrs: Attributes): void {
  const t = e.template(name);
  if (t === undefined || t.unkept) {
    attributes(w, e, attrs, 9);
    return;
  }
  const from = w.pos;
  const { keys, values, offsets, block, missed } = t;
  let i = 0;
  /** The first position of the run of same fields not yet copied; -1 when none. */
  let run = -1;
  let remade = block === NO_BYTES;
  for (const key in attrs) {
    if (!Object.hasOwn(attrs, key)) continue;
    const value = attrs[key];
    if (keys[i] === key && sameAttribute(values[i], value)) {
      if (run < 0) run = i;
      missed[i] = undefined;
    } else {
      if (run >= 0) {
        w.copy(block, offsets[run] as number, offsets[i] as number);
        run = -1;
      }
      w.tag(9, 2);
      keyValue(w, e, key, value satisfies AttributeValue | undefined);
      // A value met twice in a row where the template has another: the template is remade.
      if (sameAttribute(missed[i], value)) remade = true;
      else missed[i] = keepableAttribute(value) ? value : undefined;
    }
    i++;
  }
  if (run >= 0) w.copy(block, offsets[run] as number, offsets[i] as number);
  if (remade || i !== keys.length) remake(w, e, t, from, attrs);
}

/** Writes the attributes again from `from`, field by field, and keeps them as the template. */
function remake(w: Writer, e: Encoded, t: Template, from: number, attrs: Attributes): void {
  w.pos = from;
  const keys: string[] = [];
  const values: unknown[] = [];
  const ends: number[] = [];
  for (const key in attrs) {
    if (!Object.hasOwn(attrs, key)) continue;
    const value = attrs[key];
    w.tag(9, 2);
    keyValue(w, e, key, value satisfies AttributeValue | undefined);
    keys.push(key);
    values.push(value);
    ends.push(w.pos);
  }
  t.take(w, from, keys, values, ends);
}

function event(w: Writer, e: Encoded, ev: TimedEvent): void {
  const at = w.start();
  w.tag(1, 1);
  w.time(ev.time);
  w.tag(2, 2);
  w.string(ev.name, e.name(ev.name));
  if (ev.attributes) attributes(w, e, ev.attributes, 3);
  w.tag(4, 0);
  w.varint(ev.droppedAttributesCount || 0);
  w.end(at);
}

/**
 * Hex ids as bytes, the last one of each kind kept: the spans of a batch mostly share their trace
 * and, a passage's calls, their parent.
 */
class IdBytes {
  private text = "";
  private bytes: Bytes = Buffer.alloc(0);

  of(hex: string): Bytes {
    if (hex !== this.text) {
      const n = Math.floor(hex.length / 2);
      const bytes = Buffer.alloc(n);
      hexInto(bytes, 0, hex, n);
      this.bytes = bytes;
      this.text = hex;
    }
    return this.bytes;
  }
}

const traceIds = new IdBytes();
const parentIds = new IdBytes();

/** A span context's fields 1–3, as a Span and a Link both begin: trace id, span id, trace state. */
function ids(w: Writer, c: SpanContext): void {
  w.tag(1, 2);
  w.bytes(traceIds.of(c.traceId));
  w.tag(2, 2);
  w.hex(c.spanId);
  const state = c.traceState?.serialize();
  if (state) {
    w.tag(3, 2);
    w.string(state, undefined);
  }
}

function link(w: Writer, e: Encoded, l: Link): void {
  const at = w.start();
  const c = l.context;
  ids(w, c);
  if (l.attributes) attributes(w, e, l.attributes, 4);
  w.tag(5, 0);
  w.varint(l.droppedAttributesCount || 0);
  w.tag(6, 5);
  w.fixed32((c.traceFlags & 0xff) | HAS_IS_REMOTE | (c.isRemote ? IS_REMOTE : 0));
  w.end(at);
}

/**
 * Fields 10 to 16 of a span with nothing dropped, no events or links and a status of code 0 to 2
 * with no message (most spans), by status code and flags; the same bytes as written one by one.
 */
const tails = new Map<number, Bytes>();

function plainTail(s: ReadableSpan, flags: number): Bytes | undefined {
  const { code, message } = s.status;
  if (
    s.droppedAttributesCount !== 0 ||
    s.droppedEventsCount !== 0 ||
    s.droppedLinksCount !== 0 ||
    s.events.length !== 0 ||
    s.links.length !== 0 ||
    message ||
    !(code === 0 || code === 1 || code === 2)
  ) {
    return undefined;
  }
  const key = flags * 4 + code;
  let tail = tails.get(key);
  if (tail === undefined) {
    const w = new Writer(24);
    w.tag(10, 0);
    w.varint(0);
    w.tag(12, 0);
    w.varint(0);
    w.tag(14, 0);
    w.varint(0);
    w.tag(15, 2);
    const status = w.start();
    w.tag(3, 0);
    w.varint(code);
    w.end(status);
    w.tag(16, 5);
    w.fixed32(flags);
    tail = Buffer.from(w.buf.subarray(0, w.pos));
    tails.set(key, tail);
  }
  return tail;
}

function span(w: Writer, e: Encoded, s: ReadableSpan): void {
  const at = w.start(2);
  const c = s.spanContext();
  ids(w, c);
  const parent = s.parentSpanContext;
  if (parent?.spanId) {
    w.tag(4, 2);
    w.bytes(parentIds.of(parent.spanId));
  }
  w.tag(5, 2);
  w.string(s.name, e.name(s.name));
  const kind = s.kind == null ? 0 : s.kind + 1;
  if (kind !== 0) {
    w.tag(6, 0);
    w.varint(kind);
  }
  w.tag(7, 1);
  w.time(s.startTime);
  w.tag(8, 1);
  w.time(s.endTime);
  if (s.attributes) spanAttributes(w, e, s.name, s.attributes);
  const flags = (c.traceFlags & 0xff) | HAS_IS_REMOTE | (parent?.isRemote ? IS_REMOTE : 0);
  const tail = plainTail(s, flags);
  if (tail !== undefined) {
    w.raw(tail);
    w.end(at, 2);
    return;
  }
  w.tag(10, 0);
  w.varint(s.droppedAttributesCount);
  for (const ev of s.events) {
    w.tag(11, 2);
    event(w, e, ev);
  }
  w.tag(12, 0);
  w.varint(s.droppedEventsCount);
  for (const l of s.links) {
    w.tag(13, 2);
    link(w, e, l);
  }
  w.tag(14, 0);
  w.varint(s.droppedLinksCount);
  w.tag(15, 2);
  const status = w.start();
  if (s.status.message) {
    w.tag(2, 2);
    w.string(s.status.message, undefined);
  }
  w.tag(3, 0);
  w.varint(s.status.code);
  w.end(status);
  w.tag(16, 5);
  w.fixed32(flags);
  w.end(at, 2);
}

type Scope = ReadableSpan["instrumentationScope"];
type Resource = ReadableSpan["resource"];

/** A ScopeSpans message around `spans`: the scope's spans, each already written as its field 2. */
function scopeSpans(w: Writer, e: Encoded, scope: Scope, spans: Writer): void {
  const at = w.start(3);
  w.tag(1, 2);
  const sc = w.start();
  w.tag(1, 2);
  w.string(scope.name, e.name(scope.name));
  if (scope.version) {
    w.tag(2, 2);
    w.string(scope.version, undefined);
  }
  const extra = scope as { attributes?: Attributes; droppedAttributesCount?: number };
  if (extra.attributes) attributes(w, e, extra.attributes, 3);
  if (extra.droppedAttributesCount) {
    w.tag(4, 0);
    w.varint(extra.droppedAttributesCount);
  }
  w.end(sc);
  w.copy(spans.buf, 0, spans.pos);
  if (scope.schemaUrl) {
    w.tag(3, 2);
    w.string(scope.schemaUrl, e.name(scope.schemaUrl));
  }
  w.end(at, 3);
}

function resourceSpans(
  w: Writer,
  e: Encoded,
  resource: Resource,
  scopes: ReadonlyMap<Scope, Writer>,
): void {
  const at = w.start(3);
  w.tag(1, 2);
  const r = w.start();
  if (resource.attributes) attributes(w, e, resource.attributes, 1);
  w.tag(2, 0);
  w.varint(0);
  w.end(r);
  for (const [scope, spans] of scopes) {
    w.tag(2, 2);
    scopeSpans(w, e, scope, spans);
  }
  if (resource.schemaUrl) {
    w.tag(3, 2);
    w.string(resource.schemaUrl, undefined);
  }
  w.end(at, 3);
}

export interface TraceRequestWriter {
  (spans: readonly ReadableSpan[]): Uint8Array;
  /** The bytes of the encodings it keeps (bounded, see KEPT_LENGTH_MAX). */
  kept(): number;
}

/**
 * A serializer of span exports; each keeps its own encoded strings. The same bytes as a batcher
 * given the spans one by one, then taken.
 */
export function createTraceRequestWriter(): TraceRequestWriter {
  const batcher = createTraceBatcher();
  const write = (spans: readonly ReadableSpan[]): Uint8Array => {
    try {
      for (const s of spans) batcher.add(s);
    } catch (e) {
      batcher.take(); // the spans added before the one that failed go with it
      throw e;
    }
    return batcher.take()?.bytes ?? new Uint8Array(0);
  };
  return Object.assign(write, { kept: () => batcher.kept() });
}

/** The body of one export request, and how many spans it carries. */
export interface SpanBatch {
  readonly bytes: Uint8Array;
  readonly count: number;
}

/**
 * Spans encoded as each is added, so that an ended span is garbage at once instead of waiting, as
 * an object that survives collections, for its batch to leave: `take` wraps what was added since
 * the last take into a request, the same bytes as the request writer makes of those spans in that
 * order (by resource, then scope, each in the order first seen).
 */
export interface TraceBatcher {
  /** Encodes a span; nothing of it stays if this throws. */
  add(span: ReadableSpan): void;
  /** Spans added since the last take. */
  readonly count: number;
  /** The request of the spans added since the last take, or undefined when there are none. */
  take(): SpanBatch | undefined;
  /** The bytes of the encodings it keeps (bounded, see KEPT_LENGTH_MAX). */
  kept(): number;
}

/** The room a scope's spans start with, and the most a writer keeps for the next batch. */
const SCOPE_BYTES = 16 * 1024;
const SCOPE_BYTES_KEPT = 1024 * 1024;

export function createTraceBatcher(): TraceBatcher {
  const encoded = new Encoded();
  let resources = new Map<Resource, Map<Scope, Writer>>();
  const spare: Writer[] = [];
  let count = 0;
  let size = 0;
  return {
    add(s) {
      let scopes = resources.get(s.resource);
      if (scopes === undefined) {
        scopes = new Map();
        resources.set(s.resource, scopes);
      }
      let w = scopes.get(s.instrumentationScope);
      if (w === undefined) {
        w = spare.pop() ?? new Writer(SCOPE_BYTES);
        scopes.set(s.instrumentationScope, w);
      }
      const at = w.pos;
      try {
        w.tag(2, 2);
        span(w, encoded, s);
      } catch (e) {
        w.pos = at;
        throw e;
      }
      size += w.pos - at;
      count++;
    },
    get count() {
      return count;
    },
    take() {
      if (count === 0) return undefined;
      const out = new Writer(1024 + size + 256 * resources.size);
      for (const [resource, scopes] of resources) {
        out.tag(1, 2);
        resourceSpans(out, encoded, resource, scopes);
        for (const w of scopes.values()) {
          w.pos = 0;
          if (w.buf.length <= SCOPE_BYTES_KEPT) spare.push(w);
        }
      }
      const batch = { bytes: out.buf.subarray(0, out.pos), count };
      resources = new Map();
      count = 0;
      size = 0;
      return batch;
    },
    kept: () => encoded.bytes(),
  };
}
