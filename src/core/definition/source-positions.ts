// Where a problem sits in the author's text. A JSON Pointer into the rewritten tree maps back to the
// pointer the author wrote (array spellings keep their indices) and, by a scan of the text along that
// pointer, to a line and column. Nothing is recorded per value while parsing: the scan runs only for
// reported problems, and only for the first MAX_LOCATED of them (each scan is linear in the text).
import { pointerToken } from "../result.js";

export interface Location {
  /** The pointer as the author wrote it. */
  readonly path: string;
  readonly line?: number;
  readonly column?: number;
}

/** Problems beyond this many keep their pointer but get no line and column. */
export const MAX_LOCATED = 64;

export class SourcePositions {
  readonly #text: string;
  #lineStarts: number[] | undefined;
  #located = 0;
  #last: { line: number; offset: number; column: number } | undefined;
  /**
   * Objects rewritten from array spellings, with their key lists (`keys[i]` was element `i`): list
   * items by their list, one bit per item (a list of a million rewritten models costs 125 kB, not
   * a million map entries); any other object by itself.
   */
  readonly #rewrittenItems = new WeakMap<object, { keys: readonly string[]; bits: Uint8Array }>();
  readonly #rewritten = new WeakMap<object, readonly string[]>();

  constructor(text: string) {
    this.#text = text;
  }

  /** `holder[key]` is now `obj`, built from an array spelling: `keys[i]` was element `i`. */
  recordRewrite(holder: object, key: string | number, obj: object, keys: readonly string[]): void {
    if (!Array.isArray(holder) || typeof key !== "number") {
      this.#rewritten.set(obj, keys);
      return;
    }
    let items = this.#rewrittenItems.get(holder);
    if (items === undefined || items.keys !== keys) {
      // One list holds one kind of struct; a second kind (never made by the rewriter) is kept apart.
      if (items !== undefined) {
        this.#rewritten.set(obj, keys);
        return;
      }
      items = { keys, bits: new Uint8Array((holder.length + 7) >> 3) };
      this.#rewrittenItems.set(holder, items);
    }
    const at = key >> 3;
    if (at < items.bits.length) items.bits[at] = (items.bits[at] ?? 0) | (1 << (key & 7));
    else this.#rewritten.set(obj, keys);
  }

  /**
   * The items of `list` whose bit is set in `bits` (item i: bit i % 8 of byte i / 8) were built
   * from array spellings with `keys`.
   */
  recordRewrittenItems(list: readonly unknown[], keys: readonly string[], bits: Uint8Array): void {
    this.#rewrittenItems.set(list, { keys, bits });
  }

  /** The key list of an object rewritten from an array spelling (`child` is `holder[token]`). */
  #keysOf(holder: object, token: string, child: object): readonly string[] | undefined {
    const own = this.#rewritten.get(child);
    if (own !== undefined) return own;
    const items = this.#rewrittenItems.get(holder);
    if (items === undefined || !/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
    const i = Number(token);
    return i < items.bits.length * 8 && ((items.bits[i >> 3] as number) & (1 << (i & 7))) !== 0
      ? items.keys
      : undefined;
  }

