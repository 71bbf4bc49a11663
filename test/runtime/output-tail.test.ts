// A check's detail is its profile, its exit status and the tail of what it printed: stderr alone,
// stdout alone, both (stderr first, each keeping its share), at most 40 lines and 4 KiB; a failed
// step's reason says what went wrong beyond an exit status.
import { describe, expect, it } from "vitest";
import {
  commandDetail,
  outputTail,
  stepFailureReason,
  TAIL_BYTES,
  TAIL_LINES,
} from "../../src/runtime/output-tail.js";

const lines = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join("\n");
const bytes = (s: string) => new TextEncoder().encode(s).length;

describe("commandDetail", () => {
  it("says the profile, the exit status and what a command wrote only to stderr", () => {
    expect(
      commandDetail("run-tests", 1, "", "Traceback (most recent call last):\nAssertionError\n"),
    ).toBe("run-tests exited 1: Traceback (most recent call last):\nAssertionError");
  });

  it("keeps stdout alone, and says nothing more when nothing was printed", () => {
    expect(commandDetail("t", 0, "ok 1\nok 2\n", "")).toBe("t exited 0: ok 1\nok 2");
    expect(commandDetail("t", null, "", "  \n")).toBe("t exited null: ");
  });

  it("puts stderr first when both have text", () => {
    expect(outputTail("summary: 1 failed\n", "E   assert 1 == 2\n")).toBe(
      "E   assert 1 == 2\nsummary: 1 failed",
    );
  });

  it("keeps the last 40 lines of one stream", () => {
    const tail = outputTail(lines("out", 100), "");
    expect(tail.split("\n")).toHaveLength(TAIL_LINES);
    expect(tail.startsWith("out 61\n")).toBe(true);
    expect(tail.endsWith("out 100")).toBe(true);
  });

  it("shares the bounds when both streams are long: the tail of each, stderr first", () => {
    const tail = outputTail(lines("out", 100), lines("err", 100));
    const got = tail.split("\n");
    expect(got).toHaveLength(TAIL_LINES);
    expect(got.slice(0, 20)).toEqual(lines("err", 100).split("\n").slice(80));
    expect(got.slice(20)).toEqual(lines("out", 100).split("\n").slice(80));
    // A short stdout leaves the rest to stderr.
    const short = outputTail("1 failed", lines("err", 100)).split("\n");
    expect(short).toHaveLength(TAIL_LINES);
    expect(short.at(-1)).toBe("1 failed");
    expect(short[0]).toBe("err 62");
  });

  it("stays within 4 KiB (UTF-8), a line longer than that keeping its end", () => {
    const wide = Array.from({ length: 30 }, (_, i) => `${i} ${"é".repeat(200)}`).join("\n");
    const tail = outputTail("", wide);
    expect(bytes(tail)).toBeLessThanOrEqual(TAIL_BYTES);
    expect(tail.endsWith(`29 ${"é".repeat(200)}`)).toBe(true);
    expect(tail.split("\n").length).toBeLessThan(30);
    const one = outputTail(`start ${"x".repeat(10_000)} end`, "");
    expect(bytes(one)).toBe(TAIL_BYTES);
    expect(one.endsWith("x end")).toBe(true);
    const both = outputTail("y".repeat(9000), "z".repeat(9000));
    expect(bytes(both)).toBeLessThanOrEqual(TAIL_BYTES);
    expect(both).toMatch(/^z+\ny+$/);
    // A character is never cut in half.
    expect(outputTail("", "é".repeat(5000))).not.toContain("\uFFFD");
  });
});

describe("stepFailureReason", () => {
  it("says why a patch did not apply, what was refused, and the limit or finding met", () => {
    expect(
      stepFailureReason({
        status: "failed",
        action: "patch",
        excerpt: "hunk 1 (9,7) does not apply",
      }),
    ).toBe("hunk 1 (9,7) does not apply");
    expect(
      stepFailureReason({
        status: "failed",
        action: "patch",
        refusal: "workbench/patch-outside-policy",
        excerpt: "src/link/a.js: the path leaves the workspace through a symlink",
      }),
    ).toBe(
      "workbench/patch-outside-policy: src/link/a.js: the path leaves the workspace through a symlink",
    );
    expect(
      stepFailureReason({
        status: "failed",
        action: "command",
        refusal: "environment/limit",
        excerpt: "",
        findings: [
          {
            code: "environment/limit",
            message: "the disk limit of 1048576 bytes was hit (watchdog)",
          },
        ],
      }),
    ).toBe("environment/limit: the disk limit of 1048576 bytes was hit (watchdog)");
  });

  it("says nothing for a step that passed, or a command that only exited non-zero", () => {
    expect(stepFailureReason({ status: "ok", action: "patch" })).toBeUndefined();
    expect(
      stepFailureReason({ status: "failed", action: "observe-command", excerpt: "1 failing" }),
    ).toBeUndefined();
  });
});
