// The system's clock, sleep and timers: the one place in src/runtime and src/core that reads the
// wall clock or starts a real timer (test/time-ports.test.ts scans for any other). Everything else
// is given them as ports, so a test can run it on warrant/testing's manualClock().
import type { Clock, Sleep, Time, Timer, Timers } from "../core/ports/time.js";

export const systemClock: Clock = { now: () => new Date() };

export const systemSleep: Sleep = (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const systemTimers: Timers = {
  after(ms, fn): Timer {
    const t = setTimeout(fn, ms);
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  every(ms, fn): Timer {
    const t = setInterval(fn, ms);
    t.unref();
    return { cancel: () => clearInterval(t) };
  },
};

/** The process's real time: the system clock, sleep and timers. */
export const systemTime: Time = {
  now: systemClock.now,
  sleep: systemSleep,
  after: systemTimers.after,
  every: systemTimers.every,
};
