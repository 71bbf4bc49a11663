// What a pack lets commands leave behind without it counting as a change (`ignore`), and the rule
// that keeps secrets out of a command profile's `env`.
import { compileGlob, type Glob, matchesAny } from "./glob.js";
import type { SnapshotDiff } from "./snapshot-diff.js";

/** The pack's `ignore` when it says none: byte-code caches and tool caches. */
export const DEFAULT_IGNORE: readonly string[] = [
  "**/__pycache__/**",
  "**/*.pyc",
  "**/.pytest_cache/**",
  "**/node_modules/.cache/**",
];

/** A variable name that looks like it carries a credential: never set from a pack, never passed. */
export const CREDENTIAL_NAME = /KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION/i;

/** The default globs, compiled (they are well formed). */
export function defaultIgnore(): Glob[] {
  return DEFAULT_IGNORE.map((g) => {
    const c = compileGlob(g);
    if (!c.ok) throw new Error(`default ignore glob ${g} does not compile`);
    return c.value;
  });
}

/**
 * True when `path` is ignored. A glob ending in `/**` also matches at the top (`**\/x/**` matches
 * `x/a`), since `**` as the first segment matches zero segments.
 */
export function isIgnored(ignore: readonly Glob[], path: string): boolean {
  return matchesAny(ignore, path);
}

/** The diff without its ignored paths. */
export function withoutIgnored(diff: SnapshotDiff, ignore: readonly Glob[]): SnapshotDiff {
  const keep = (xs: readonly string[]) => xs.filter((p) => !isIgnored(ignore, p));
  return { added: keep(diff.added), removed: keep(diff.removed), changed: keep(diff.changed) };
}
