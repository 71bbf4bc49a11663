// A worker's human lines: each line of a text gets the time and the loop's short id, and what the
// text quotes (a drive's error from a model or a command) reaches the terminal escaped.
import { describe, expect, it } from "vitest";
import { humanLine } from "../../src/cli/worker-lines.js";

describe("a worker's human lines", () => {
  it("prefixes each line, and escapes the control characters of the text", () => {
    const text = humanLine(
      "2026-12-01T10:00:00.000Z",
      "query:fix-20261201T100000-abcdef",
      "drive-failed model/http: \x1b]0;pwned\x07 got\r\x9b\nsecond",
    );
    const lines = text.split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^2026-12-01T10:00:00\.000Z \S+ drive-failed model\/http: /);
    expect(lines[0]).toContain("\\x1b]0;pwned\\x07 got\\r\\x9b");
    expect(lines[1]).toMatch(/^2026-12-01T10:00:00\.000Z \S+ second$/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters.
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
});
