// Normalisation of workspace-relative paths named by plans: the only form the host ever acts on.
import { fail, ok, type Result } from "../result.js";

/**
 * Normalise a workspace-relative path: `.` segments and repeated slashes are dropped. Refused:
 * empty, NUL, backslash, absolute (`/…` or a drive letter), any `..` segment, a trailing slash,
 * and any segment named `.git` (in any case: case-insensitive file systems). The reason is a
 * short machine-readable word in
 * `detail.reason`.
 */
export function normaliseRelativePath(raw: string): Result<string> {
  const refuse = (reason: RelativePathRefusal, message: string) =>
    fail<string>([{ code: "path/refused", path: "", message, detail: { reason } }]);
  if (raw.length === 0) return refuse("empty", "the path is empty");
  if (raw.includes("\0")) return refuse("nul", "the path contains NUL");
  if (raw.includes("\\")) return refuse("backslash", "the path contains a backslash");
  if (raw.startsWith("/") || /^[A-Za-z]:/.test(raw)) {
    return refuse("absolute", `the path is absolute: ${raw}`);
  }
  if (raw.endsWith("/")) return refuse("directory", `the path names a directory: ${raw}`);
  const parts: string[] = [];
  for (const seg of raw.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") return refuse("dot-dot", `the path leaves the workspace (..): ${raw}`);
    if (seg.toLowerCase() === ".git") return refuse("git", `the path is inside .git: ${raw}`);
    parts.push(seg);
  }
  if (parts.length === 0) return refuse("empty", `the path names the workspace itself: ${raw}`);
  return ok(parts.join("/"));
}

export type RelativePathRefusal =
  | "empty"
  | "nul"
  | "backslash"
  | "absolute"
  | "directory"
  | "dot-dot"
  | "git";
