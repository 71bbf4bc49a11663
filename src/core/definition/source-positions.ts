// Where each value of a parsed document came from: offsets kept beside the value tree (keyed by
// container identity), so a JSON Pointer into the value — even after alternate spellings were
// rewritten — maps back to the pointer the author wrote and to a line and column.
import { pointerToken } from "../result.js";

export interface Location {
  /** The pointer as the author wrote it (array spellings keep their indices). */
  readonly path: string;
  readonly line?: number;
  readonly column?: number;
}

export class SourcePositions {
  readonly #text: string;
  #lineStarts: number[] | undefined;
  /** Object member → offset of its key; array element → offset of its value. */
  readonly #offsets = new WeakMap<object, Map<string, number> | number[]>();
  /** For objects rewritten from array spellings: usual key → the token the author wrote. */
  readonly #renames = new WeakMap<object, ReadonlyMap<string, string>>();

  constructor(text: string) {
    this.#text = text;
  }

  recordObject(obj: object, members: Map<string, number>): void {
    this.#offsets.set(obj, members);
  }

  recordArray(arr: readonly unknown[], offsets: number[]): void {
    this.#offsets.set(arr, offsets);
  }

  /** An object built from an array spelling: `keys[i]` was element `i` of `source`. */
  recordRewrite(obj: object, source: readonly unknown[], keys: readonly string[]): void {
    const offsets = this.#offsets.get(source);
    const members = new Map<string, number>();
    const renames = new Map<string, string>();
    keys.forEach((key, i) => {
      const at = Array.isArray(offsets) ? offsets[i] : undefined;
      if (at !== undefined) members.set(key, at);
      renames.set(key, String(i));
    });
    this.#offsets.set(obj, members);
    this.#renames.set(obj, renames);
  }

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
    // Columns count code points, as editors show them.
    let column = 1;
    for (let i = start; i < offset; i++) {
      const c = this.#text.charCodeAt(i);
      const pairedLow =
        c >= 0xdc00 && c <= 0xdfff && i > start && isHigh(this.#text.charCodeAt(i - 1));
      if (!pairedLow) column++;
    }
    return { line: lo + 1, column };
  }

  /** Maps a pointer into `root` (the rewritten tree) to the author's pointer and position. */
  locate(root: unknown, pointer: string): Location {
    const tokens = pointer === "" ? [] : pointer.slice(1).split("/").map(unescapeToken);
    const written: string[] = [];
    let offset: number | undefined;
    let cur: unknown = root;
    let known = true;
    for (const token of tokens) {
      if (!known || cur === null || typeof cur !== "object") {
        known = false;
        written.push(token);
        continue;
      }
      const offsets = this.#offsets.get(cur);
      if (Array.isArray(cur)) {
        const i = /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : -1;
        if (i < 0 || i >= cur.length) {
          known = false;
          written.push(token);
          continue;
        }
        const at = Array.isArray(offsets) ? offsets[i] : undefined;
        if (at !== undefined) offset = at;
        written.push(token);
        cur = cur[i];
      } else {
        const rec = cur as Record<string, unknown>;
        written.push(this.#renames.get(cur)?.get(token) ?? token);
        if (!Object.hasOwn(rec, token)) {
          known = false;
          continue;
        }
        const at = offsets instanceof Map ? offsets.get(token) : undefined;
        if (at !== undefined) offset = at;
        cur = rec[token];
      }
    }
    const path = written.map((t) => `/${pointerToken(t)}`).join("");
    if (offset === undefined) return { path };
    return { path, ...this.lineColumn(offset) };
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
