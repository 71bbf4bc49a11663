// A pack's `dependencies` (workspace folders every environment contains as they are on the host)
// and `toolchains` (host folders bound read-only at the same path): the rules on their paths that
// need no file system. Whether they exist, and what they resolve to, is the pack reader's part.
import type { Problem } from "../result.js";
import type { Glob } from "./glob.js";
import { normaliseRelativePath } from "./relative-path.js";

/**
 * Top-level folders of a Linux system. A toolchain is never one of them (nor `/`): binding one would
 * hand the sandbox a whole part of the host.
 */
export const SYSTEM_TOP_FOLDERS: readonly string[] = [
  "bin",
  "boot",
  "dev",
  "etc",
  "home",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "media",
  "mnt",
  "opt",
  "proc",
  "root",
  "run",
  "sbin",
  "snap",
  "srv",
  "sys",
  "tmp",
  "usr",
  "var",
];

/** Kernel file systems: nothing under them is a toolchain. */
const KERNEL_TOP_FOLDERS: ReadonlySet<string> = new Set(["proc", "sys", "dev"]);

/**
 * Why an absolute, normalised host path may not be a toolchain, or undefined when it may: `/`, a
 * top-level system folder, a home folder itself (`/root`, `/home/NAME`, or `home` when given), or a
 * path under `/proc`, `/sys` or `/dev`.
 */
export function toolchainForbiddenWhy(abs: string, home?: string): string | undefined {
  const parts = abs.split("/").slice(1);
  const top = parts[0] ?? "";
  if (abs === "/" || top === "") return "it is the root folder";
  if (parts.length === 1 && SYSTEM_TOP_FOLDERS.includes(top))
    return `${abs} is a top-level system folder`;
  if (KERNEL_TOP_FOLDERS.has(top)) return `${abs} is under /${top}, a kernel file system`;
  if (parts.length === 2 && top === "home") return `${abs} is a home folder`;
  if (home !== undefined && abs === home) return `${abs} is the home folder`;
  return undefined;
}

/** True when `inner` is `outer` or inside it (both absolute and normalised). */
export function pathWithin(inner: string, outer: string): boolean {
  return inner === outer || outer === "/" || inner.startsWith(`${outer}/`);
}

function isNormalisedAbsolute(p: string): boolean {
  if (!p.startsWith("/") || p.includes("\0") || p.includes("\\")) return false;
  if (p === "/") return true;
  return p
    .slice(1)
    .split("/")
    .every((s) => s !== "" && s !== "." && s !== "..");
}

export interface PackPaths {
  readonly dependencies: readonly string[];
  readonly toolchains: readonly string[];
  readonly problems: readonly Problem[];
}

/**
 * Checks `dependencies` (at `/dependencies/N`) and `toolchains` (at `/toolchains/N`). Codes:
 * `taskpack/dependency-outside` (absolute, or a `..` segment), `taskpack/dependency-invalid`
 * (empty, NUL, backslash, the workspace itself, inside `.git`), `taskpack/dependency-overlap` (a
 * folder listed twice, or inside another listed one); `taskpack/toolchain-path` (not an absolute
 * path in normal form), `taskpack/toolchain-forbidden` (see toolchainForbiddenWhy),
 * `taskpack/toolchain-overlap`. A dependency's trailing `/` is dropped.
 */
export function checkPackPaths(
  dependencies: readonly string[],
  toolchains: readonly string[],
): PackPaths {
  const problems: Problem[] = [];
  const deps: string[] = [];
  for (const [i, raw] of dependencies.entries()) {
    const at = `/dependencies/${i}`;
    const n = normaliseRelativePath(raw.endsWith("/") ? raw.slice(0, -1) : raw);
    if (!n.ok) {
      const reason = (n.errors[0]?.detail as { reason?: string } | undefined)?.reason;
      const outside = reason === "absolute" || reason === "dot-dot";
      problems.push({
        code: outside ? "taskpack/dependency-outside" : "taskpack/dependency-invalid",
        path: at,
        message: outside
          ? `the dependency ${JSON.stringify(raw)} is not inside the workspace: name a folder relative to it`
          : `the dependency ${JSON.stringify(raw)} is not a folder of the workspace: ${n.errors[0]?.message ?? ""}`,
      });
      continue;
    }
    const clash = deps.find(
      (d) => d === n.value || n.value.startsWith(`${d}/`) || d.startsWith(`${n.value}/`),
    );
    if (clash !== undefined) {
      problems.push({
        code: "taskpack/dependency-overlap",
        path: at,
        message:
          clash === n.value
            ? `the dependency ${n.value} is listed twice`
            : `the dependencies ${clash} and ${n.value} overlap: list only the outer one`,
      });
      continue;
    }
    deps.push(n.value);
  }
  const tools: string[] = [];
  for (const [i, raw] of toolchains.entries()) {
    const at = `/toolchains/${i}`;
    if (!isNormalisedAbsolute(raw)) {
      problems.push({
        code: "taskpack/toolchain-path",
        path: at,
        message: `the toolchain ${JSON.stringify(raw)} is not an absolute path in normal form (no "..", ".", "//" or trailing "/")`,
      });
      continue;
    }
    const why = toolchainForbiddenWhy(raw);
    if (why !== undefined) {
      problems.push({
        code: "taskpack/toolchain-forbidden",
        path: at,
        message: `the toolchain ${raw} may not be bound into the sandbox: ${why}; name the toolchain's own folder`,
      });
      continue;
    }
    if (tools.includes(raw)) {
      problems.push({
        code: "taskpack/toolchain-overlap",
        path: at,
        message: `the toolchain ${raw} is listed twice`,
      });
      continue;
    }
    tools.push(raw);
  }
  return { dependencies: deps, toolchains: tools, problems };
}

/** What a dependency folder adds to `ignore`: everything under it (its path taken literally). */
export function dependencyGlob(dep: string): Glob {
  return {
    source: `${dep}/**`,
    matches: (p: string) => p === dep || p.startsWith(`${dep}/`),
  };
}
