// Unified diffs: parsing (headers and hunks) and pure application to a file's text.
import { fail, ok, type Problem, type Result } from "../result.js";
import { gitUnquotePath } from "../text/terminal-text.js";

export interface Hunk {
  readonly oldStart: number;
  readonly oldCount: number;
  readonly newStart: number;
  readonly newCount: number;
  /** Lines in order, each tagged: ' ' context, '-' removed, '+' added. */
  readonly lines: readonly { readonly tag: " " | "-" | "+"; readonly text: string }[];
  /** A `\ No newline at end of file` marker followed the old side's last line. */
  readonly oldNoFinalNewline: boolean;
  readonly newNoFinalNewline: boolean;
  /** 1-based line of the `@@` header in the diff text. */
  readonly line: number;
}

/** Extended git headers that a policy must see (mode changes, renames, binaries). */
export interface DiffHeaders {
  readonly gitPaths: readonly string[];
  readonly oldMode?: string;
  readonly newMode?: string;
  readonly newFileMode?: string;
  readonly deletedFileMode?: string;
  readonly renameOrCopy: boolean;
  readonly binary: boolean;
}

export interface ParsedDiff {
  /** Path from `---` with any `a/` prefix removed; null for `/dev/null` (a created file). */
  readonly oldPath: string | null;
  /** Path from `+++` with any `b/` prefix removed; null for `/dev/null` (a deleted file). */
  readonly newPath: string | null;
  readonly headers: DiffHeaders;
  readonly hunks: readonly Hunk[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function malformed(message: string, line?: number): Result<never> {
  const problem: Problem = {
    code: "patch/malformed",
    path: "",
    message,
    ...(line === undefined ? {} : { line }),
  };
  return fail([problem]);
}

/** A name in a header: quoted as git quotes it (`"a/na\303\257ve"`), or plain. */
const QUOTED_NAME = /^"(?:[^"\\]|\\.)*"/;
const GIT_HEADER = /^diff --git ("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$/;

/** The path a `---`/`+++` header names; null for /dev/null; undefined when its quoting is broken. */
function headerPath(raw: string, prefix: "a/" | "b/"): string | null | undefined {
  let name: string | undefined;
  const quoted = QUOTED_NAME.exec(raw);
  if (quoted !== null) {
    const rest = raw.slice(quoted[0].length);
    if (rest !== "" && !rest.startsWith("\t")) return undefined;
    name = gitUnquotePath(quoted[0]);
    if (name === undefined) return undefined;
  } else {
    // `--- a/path\t2024-01-01 …`: a tab ends the name (GNU diff timestamps).
    name = raw.split("\t")[0] as string;
    if (name.startsWith('"')) return undefined;
    if (name === "/dev/null") return null;
  }
  return name.startsWith(prefix) ? name.slice(2) : name;
}

/**
 * Parse a unified diff of exactly one file. Refused (`patch/malformed`): no `---`/`+++` pair, more
 * than one file, a hunk whose line counts disagree with its header, stray text between hunks.
 */
export function parseUnifiedDiff(diff: string): Result<ParsedDiff> {
  const lines = diff.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  let i = 0;
  const gitPaths: string[] = [];
  let oldMode: string | undefined;
  let newMode: string | undefined;
  let newFileMode: string | undefined;
  let deletedFileMode: string | undefined;
  let renameOrCopy = false;
  let binary = false;
  // Preamble: anything before `---`, where git puts its extended headers.
  while (i < lines.length && !(lines[i] as string).startsWith("--- ")) {
    const l = lines[i] as string;
    const git = GIT_HEADER.exec(l);
    if (git !== null) {
      if (gitPaths.length > 0) return malformed("a patch changes exactly one file", i + 1);
      const a = gitUnquotePath(git[1] as string);
      const b = gitUnquotePath(git[2] as string);
      if (a === undefined || b === undefined)
        return malformed("the diff --git line has a quoted name that is not well formed", i + 1);
      gitPaths.push(a, b);
    } else if (l.startsWith("old mode ")) oldMode = l.slice(9).trim();
    else if (l.startsWith("new mode ")) newMode = l.slice(9).trim();
    else if (l.startsWith("new file mode ")) newFileMode = l.slice(14).trim();
    else if (l.startsWith("deleted file mode ")) deletedFileMode = l.slice(18).trim();
    else if (/^(rename|copy) (from|to) |^similarity index |^dissimilarity index /.test(l)) {
      renameOrCopy = true;
    } else if (l.startsWith("Binary files ") || l === "GIT binary patch") binary = true;
    else if (l.startsWith("@@")) return malformed("a hunk comes before the ---/+++ headers", i + 1);
    i++;
  }
  const headers: DiffHeaders = {
    gitPaths,
    renameOrCopy,
    binary,
    ...(oldMode === undefined ? {} : { oldMode }),
    ...(newMode === undefined ? {} : { newMode }),
    ...(newFileMode === undefined ? {} : { newFileMode }),
    ...(deletedFileMode === undefined ? {} : { deletedFileMode }),
  };
  if (i >= lines.length) {
    if (gitPaths.length > 0) return ok({ oldPath: null, newPath: null, headers, hunks: [] });
    return malformed("no --- / +++ file headers");
  }
  const minus = lines[i] as string;
  const plus = lines[i + 1];
  if (plus === undefined || !plus.startsWith("+++ ")) {
    return malformed("--- is not followed by +++", i + 2);
  }
  const oldPath = headerPath(minus.slice(4), "a/");
  const newPath = headerPath(plus.slice(4), "b/");
  if (oldPath === undefined)
    return malformed("the --- line has a quoted name that is not well formed", i + 1);
  if (newPath === undefined)
    return malformed("the +++ line has a quoted name that is not well formed", i + 2);
  i += 2;
  const hunks: Hunk[] = [];
  while (i < lines.length) {
    const header = lines[i] as string;
    if (header.startsWith("--- ") || header.startsWith("diff --git ")) {
      return malformed("a patch changes exactly one file", i + 1);
    }
    const m = HUNK_HEADER.exec(header);
    if (m === null) return malformed(`expected a hunk header, found: ${header}`, i + 1);
    const oldStart = Number(m[1]);
    const oldCount = m[2] === undefined ? 1 : Number(m[2]);
    const newStart = Number(m[3]);
    const newCount = m[4] === undefined ? 1 : Number(m[4]);
    const headerLine = i + 1;
    i++;
    const body: { tag: " " | "-" | "+"; text: string }[] = [];
    let oldSeen = 0;
    let newSeen = 0;
    let oldNoFinalNewline = false;
    let newNoFinalNewline = false;
    while (i < lines.length && (oldSeen < oldCount || newSeen < newCount)) {
      const l = lines[i] as string;
      // Some tools write an empty context line without its leading space.
      const tag = l.length === 0 ? " " : l[0];
      if (tag === " " || tag === "-" || tag === "+") {
        body.push({ tag, text: l.slice(1) });
        if (tag !== "+") oldSeen++;
        if (tag !== "-") newSeen++;
      } else if (tag === "\\") {
        const prev = body[body.length - 1];
        if (prev === undefined) return malformed("a no-newline marker with no line", i + 1);
        if (prev.tag !== "+") oldNoFinalNewline = true;
        if (prev.tag !== "-") newNoFinalNewline = true;
      } else {
        return malformed(`hunk ends early at line ${i + 1} (${header})`, i + 1);
      }
      i++;
    }
    // A marker right after the last counted line belongs to this hunk.
    if (i < lines.length && (lines[i] as string).startsWith("\\")) {
      const prev = body[body.length - 1];
      if (prev !== undefined) {
        if (prev.tag !== "+") oldNoFinalNewline = true;
        if (prev.tag !== "-") newNoFinalNewline = true;
      }
      i++;
    }
    if (oldSeen !== oldCount || newSeen !== newCount) {
      return malformed(`hunk line counts disagree with its header (${header})`, headerLine);
    }
    hunks.push({
      oldStart,
      oldCount,
      newStart,
      newCount,
      lines: body,
      oldNoFinalNewline,
      newNoFinalNewline,
      line: headerLine,
    });
  }
  return ok({ oldPath, newPath, headers, hunks });
}

interface TextLines {
  readonly lines: string[];
  readonly finalNewline: boolean;
}

function splitText(text: string): TextLines {
  if (text === "") return { lines: [], finalNewline: true };
  const lines = text.split("\n");
  const finalNewline = lines[lines.length - 1] === "";
  if (finalNewline) lines.pop();
  return { lines, finalNewline };
}

function sameAt(haystack: readonly string[], at: number, needle: readonly string[]): boolean {
  if (at < 0 || at + needle.length > haystack.length) return false;
  for (let k = 0; k < needle.length; k++) if (haystack[at + k] !== needle[k]) return false;
  return true;
}

/**
 * Apply a parsed diff to a file's text (`null`: the file does not exist). Returns the new text, or
 * `null` when the diff deletes the file. Each hunk must match exactly (no fuzz); a hunk whose lines
 * are not at the stated position is looked for elsewhere after the previous hunk, nearest first.
 * Refusals: `patch/hunk-failed` (with the hunk's line in the diff), `patch/target-missing`,
 * `patch/target-exists`.
 */
export function applyParsedDiff(original: string | null, diff: ParsedDiff): Result<string | null> {
  if (diff.oldPath === null && original !== null) {
    return fail([
      { code: "patch/target-exists", path: "", message: "the diff creates a file that exists" },
    ]);
  }
  if (diff.oldPath !== null && original === null) {
    return fail([
      { code: "patch/target-missing", path: "", message: "the diff changes a file that is absent" },
    ]);
  }
  const old = splitText(original ?? "");
  const out: string[] = [];
  let pos = 0;
  let finalNewline = old.finalNewline;
  for (const [h, hunk] of diff.hunks.entries()) {
    const oldSide = hunk.lines.filter((l) => l.tag !== "+").map((l) => l.text);
    const newSide = hunk.lines.filter((l) => l.tag !== "-").map((l) => l.text);
    const expected = hunk.oldCount === 0 ? hunk.oldStart : hunk.oldStart - 1;
    let at = -1;
    for (let d = 0; at < 0 && (expected - d >= pos || expected + d <= old.lines.length); d++) {
      if (expected + d >= pos && sameAt(old.lines, expected + d, oldSide)) at = expected + d;
      else if (d > 0 && expected - d >= pos && sameAt(old.lines, expected - d, oldSide)) {
        at = expected - d;
      }
    }
    if (at < 0) {
      return fail([
        {
          code: "patch/hunk-failed",
          path: "",
          message: `hunk ${h + 1} (${hunk.oldStart},${hunk.oldCount}) does not apply`,
          line: hunk.line,
          detail: { hunk: h + 1 },
        },
      ]);
    }
    for (let k = pos; k < at; k++) out.push(old.lines[k] as string);
    out.push(...newSide);
    pos = at + oldSide.length;
    if (pos === old.lines.length) {
      if (hunk.oldNoFinalNewline === old.finalNewline && old.lines.length > 0) {
        return fail([
          {
            code: "patch/hunk-failed",
            path: "",
            message: `hunk ${h + 1} disagrees about the newline at end of file`,
            line: hunk.line,
            detail: { hunk: h + 1 },
          },
        ]);
      }
      finalNewline = !hunk.newNoFinalNewline;
    }
  }
  for (let k = pos; k < old.lines.length; k++) out.push(old.lines[k] as string);
  if (diff.newPath === null) {
    if (out.length > 0) {
      return fail([
        {
          code: "patch/hunk-failed",
          path: "",
          message: "the diff deletes the file but leaves lines in it",
        },
      ]);
    }
    return ok(null);
  }
  if (out.length === 0) return ok("");
  return ok(`${out.join("\n")}${finalNewline ? "\n" : ""}`);
}

/** Parse and apply in one go. */
export function applyUnifiedDiff(original: string | null, diff: string): Result<string | null> {
  const parsed = parseUnifiedDiff(diff);
  if (!parsed.ok) return parsed;
  return applyParsedDiff(original, parsed.value);
}
