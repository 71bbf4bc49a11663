// The exit codes the docs state are the ones the command line has: docs/runtime.md and docs/cli.md
// give the same table for run, resume and demo (a blocked loop exits 3, never 0).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT_BLOCKED, EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "../src/cli/io.js";
import { repoRoot } from "./helpers/cli.js";

/** `exit → first words of its row` of the first `| exit | when |` table in a docs page. */
function exitTable(page: string): Map<number, string> {
  const text = readFileSync(path.join(repoRoot, "docs", page), "utf8");
  const start = text.indexOf("| exit | when |");
  expect(start, `${page} has an exit-code table`).toBeGreaterThan(-1);
  const rows = new Map<number, string>();
  for (const line of text.slice(start).split("\n").slice(2)) {
    const m = /^\| \*\*(\d)\*\* \| (.*) \|$/.exec(line);
    if (m === null) break;
    rows.set(Number(m[1]), m[2] ?? "");
  }
  return rows;
}

describe("the documented exit codes", () => {
  it.each(["runtime.md", "cli.md"])(
    "%s: 0 succeeded, 1 stopped otherwise, 2 usage, 3 blocked",
    (page) => {
      const rows = exitTable(page);
      expect([...rows.keys()]).toEqual([EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_BLOCKED]);
      expect(rows.get(EXIT_OK)).toMatch(/^the loop stopped `succeeded`/);
      expect(rows.get(EXIT_OK)).not.toMatch(/blocked/);
      expect(rows.get(EXIT_BLOCKED)).toMatch(/^the loop is blocked or waiting/);
      for (const reason of ["budget", "deadline", "model", "tool"])
        expect(rows.get(EXIT_BLOCKED)).toContain(`\`${reason}\``);
    },
  );
});
