// Waiting on a condition with a deadline, for tests that must use real time (real processes,
// browsers, servers): never a fixed sleep. A test that can run on warrant/testing's manualClock()
// advances that instead.

export interface WaitForOptions {
  /** Give up (and fail) after this long. */
  readonly timeoutMs: number;
  /** How often the condition is checked (default 20 ms). */
  readonly intervalMs?: number;
  /** What is awaited, for the failure's message. */
  readonly what?: string;
}

/**
 * Resolves once `condition` holds (a truthy result, which it resolves with); rejects when it has
 * not held by the deadline, or at once when it throws.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions,
): Promise<Exclude<T, false | 0 | "" | null | undefined>> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 20;
  for (;;) {
    const value = await condition();
    if (value) return value as Exclude<T, false | 0 | "" | null | undefined>;
    if (Date.now() >= deadline) {
      throw new Error(
        `timed out after ${options.timeoutMs} ms waiting for ${options.what ?? "a condition"}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
