// A clock a test moves by hand: it implements the process's time (`Time`: now, sleep, after,
// every), so leases, renewals, heartbeats, polls and shutdown timeouts run when the test says, not
// when the machine gets round to them. Nothing happens until `advance(ms)`.
import type { Time, Timer } from "../core/ports/time.js";

/** Where a manual clock starts unless told: 2026-01-01T00:00:00.000Z. */
export const MANUAL_CLOCK_START = Date.UTC(2026, 0, 1);

export interface ManualClock extends Time {
  /**
   * Moves the clock `ms` forward, firing every timer and ending every sleep that falls due on the
   * way, in the order they fall due (those due at one instant in the order they were set). Each
   * fires with the clock at its due time, and what it set going (a store call, a timer of its own
   * that falls due too) runs before the next fires: the promise settles once the clock stands at
   * the end and that work has run as far as it can without I/O. A timer whose callback throws
   * rejects it, the clock left at that timer's due time (the timers after it stay due). An advance
   * called before the last one ended starts when it ends.
   */
  advance(ms: number): Promise<void>;
  /** Timers and sleeps waiting to fall due. */
  pending(): number;
}

interface Entry {
  due: number;
  /** The order it was set (or last rescheduled) in: ties fire in this order. */
  seq: number;
  readonly every: number | undefined;
  readonly fire: () => void;
}

function checkDelay(ms: number, what: string, positive: boolean): void {
  if (!Number.isFinite(ms) || ms < 0 || (positive && ms === 0)) {
    throw new RangeError(
      `${what}: ${ms} is not a ${positive ? "positive" : "non-negative"} finite number of milliseconds`,
    );
  }
}

/** Lets the promise chains started so far run (everything short of real I/O). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A manual clock at `start` (a Date or epoch milliseconds; default MANUAL_CLOCK_START). */
export function manualClock(start: Date | number = MANUAL_CLOCK_START): ManualClock {
  let now = typeof start === "number" ? start : start.getTime();
  if (!Number.isFinite(now)) throw new RangeError(`manualClock: ${String(start)} is not a time`);
  let seq = 0;
  const entries = new Set<Entry>();
  const schedule = (ms: number, fire: () => void, every?: number): Timer => {
    const entry: Entry = { due: now + ms, seq: seq++, every, fire };
    entries.add(entry);
    return { cancel: () => void entries.delete(entry) };
  };
  /** The first entry due by `until`, if any. */
  const nextDue = (until: number): Entry | undefined => {
    let first: Entry | undefined;
    for (const e of entries) {
      if (e.due > until) continue;
      if (first === undefined || e.due < first.due || (e.due === first.due && e.seq < first.seq))
        first = e;
    }
    return first;
  };
  const run = async (ms: number): Promise<void> => {
    const target = now + ms;
    await settle();
    for (let e = nextDue(target); e !== undefined; e = nextDue(target)) {
      now = e.due;
      if (e.every === undefined) entries.delete(e);
      else {
        e.due += e.every;
        e.seq = seq++;
      }
      e.fire();
      await settle();
    }
    now = target;
    await settle();
  };
  let advancing: Promise<void> = Promise.resolve();
  return {
    now: () => new Date(now),
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        checkDelay(ms, "sleep", false);
        schedule(ms, resolve);
      }),
    after: (ms, fn) => {
      checkDelay(ms, "after", false);
      return schedule(ms, fn);
    },
    every: (ms, fn) => {
      checkDelay(ms, "every", true);
      return schedule(ms, fn, ms);
    },
    advance: (ms) => {
      checkDelay(ms, "advance", false);
      const next = advancing.then(() => run(ms));
      advancing = next.catch(() => undefined);
      return next;
    },
    pending: () => entries.size,
  };
}
