// The strict reader for agent definitions (docs/spec/definitions.md): a lossless, linear-time JSON parser that refuses
// duplicate keys, integers outside ±(2^53−1), lone UTF-16 surrogates, malformed JSON and a non-object
// root, each with a JSON Pointer and a line and column. JSON.parse is unsuitable: it keeps the last
// duplicate, silently rounds big integers and admits lone surrogates.
import { fail, ok, type Problem, pointerToken, type Result } from "../result.js";
import { SourcePositions } from "./source-positions.js";
import type { Spelling } from "./spellings.js";

/** An array this long gets storage of its own, sized by a count of its elements in the text. */
const LONG_ARRAY = 1 << 12;

/** Nesting beyond this is refused: it bounds recursion here and in every later walk of the tree. */
export const MAX_NESTING = 1000;

export interface ReadOptions {
  /**
   * Arrays that are read as objects: for an array of `count` elements at `path`, the spelling that
   * makes its object, or undefined to keep the array (see `listItemSpelling`). Such arrays are
   * array items; their list records which items they are in the positions, for `locate`.
   */
  readonly spelling?: (path: readonly (string | number)[], count: number) => Spelling | undefined;
}

export interface ReadDocument {
  readonly value: Record<string, unknown>;
  readonly positions: SourcePositions;
}

/** A syntax error ends the parse; it never leaves this module. */
class SyntaxStop {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

class Parser {
  readonly text: string;
  readonly positions: SourcePositions;
  readonly problems: Array<{ code: string; offset: number; path: string; message: string }> = [];
  readonly path: Array<string | number> = [];
  /** The elements of the arrays being read, innermost last. */
  readonly elements: unknown[] = [];
  pos = 0;
  depth = 0;
  /** Whether a long array's elements are being counted (see parseArray). */
  counting = false;
  /** The keys of the object the array just read was made into (for its list to record). */
  spelled: readonly string[] | undefined;

  constructor(
    text: string,
    readonly options: ReadOptions,
  ) {
    this.text = text;
    this.positions = new SourcePositions(text);
  }

  pointer(extra?: string): string {
    let p = "";
    for (const t of this.path) p += `/${pointerToken(t)}`;
    return extra === undefined ? p : `${p}/${pointerToken(extra)}`;
  }

  report(code: string, offset: number, message: string, extra?: string): void {
    this.problems.push({ code, offset, path: this.pointer(extra), message });
  }

  skipWs(): void {
    const t = this.text;
    let i = this.pos;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.pos = i;
  }

  parseValue(): unknown {
    this.skipWs();
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case 0x7b:
        return this.parseObject();
      case 0x5b:
        return this.parseArray();
      case 0x22:
        return this.parseStringValue();
      case 0x74:
        return this.literal("true", true);
      case 0x66:
        return this.literal("false", false);
      case 0x6e:
        return this.literal("null", null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.parseNumber();
        throw new SyntaxStop(this.pos, this.unexpected("a value"));
    }
  }

  unexpected(wanted: string): string {
    if (this.pos >= this.text.length) return `unexpected end of input; expected ${wanted}`;
    const cp = this.text.codePointAt(this.pos) as number;
    const shown =
      cp < 0x20 || cp > 0x7e
        ? `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`
        : String.fromCodePoint(cp);
    return `unexpected ${JSON.stringify(shown)}; expected ${wanted}`;
  }

  literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos))
      throw new SyntaxStop(this.pos, this.unexpected("a value"));
    this.pos += word.length;
    return value;
  }

  enter(): void {
    if (++this.depth > MAX_NESTING) {
      throw new SyntaxStop(this.pos, `nesting deeper than ${MAX_NESTING} levels`);
    }
  }

  parseObject(): Record<string, unknown> {
    this.enter();
    this.pos++;
    const obj: Record<string, unknown> = {};
    this.skipWs();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      this.depth--;
      return obj;
    }
    for (;;) {
      this.skipWs();
      if (this.text.charCodeAt(this.pos) !== 0x22) {
        throw new SyntaxStop(this.pos, this.unexpected("a string key"));
      }
      const keyAt = this.pos;
      const key = this.parseString();
      if (LONE_SURROGATE.test(key)) {
        this.report(
          "definition/lone-surrogate",
          keyAt,
          "key contains a lone UTF-16 surrogate; write the character it was meant to be",
          key.replace(/[\uD800-\uDFFF]/gu, "\uFFFD"),
        );
      }
      this.skipWs();
      if (this.text.charCodeAt(this.pos) !== 0x3a)
        throw new SyntaxStop(this.pos, this.unexpected("':'"));
      this.pos++;
      const duplicate = Object.hasOwn(obj, key);
      if (duplicate) {
        this.report(
          "definition/duplicate-key",
          keyAt,
          `duplicate key ${JSON.stringify(key)}; keep one`,
          key,
        );
      }
      this.path.push(key);
      const value = this.parseValue();
      this.path.pop();
      if (!duplicate) {
        if (key === "__proto__") {
          Object.defineProperty(obj, key, {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        } else {
          obj[key] = value;
        }
      }
      this.skipWs();
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x2c) {
        this.pos++;
        continue;
      }
      if (c === 0x7d) {
        this.pos++;
        break;
      }
      throw new SyntaxStop(this.pos, this.unexpected("',' or '}'"));
    }
    this.depth--;
    return obj;
  }

  /**
   * Elements are gathered on one stack shared by every open array and copied out at the closing
   * bracket: an array grown by push keeps spare capacity (a two-element array would hold room for
   * seventeen), which a long list of short arrays would carry to the end. An array that reaches
   * LONG_ARRAY elements gets its own storage instead, sized by a count of its elements in the
   * text (one such count at a time, so the counting stays linear in the text).
   */
  parseArray(): unknown {
    this.enter();
    this.pos++;
    this.skipWs();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      this.depth--;
      return [];
    }
    const stack = this.elements;
    const start = stack.length;
    let own: unknown[] | undefined;
    let n = 0;
    /** Items made objects from array spellings: one bit each, and their keys. */
    let spelledBits: Uint8Array | undefined;
    let spelledKeys: readonly string[] | undefined;
    for (;;) {
      this.skipWs();
      if (n === LONG_ARRAY && !this.counting) {
        this.counting = true;
        own = new Array(n + countElements(this.text, this.pos));
        for (let i = 0; i < n; i++) own[i] = stack[start + i];
        stack.length = start;
      }
      this.path.push(n);
      const value = this.parseValue();
      if (this.spelled !== undefined) {
        spelledKeys = this.spelled;
        this.spelled = undefined;
        spelledBits = withBit(spelledBits, n);
      }
      if (own === undefined) stack.push(value);
      else if (n < own.length) own[n] = value;
      else own.push(value);
      n++;
      this.path.pop();
      this.skipWs();
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x2c) {
        this.pos++;
        continue;
      }
      if (c === 0x5d) {
        this.pos++;
        break;
      }
      throw new SyntaxStop(this.pos, this.unexpected("',' or ']'"));
    }
    this.depth--;
    if (own !== undefined) {
      this.counting = false;
      if (n < own.length) own.length = n;
    } else {
      const spelling = this.options.spelling?.(this.path, n);
      if (spelling !== undefined) {
        const obj = spelling.make(stack, start);
        stack.length = start;
        this.spelled = spelling.keys;
        return obj;
      }
    }
    const arr = own ?? stack.slice(start);
    stack.length = start;
    if (spelledBits !== undefined && spelledKeys !== undefined)
      this.positions.recordRewrittenItems(arr, spelledKeys, spelledBits);
    return arr;
  }

  parseStringValue(): string {
    const at = this.pos;
    const s = this.parseString();
    if (LONE_SURROGATE.test(s)) {
      this.report(
        "definition/lone-surrogate",
        at,
        "string contains a lone UTF-16 surrogate; write the character it was meant to be",
      );
    }
    return s;
  }

  /** At an opening quote; returns the decoded string. Surrogates are checked by the caller. */
  parseString(): string {
    const t = this.text;
    const start = this.pos + 1;
    let i = start;
    // Fast path: no escapes.
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x22) {
        this.pos = i + 1;
        return t.slice(start, i);
      }
      if (c === 0x5c) break;
      if (c < 0x20 || Number.isNaN(c)) this.badStringChar(i);
      i++;
    }
    let out = t.slice(start, i);
    let chunk = i;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x22) {
        out += t.slice(chunk, i);
        this.pos = i + 1;
        return out;
      }
      if (c === 0x5c) {
        out += t.slice(chunk, i);
        const e = t.charCodeAt(i + 1);
        switch (e) {
          case 0x22:
            out += '"';
            break;
          case 0x5c:
            out += "\\";
            break;
          case 0x2f:
            out += "/";
            break;
          case 0x62:
            out += "\b";
            break;
          case 0x66:
            out += "\f";
            break;
          case 0x6e:
            out += "\n";
            break;
          case 0x72:
            out += "\r";
            break;
          case 0x74:
            out += "\t";
            break;
          case 0x75: {
            const hex = t.slice(i + 2, i + 6);
            if (!/^[0-9A-Fa-f]{4}$/.test(hex)) {
              throw new SyntaxStop(i, "a \\u escape needs four hexadecimal digits");
            }
            out += String.fromCharCode(Number.parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            throw new SyntaxStop(i, "invalid escape in string");
        }
        i += 2;
        chunk = i;
        continue;
      }
      if (c < 0x20 || Number.isNaN(c)) this.badStringChar(i);
      i++;
    }
  }

  badStringChar(i: number): never {
    if (i >= this.text.length) throw new SyntaxStop(i, "unterminated string");
    throw new SyntaxStop(i, "control character in string; escape it");
  }

  parseNumber(): number {
    const t = this.text;
    const start = this.pos;
    let i = start;
    if (t.charCodeAt(i) === 0x2d) i++;
    const first = t.charCodeAt(i);
    if (first === 0x30) i++;
    else if (first >= 0x31 && first <= 0x39) i = digits(t, i);
    else throw new SyntaxStop(i, "a number needs digits");
    if (t.charCodeAt(i) === 0x2e) {
      const j = digits(t, i + 1);
      if (j === i + 1) throw new SyntaxStop(j, "a fraction needs digits");
      i = j;
    }
    const e = t.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const s = t.charCodeAt(i);
      if (s === 0x2b || s === 0x2d) i++;
      const j = digits(t, i);
      if (j === i) throw new SyntaxStop(j, "an exponent needs digits");
      i = j;
    }
    this.pos = i;
    const value = Number(t.slice(start, i));
    // Integral values beyond the safe range (including those that overflow to infinity) would be
    // rounded by every consumer that reads JSON into doubles.
    if (
      (Number.isInteger(value) || !Number.isFinite(value)) &&
      Math.abs(value) > Number.MAX_SAFE_INTEGER
    ) {
      this.report(
        "definition/unsafe-integer",
        start,
        `integer ${t.slice(start, i)} is outside ±(2^53−1) and cannot be read exactly; write it as a string`,
      );
    }
    return value;
  }
}