  /**
   * Line and column (1-based; columns count code points, as editors show them). Calls with
   * ascending offsets on one line continue from the previous answer, so reporting every problem of
   * a long single-line document stays linear.
   */
  lineColumn(offset: number): { line: number; column: number } {
    const starts = this.#lines();
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    const start = starts[lo] as number;
    const last = this.#last;
    let from = start;
    let column = 1;
    if (last !== undefined && last.line === lo && last.offset <= offset) {
      from = last.offset;
      column = last.column;
    }
    for (let i = from; i < offset; i++) {
      const c = this.#text.charCodeAt(i);
      const pairedLow =
        c >= 0xdc00 && c <= 0xdfff && i > start && isHigh(this.#text.charCodeAt(i - 1));
      if (!pairedLow) column++;
    }
    this.#last = { line: lo, offset, column };
    return { line: lo + 1, column };
  }

  /** Maps a pointer into `root` (the rewritten tree) to the author's pointer and position. */
  locate(root: unknown, pointer: string): Location {
    const tokens = pointer === "" ? [] : pointer.slice(1).split("/").map(unescapeToken);
    const written: string[] = [];
    let cur: unknown = root;
    let keys: readonly string[] | undefined;
    for (const token of tokens) {
      const isObj = cur !== null && typeof cur === "object" && !Array.isArray(cur);
      const index = isObj && keys !== undefined ? keys.indexOf(token) : -1;
      written.push(index < 0 ? token : String(index));
      const holder = cur;
      cur =
        cur !== null && typeof cur === "object" && Object.hasOwn(cur, token)
          ? (cur as Record<string, unknown>)[token]
          : undefined;
      keys =
        cur !== null && typeof cur === "object"
          ? this.#keysOf(holder as object, token, cur)
          : undefined;
    }
    const path = written.map((t) => `/${pointerToken(t)}`).join("");
    if (this.#located >= MAX_LOCATED) return { path };
    this.#located++;
    return { path, ...this.lineColumn(offsetOf(this.#text, written)) };
  }

  #lines(): number[] {
    if (this.#lineStarts !== undefined) return this.#lineStarts;
    const starts = [0];
    const text = this.#text;
    let i = text.indexOf("\n");
    while (i !== -1) {
      starts.push(i + 1);
      i = text.indexOf("\n", i + 1);
    }
    this.#lineStarts = starts;
    return starts;
  }
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function unescapeToken(t: string): string {
  return t.replaceAll("~1", "/").replaceAll("~0", "~");
}

// A scan over text the strict reader has already accepted (so it is well-formed JSON without
// duplicate keys); the bounds checks only keep a misuse from looping.

function ws(t: string, i: number): number {
  let j = i;
  for (;;) {
    const c = t.charCodeAt(j);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) j++;
    else return j;
  }
}

function skipString(t: string, i: number): number {
  let j = i + 1;
  while (j < t.length) {
    const c = t.charCodeAt(j);
    if (c === 0x22) return j + 1;
    j += c === 0x5c ? 2 : 1;
  }
  return t.length;
}

function skipValue(t: string, i: number): number {
  const c = t.charCodeAt(i);
  if (c === 0x22) return skipString(t, i);
  if (c !== 0x7b && c !== 0x5b) {
    let j = i;
    while (j < t.length && !",}] \t\r\n".includes(t.charAt(j))) j++;
    return j;
  }
  let depth = 0;
  let j = i;
  while (j < t.length) {
    const d = t.charCodeAt(j);
    if (d === 0x22) {
      j = skipString(t, j);
      continue;
    }
    if (d === 0x7b || d === 0x5b) depth++;
    else if (d === 0x7d || d === 0x5d) {
      depth--;
      if (depth === 0) return j + 1;
    }
    j++;
  }
  return t.length;
}

/** Offset of the member's key (objects) or the element's value (arrays) at the deepest match. */
function offsetOf(t: string, tokens: readonly string[]): number {
  let i = ws(t, 0);
  let best = i;
  for (const token of tokens) {
    const c = t.charCodeAt(i);
    let found = false;
    if (c === 0x7b) {
      i = ws(t, i + 1);
      while (i < t.length && t.charCodeAt(i) === 0x22) {
        const keyAt = i;
        const end = skipString(t, i);
        const raw = t.slice(i + 1, end - 1);
        const key = raw.includes("\\") ? (JSON.parse(t.slice(i, end)) as string) : raw;
        i = ws(t, ws(t, end) + 1);
        if (key === token) {
          best = keyAt;
          found = true;
          break;
        }
        i = ws(t, skipValue(t, i));
        if (t.charCodeAt(i) !== 0x2c) break;
        i = ws(t, i + 1);
      }
    } else if (c === 0x5b && /^(0|[1-9][0-9]*)$/.test(token)) {
      const index = Number(token);
      i = ws(t, i + 1);
      for (let n = 0; i < t.length && t.charCodeAt(i) !== 0x5d; n++) {
        if (n === index) {
          best = i;
          found = true;
          break;
        }
        i = ws(t, skipValue(t, i));
        if (t.charCodeAt(i) !== 0x2c) break;
        i = ws(t, i + 1);
      }
    }
    if (!found) break;
  }
  return best;
}
