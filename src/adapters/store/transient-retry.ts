// Retries of a store operation that failed for a passing reason (the database restarting, a lost
// connection, a serialization failure, a busy lock): exponential back-off with full jitter, for up
// to a window measured from the first failure. Each store says which errors pass.

/** The default window: `WARRANT_STORE_RETRY_MS` overrides it; 0 turns retries off. */
export const DEFAULT_STORE_RETRY_MS = 60_000;

export interface RetryOptions {
  /** How long after an operation's first transient failure it is still retried, in ms. */
  readonly windowMs?: number;
  /** Told of each transient failure that is retried (tests and diagnostics). */
  readonly onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  readonly operation: string;
  readonly attempt: number;
  readonly error: unknown;
  readonly delayMs: number;
}

/** What an attempt knows of those before it. */
export interface Attempt {
  readonly number: number;
  /**
   * A previous attempt failed after its statements may have reached the server: its writes may
   * have committed although no answer came back, so a refusal now may be that attempt's success.
   */
  readonly afterFailure: boolean;
}

const FIRST_DELAY_MS = 50;
const MAX_DELAY_MS = 1_000;

/** The window from the environment, or the default when unset, empty or not a number ≥ 0. */
export function storeRetryMs(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.WARRANT_STORE_RETRY_MS;
  if (raw === undefined || raw.trim() === "") return DEFAULT_STORE_RETRY_MS;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n >= 0 ? n : DEFAULT_STORE_RETRY_MS;
}

/**
 * The wait before retry number `attempt` (1 for the first): full jitter over an exponential bound
 * (50 ms, 100 ms, … capped at 1 s), never past the `leftMs` still in the window.
 */
export function retryDelayMs(attempt: number, leftMs: number): number {
  const bound = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(attempt - 1, 20));
  return Math.max(0, Math.min(leftMs, Math.random() * bound));
}

/**
 * Run `op` until it settles with something other than a transient error, or the window since its
 * first transient failure has passed (then that error is thrown).
 */
export async function retryTransient<T>(
  operation: string,
  options: RetryOptions,
  isTransient: (error: unknown) => boolean,
  op: (attempt: Attempt) => Promise<T>,
): Promise<T> {
  const windowMs = options.windowMs ?? DEFAULT_STORE_RETRY_MS;
  let firstFailure: number | undefined;
  for (let number = 1; ; number++) {
    try {
      return await op({ number, afterFailure: firstFailure !== undefined });
    } catch (error) {
      if (!isTransient(error)) throw error;
      const now = Date.now();
      firstFailure ??= now;
      const left = firstFailure + windowMs - now;
      if (left <= 0) throw error;
      const delayMs = retryDelayMs(number, left);
      options.onRetry?.({ operation, attempt: number, error, delayMs });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