/**
 * The elements from `from` (an element's start) to the closing bracket of the array that holds
 * it: its commas outside strings and nested values, plus one. Only a size for storage: a text that
 * is not well formed is refused by the parse itself.
 */
function countElements(t: string, from: number): number {
  let n = 1;
  let depth = 0;
  for (let i = from; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < t.length; i++) {
        const d = t.charCodeAt(i);
        if (d === 0x22) break;
        if (d === 0x5c) i++;
      }
    } else if (c === 0x5b || c === 0x7b) depth++;
    else if (c === 0x5d || c === 0x7d) {
      if (depth === 0) return n;
      depth--;
    } else if (c === 0x2c && depth === 0) n++;
  }
  return n;
}

/** `bits` with bit `i` set, grown (doubled) when too short. */
function withBit(bits: Uint8Array | undefined, i: number): Uint8Array {
  let out = bits ?? new Uint8Array(8);
  const at = i >> 3;
  if (at >= out.length) {
    const grown = new Uint8Array(Math.max(out.length * 2, at + 1));
    grown.set(out);
    out = grown;
  }
  out[at] = (out[at] ?? 0) | (1 << (i & 7));
  return out;
}

function digits(t: string, from: number): number {
  let i = from;
  for (;;) {
    const c = t.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) i++;
    else return i;
  }
}

/** Parses a definition document: the value tree with its source positions, or every problem found. */
export function readDocument(text: string, options: ReadOptions = {}): Result<ReadDocument> {
  const p = new Parser(text, options);
  let value: unknown;
  try {
    value = p.parseValue();
    p.skipWs();
    if (p.pos < text.length) throw new SyntaxStop(p.pos, p.unexpected("end of input"));
  } catch (e) {
    if (!(e instanceof SyntaxStop)) throw e;
    const at = p.positions.lineColumn(e.offset);
    return fail([
      {
        code: "definition/json",
        path: p.pointer(),
        message: `malformed JSON: ${e.message}`,
        ...at,
      },
    ]);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return fail([
      {
        code: "definition/json",
        path: "",
        message: "the document must be a JSON object",
        ...p.positions.lineColumn(firstNonWs(text)),
      },
    ]);
  }
  if (p.problems.length > 0) {
    const problems: Problem[] = p.problems.map((q) => ({
      code: q.code,
      path: q.path,
      message: q.message,
      ...p.positions.lineColumn(q.offset),
    }));
    return fail(problems);
  }
  return ok({ value: value as Record<string, unknown>, positions: p.positions });
}

function firstNonWs(text: string): number {
  const m = /[^ \t\r\n]/.exec(text);
  return m === null ? 0 : m.index;
}

/** The strict reader: the parsed document, or its `definition/json`, `duplicate-key`, … problems. */
export function readDefinition(text: string): Result<unknown> {
  const r = readDocument(text);
  return r.ok ? ok(r.value.value) : r;
}
