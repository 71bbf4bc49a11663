// Git-style unified diffs of whole files (pure): `diff --git a/P b/P`, the new/deleted file mode
// lines, `---`/`+++` (with /dev/null for a side that is absent), hunks with three lines of context
// found by Myers' shortest edit script, and `\ No newline at end of file` where a side lacks it.
// A side that is not UTF-8 text (or holds a NUL) is reported as binary. Paths are quoted as git
// quotes them (core.quotePath), so no file name can end a header line or start another.
import { gitQuotePath } from "../text/terminal-text.js";

export interface FileChange {
  readonly path: string;
  /** Null when the file is absent on that side (added: no before; deleted: no after). */
  readonly before: Uint8Array | null;
  readonly after: Uint8Array | null;
}

const CONTEXT = 3;
const NO_NEWLINE = "\\ No newline at end of file";
const decoder = new TextDecoder("utf-8", { fatal: true });

type Op = { readonly tag: " " | "-" | "+"; readonly text: string; readonly last: boolean };

/** The text of a side, or undefined when it is binary. */
function textOf(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

interface Lines {
  readonly lines: readonly string[];
  /** The last line has no newline after it. */
  readonly open: boolean;
}

function linesOf(text: string): Lines {
  if (text === "") return { lines: [], open: false };
  const lines = text.split("\n");
  const open = lines[lines.length - 1] !== "";
  if (!open) lines.pop();
  return { lines, open };
}

/** Myers' O((N+M)D) shortest edit script between two line lists. */
function editScript(a: readonly string[], b: readonly string[]): ("=" | "-" | "+")[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number))
          ? (v[offset + k + 1] as number)
          : (v[offset + k - 1] as number) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // Walk the trace back from (n, m).
  const ops: ("=" | "-" | "+")[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d] as Int32Array;
    const k = x - y;
    const down =
      k === -d || (k !== d && (vd[offset + k - 1] as number) < (vd[offset + k + 1] as number));
    const prevK = down ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : (vd[offset + prevK] as number);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push("=");
      x--;
      y--;
    }
    if (d > 0) {
      if (down) {
        ops.push("+");
        y--;
      } else {
        ops.push("-");
        x--;
      }
    }
  }
  return ops.reverse();
}

/** The hunks (`@@ … @@` and their lines) turning `before` into `after`; empty when equal. */
export function unifiedHunks(before: string, after: string): string[] {
  const a = linesOf(before);
  const b = linesOf(after);
  // A last line without its newline differs from the same line with one.
  const mark = (l: Lines) =>
    l.lines.map((t, i) => (l.open && i === l.lines.length - 1 ? `${t}\u0000` : t));
  const am = mark(a);
  const bm = mark(b);
  const script = editScript(am, bm);
  const ops: (Op & { ai: number; bi: number })[] = [];
  let ai = 0;
  let bi = 0;
  for (const s of script) {
    if (s === "=") {
      ops.push({ tag: " ", text: am[ai] as string, last: false, ai, bi });
      ai++;
      bi++;
    } else if (s === "-") {
      ops.push({ tag: "-", text: am[ai] as string, last: false, ai, bi });
      ai++;
    } else {
      ops.push({ tag: "+", text: bm[bi] as string, last: false, ai, bi });
      bi++;
    }
  }
  const out: string[] = [];
  let i = 0;
  while (i < ops.length) {
    while (i < ops.length && (ops[i] as Op).tag === " ") i++;
    if (i >= ops.length) break;
    const start = Math.max(0, i - CONTEXT);
    let end = i;
    // Extend while the next change is within 2 * CONTEXT unchanged lines.
    for (;;) {
      while (end < ops.length && (ops[end] as Op).tag !== " ") end++;
      let j = end;
      while (j < ops.length && (ops[j] as Op).tag === " ") j++;
      if (j < ops.length && j - end <= 2 * CONTEXT) end = j;
      else break;
    }
    const stop = Math.min(ops.length, end + CONTEXT);
    const part = ops.slice(start, stop);
    const first = part[0] as (typeof ops)[number];
    const oldCount = part.filter((o) => o.tag !== "+").length;
    const newCount = part.filter((o) => o.tag !== "-").length;
    const oldStart = oldCount === 0 ? first.ai : first.ai + 1;
    const newStart = newCount === 0 ? first.bi : first.bi + 1;
    out.push(`@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`);
    for (const o of part) {
      const open = o.text.endsWith("\u0000");
      out.push(`${o.tag}${open ? o.text.slice(0, -1) : o.text}`);
      if (open) out.push(NO_NEWLINE);
    }
    i = stop;
  }
  return out;
}

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${start},${count}`;
}

/** One file's git-style diff (ending in a newline), or "" when both sides are equal. */
export function fileDiff(change: FileChange): string {
  const { path, before, after } = change;
  const a = gitQuotePath(`a/${path}`);
  const b = gitQuotePath(`b/${path}`);
  const lines = [`diff --git ${a} ${b}`];
  if (before === null) lines.push("new file mode 100644");
  if (after === null) lines.push("deleted file mode 100644");
  const oldName = before === null ? "/dev/null" : a;
  const newName = after === null ? "/dev/null" : b;
  // As git writes them: a name holding a space ends with a tab on the `---`/`+++` lines.
  const tab = path.includes(" ") ? "\t" : "";
  const oldLabel = before === null ? oldName : `${oldName}${tab}`;
  const newLabel = after === null ? newName : `${newName}${tab}`;
  const beforeText = before === null ? "" : textOf(before);
  const afterText = after === null ? "" : textOf(after);
  if (beforeText === undefined || afterText === undefined) {
    lines.push(`Binary files ${oldName} and ${newName} differ`);
    return `${lines.join("\n")}\n`;
  }
  const hunks = unifiedHunks(beforeText, afterText);
  if (hunks.length === 0 && before !== null && after !== null) return "";
  if (hunks.length > 0) lines.push(`--- ${oldLabel}`, `+++ ${newLabel}`, ...hunks);
  return `${lines.join("\n")}\n`;
}

/** The diffs of several files, in the order given. */
export function unifiedDiff(changes: readonly FileChange[]): string {
  return changes.map(fileDiff).join("");
}
