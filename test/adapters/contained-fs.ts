// Helpers for the tests of ContainedTree that reach it through `containedFs`, the object its
// file-system calls go through: a system without /proc, a call that fails once, a race run by
// "another process" just before a call.
import { readdirSync } from "node:fs";
import path from "node:path";
import { vi } from "vitest";
import { containedFs } from "../../src/adapters/fs/contained-tree.js";

/** The calls as they are, before any test wraps them. */
export const realFs = { ...containedFs };

type FsName = keyof typeof containedFs;

export function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code} (made by the test)`), { code });
}

/** Open descriptors of this process. */
export const fdCount = () => readdirSync("/proc/self/fd").length;

const underProc = (p: unknown) => typeof p === "string" && p.startsWith("/proc/");

/**
 * As on a system without /proc: every call given a path under /proc fails with ENOENT, so the
 * tree's probe finds none and it goes by full paths, checking each folder's identity.
 */
export function withoutProc(): void {
  for (const name of Object.keys(realFs) as FsName[]) {
    const real = realFs[name] as (...a: unknown[]) => Promise<unknown>;
    vi.spyOn(containedFs, name).mockImplementation(((...a: unknown[]) =>
      underProc(a[0]) ? Promise.reject(errno("ENOENT")) : real(...a)) as never);
  }
}

/**
 * What `containedFs[name]` does now: the call itself, or what a test made it do (`withoutProc`).
 * A test wraps this, not the spy: `vi.spyOn` on a spied call returns the same spy.
 */
export function currentCall<T = unknown>(name: FsName): (...a: unknown[]) => Promise<T> {
  const now = containedFs[name];
  return (vi.isMockFunction(now) ? now.getMockImplementation() : now) as (
    ...a: unknown[]
  ) => Promise<T>;
}

/**
 * Run `before` (another process acting) the first time `name` is called with a path whose last
 * name is `base`, then make the call (the current one: `withoutProc`'s when it was set up first).
 */
export function raceBefore(
  name: FsName,
  base: string,
  before: () => unknown,
  answer?: (...a: unknown[]) => Promise<unknown>,
): void {
  const current = currentCall(name);
  let done = false;
  vi.spyOn(containedFs, name).mockImplementation((async (...a: unknown[]) => {
    if (!done && path.basename(String(a[0])) === base) {
      done = true;
      await before();
      if (answer !== undefined) return answer(...a);
    }
    return current(...a);
  }) as never);
}
