// warrant/testing's manualClock(): time moves only when the test advances it; timers fire and
// sleeps end in the order they fall due, each at its due time, and work they start runs before the
// next one fires.
import { describe, expect, it } from "vitest";
import { MANUAL_CLOCK_START, manualClock } from "../../src/testing.js";

describe("manualClock", () => {
  it("starts where told (2026-01-01 by default) and moves only when advanced", async () => {
    expect(manualClock().now().toISOString()).toBe("2026-01-01T00:00:00.000Z");
    expect(manualClock().now().getTime()).toBe(MANUAL_CLOCK_START);
    const clock = manualClock(new Date("2030-05-01T12:00:00Z"));
    expect(clock.now().toISOString()).toBe("2030-05-01T12:00:00.000Z");
    expect(manualClock(1000).now().getTime()).toBe(1000);
    await clock.advance(1500);
    expect(clock.now().toISOString()).toBe("2030-05-01T12:00:01.500Z");
    await clock.advance(0);
    expect(clock.now().toISOString()).toBe("2030-05-01T12:00:01.500Z");
  });

  it("fires a timer once it falls due, with the clock at its due time, and never before", async () => {
    const clock = manualClock(0);
    const fired: number[] = [];
    clock.after(100, () => fired.push(clock.now().getTime()));
    expect(clock.pending()).toBe(1);
    await clock.advance(99);
    expect(fired).toEqual([]);
    await clock.advance(1);
    expect(fired).toEqual([100]);
    expect(clock.pending()).toBe(0);
    await clock.advance(1000);
    expect(fired).toEqual([100]);
  });

  it("fires every timer due within one advance in due order, ties in the order they were set", async () => {
    const clock = manualClock(0);
    const fired: string[] = [];
    const at = (name: string) => () => fired.push(`${name}@${clock.now().getTime()}`);
    clock.after(30, at("c"));
    clock.after(10, at("a"));
    clock.after(20, at("b1"));
    clock.after(20, at("b2"));
    clock.after(0, at("now"));
    clock.after(31, at("later"));
    await clock.advance(30);
    expect(fired).toEqual(["now@0", "a@10", "b1@20", "b2@20", "c@30"]);
    expect(clock.now().getTime()).toBe(30);
    expect(clock.pending()).toBe(1);
  });

  it("repeats an `every` timer at each multiple of its interval, until cancelled", async () => {
    const clock = manualClock(0);
    const beats: number[] = [];
    const timer = clock.every(100, () => beats.push(clock.now().getTime()));
    await clock.advance(350);
    expect(beats).toEqual([100, 200, 300]);
    await clock.advance(50);
    expect(beats).toEqual([100, 200, 300, 400]);
    timer.cancel();
    expect(clock.pending()).toBe(0);
    await clock.advance(1000);
    expect(beats).toEqual([100, 200, 300, 400]);
    // Cancelling again does nothing.
    timer.cancel();
  });

  it("interleaves `every` timers and one-shot timers by due time", async () => {
    const clock = manualClock(0);
    const fired: string[] = [];
    clock.every(40, () => fired.push(`beat@${clock.now().getTime()}`));
    clock.after(100, () => fired.push(`once@${clock.now().getTime()}`));
    clock.after(80, () => fired.push(`tie@${clock.now().getTime()}`));
    await clock.advance(120);
    // At 80 the beat (rescheduled at 40, after `tie` was set) fires after `tie`.
    expect(fired).toEqual(["beat@40", "tie@80", "beat@80", "once@100", "beat@120"]);
  });

  it("never fires a cancelled timer, nor one cancelled by a timer that fired before it", async () => {
    const clock = manualClock(0);
    const fired: string[] = [];
    const never = clock.after(10, () => fired.push("never"));
    never.cancel();
    const second = clock.after(20, () => fired.push("second"));
    clock.after(15, () => {
      fired.push("first");
      second.cancel();
    });
    await clock.advance(100);
    expect(fired).toEqual(["first"]);
    expect(clock.pending()).toBe(0);
  });

  it("ends due sleeps in order with the timers, and lets what awaited them run before the next fires", async () => {
    const clock = manualClock(0);
    const seen: string[] = [];
    const sleeper = async (name: string, ms: number) => {
      await clock.sleep(ms);
      seen.push(`${name} woke@${clock.now().getTime()}`);
      // Work after the wake-up (a store call, say) runs before the next timer fires.
      await Promise.resolve();
      seen.push(`${name} done`);
    };
    const a = sleeper("a", 50);
    const b = sleeper("b", 20);
    clock.after(30, () => seen.push(`timer@${clock.now().getTime()}`));
    expect(clock.pending()).toBe(3);
    await clock.advance(49);
    expect(seen).toEqual(["b woke@20", "b done", "timer@30"]);
    await clock.advance(1);
    await Promise.all([a, b]);
    expect(seen).toEqual(["b woke@20", "b done", "timer@30", "a woke@50", "a done"]);
  });

  it("fires, in the same advance, a timer set by a firing one once it falls due", async () => {
    const clock = manualClock(0);
    const fired: number[] = [];
    clock.after(10, () => {
      fired.push(clock.now().getTime());
      clock.after(10, () => fired.push(clock.now().getTime()));
      clock.after(100, () => fired.push(clock.now().getTime()));
    });
    await clock.advance(50);
    expect(fired).toEqual([10, 20]);
    await clock.advance(60);
    expect(fired).toEqual([10, 20, 110]);
  });

  it("fires a timer set after an awaited step of a sleeper woken in the same advance", async () => {
    const clock = manualClock(0);
    const fired: string[] = [];
    // A poll loop: sleep, do some async work, sleep again.
    const poll = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(10);
        await Promise.resolve();
        fired.push(`poll@${clock.now().getTime()}`);
      }
    })();
    await clock.advance(30);
    await poll;
    expect(fired).toEqual(["poll@10", "poll@20", "poll@30"]);
  });

  it("runs advances called together one after the other", async () => {
    const clock = manualClock(0);
    const fired: number[] = [];
    clock.every(10, () => fired.push(clock.now().getTime()));
    await Promise.all([clock.advance(15), clock.advance(15)]);
    expect(fired).toEqual([10, 20, 30]);
    expect(clock.now().getTime()).toBe(30);
  });

  it("rejects an advance whose timer throws, at that timer's time, leaving later timers due", async () => {
    const clock = manualClock(0);
    const fired: number[] = [];
    clock.after(10, () => {
      throw new Error("boom");
    });
    clock.after(20, () => fired.push(clock.now().getTime()));
    await expect(clock.advance(30)).rejects.toThrow("boom");
    expect(clock.now().getTime()).toBe(10);
    expect(fired).toEqual([]);
    await clock.advance(20);
    expect(fired).toEqual([20]);
    expect(clock.now().getTime()).toBe(30);
  });

  it("refuses negative, infinite and (for `every`) zero intervals", async () => {
    const clock = manualClock(0);
    expect(() => clock.after(-1, () => {})).toThrow(RangeError);
    expect(() => clock.after(Number.NaN, () => {})).toThrow(RangeError);
    expect(() => clock.every(0, () => {})).toThrow(/every: 0 is not a positive/);
    expect(() => clock.advance(-5)).toThrow(/advance: -5/);
    expect(() => clock.advance(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    await expect(clock.sleep(-1)).rejects.toThrow(/sleep: -1/);
    expect(() => manualClock(Number.NaN)).toThrow(RangeError);
    expect(clock.pending()).toBe(0);
  });
});
