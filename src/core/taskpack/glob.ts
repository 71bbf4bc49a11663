// Path globs for patch policies and verifier checks: `**`, `*`, `?` over `/`-separated relative paths.
import { fail, ok, type Result } from "../result.js";

/**
 * A compiled glob. Semantics: `*` matches any run of characters except `/`; `?` matches exactly
 * one character except `/`; `**` must be a whole segment and matches zero or more segments, except
 * as the last segment, where it matches one or more (so `src/**` matches what is inside `src`, not
 * a file named `src`). Everything else is literal and case-sensitive; there are no character
 * classes, braces or negations.
 */
export interface Glob {
  readonly source: string;
  matches(path: string): boolean;
}

type Segment = { readonly kind: "globstar" } | { readonly kind: "pattern"; readonly re: RegExp };

const FORBIDDEN = /[\\[\]{}\0]/;

/** Why a glob is refused, or undefined when it is well formed. */
export function globSyntaxError(source: string): string | undefined {
  if (source.length === 0) return "a glob is not empty";
  if (FORBIDDEN.test(source)) return "a glob has no backslash, brackets, braces or NUL";
  if (source.startsWith("/")) return "a glob is relative (no leading /)";
  for (const seg of source.split("/")) {
    if (seg === "") return "a glob has no empty segment (no //, no trailing /)";
    if (seg === "." || seg === "..") return "a glob has no . or .. segment";
    if (seg.includes("**") && seg !== "**") return "** is a whole segment";
  }
  return undefined;
}

function segmentRegExp(seg: string): RegExp {
  let re = "";
  for (const ch of seg) {
    if (ch === "*") re += "[^/]*";
    else if (ch === "?") re += "[^/]";
    else re += ch.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "u");
}

export function compileGlob(source: string): Result<Glob> {
  const why = globSyntaxError(source);
  if (why !== undefined) {
    return fail([{ code: "taskpack/glob-invalid", path: "", message: `${why}: ${source}` }]);
  }
  const segments: Segment[] = source
    .split("/")
    .map((s) => (s === "**" ? { kind: "globstar" } : { kind: "pattern", re: segmentRegExp(s) }));
  return ok({ source, matches: (path: string) => matchSegments(segments, 0, path.split("/"), 0) });
}

function matchSegments(
  pattern: readonly Segment[],
  pi: number,
  parts: readonly string[],
  si: number,
): boolean {
  if (pi === pattern.length) return si === parts.length;
  const seg = pattern[pi] as Segment;
  if (seg.kind === "globstar") {
    const last = pi === pattern.length - 1;
    if (last) return parts.length - si >= 1;
    for (let k = si; k <= parts.length; k++) {
      if (matchSegments(pattern, pi + 1, parts, k)) return true;
    }
    return false;
  }
  if (si >= parts.length) return false;
  return seg.re.test(parts[si] as string) && matchSegments(pattern, pi + 1, parts, si + 1);
}

/** True when any of the globs matches. Globs must already be valid (see compileGlob). */
export function matchesAny(globs: readonly Glob[], path: string): boolean {
  return globs.some((g) => g.matches(path));
}
