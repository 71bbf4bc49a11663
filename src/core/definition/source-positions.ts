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
  /** For objects rewritten from array spellings: usual key → the index the author wrote. */
  readonly #renames = new WeakMap<object, ReadonlyMap<string, string>>();
  /** One rename map per key list: the spellings' key lists are constants shared by every rewrite. */
  readonly #renameMaps = new WeakMap<readonly string[], ReadonlyMap<string, string>>();

  constructor(text: string) {
    this.#text = text;
  }

  /** An object built from an array spelling: `keys[i]` was element `i`. */
  recordRewrite(obj: object, keys: readonly string[]): void {
    let renames = this.#renameMaps.get(keys);
    if (renames === undefined) {
      renames = new Map(keys.map((k, i) => [k, String(i)]));
      this.#renameMaps.set(keys, renames);
    }
    this.#renames.set(obj, renames);
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
    for (const token of tokens) {
      const isObj = cur !== null && typeof cur === "object" && !Array.isArray(cur);
      written.push((isObj && this.#renames.get(cur as object)?.get(token)) || token);
      cur =
        cur !== null && typeof cur === "object" && Object.hasOwn(cur, token)
          ? (cur as Record<string, unknown>)[token]
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
