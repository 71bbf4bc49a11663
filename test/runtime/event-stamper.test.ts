// The events observers get: each a copy of the runtime's body, stamped with the clock's time as ISO
// text; the text of one millisecond made once and shared by the events within it.
import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/core/ports/time.js";
import { eventStamper, type WarrantEventBody } from "../../src/runtime/events.js";

/** A clock that says `at` (epoch ms) and counts how often it is read. */
function clockAt(start: number): Clock & { ms: number; reads: number } {
  const c = {
    ms: start,
    reads: 0,
    now() {
      c.reads++;
      return new Date(c.ms);
    },
  };
  return c;
}

const body: WarrantEventBody = {
  kind: "lease-lost",
  query: "query:stamped",
  code: "store/lease-lost",
  message: "another holder took the loop",
};

describe("eventStamper", () => {
  it("copies the body, keeps its keys in order and adds `at` from the clock", () => {
    const clock = clockAt(Date.UTC(2026, 11, 3, 12, 0, 0, 5));
    const event = eventStamper(clock)(body);
    expect(event).not.toBe(body);
    expect(Object.keys(event)).toEqual([...Object.keys(body), "at"]);
    expect(event.at).toBe("2026-12-03T12:00:00.005Z");
    expect("at" in body).toBe(false);
  });

  it("reads the clock for every event: a later millisecond gets its own text, the same one shares", () => {
    const clock = clockAt(Date.UTC(2026, 11, 3, 12, 0, 0, 5));
    const stamp = eventStamper(clock);
    const a = stamp(body);
    const b = stamp(body);
    clock.ms += 1;
    const c = stamp(body);
    clock.ms -= 1; // a clock set back is read as it says
    const d = stamp(body);
    expect(clock.reads).toBe(4);
    expect([a.at, b.at, c.at, d.at]).toEqual([
      "2026-12-03T12:00:00.005Z",
      "2026-12-03T12:00:00.005Z",
      "2026-12-03T12:00:00.006Z",
      "2026-12-03T12:00:00.005Z",
    ]);
  });

  it("two stampers keep their own last text", () => {
    const first = clockAt(Date.UTC(2026, 0, 1));
    const second = clockAt(Date.UTC(2027, 0, 1));
    const a = eventStamper(first);
    const b = eventStamper(second);
    expect([a(body).at, b(body).at, a(body).at]).toEqual([
      "2026-01-01T00:00:00.000Z",
      "2027-01-01T00:00:00.000Z",
      "2026-01-01T00:00:00.000Z",
    ]);
  });
});
