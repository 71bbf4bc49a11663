// The time ports: the loop's clock, and the process's timers and sleep. The core and the runtime
// never read time or start a timer themselves (test/time-ports.test.ts); `systemTime`
// (src/runtime/system-time.ts) is the real implementation, warrant/testing's `manualClock()` one a
// test advances.

/** The version of the time ports (`Clock`, `Timers`, `Sleep`, `Time`). */
export const TIME_PORT_VERSION = "v1";

/** The clock: the core never reads time itself; the runtime passes `now` in. */
export interface Clock {
  now(): Date;
}

/** A timer started by `Timers`; `cancel()` stops it (doing nothing once it fired or was cancelled). */
export interface Timer {
  cancel(): void;
}

/**
 * Timers: the runtime never starts one itself. `after(ms, fn)` calls `fn` once, `ms` from now;
 * `every(ms, fn)` calls it every `ms` until cancelled. A system timer does not keep the process
 * alive.
 */
export interface Timers {
  after(ms: number, fn: () => void): Timer;
  every(ms: number, fn: () => void): Timer;
}

/** Waits `ms`; the runtime never waits on real time itself. */
export type Sleep = (ms: number) => Promise<void>;

/**
 * The process's time: what leases, their renewals, heartbeats, polls and waits run on. Leases bind
 * processes, so this is wall-clock time, kept apart from a loop's (possibly injected) `Clock`.
 * `systemTime` (src/runtime/system-time.ts) is the real one; warrant/testing's `manualClock()` one
 * a test advances.
 */
export interface Time extends Clock, Timers {
  readonly sleep: Sleep;
}
