// No `as unknown as` outside generated code: a value is narrowed by a check or typed where it is
// made, never forced through `unknown`. Any file that holds one fails, naming it and its count.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers/cli.js";
import { filesUnder } from "./helpers/imports.js";

/** Generated code (scripts/build-types.mjs, scripts/build-validators.mjs). */
const GENERATED = ["src/core/contracts/types/", "src/core/contracts/generated/"];

/** How many `as unknown as` each file of `files` holds, for those holding any. */
function doubleCasts(files: readonly { file: string; text: string }[]): Record<string, number> {
  const found: Record<string, number> = {};
  for (const { file, text } of files) {
    if (GENERATED.some((g) => file.startsWith(g))) continue;
    const n = text.match(/\bas unknown as\b/g)?.length ?? 0;
    if (n > 0) found[file] = n;
  }
  return found;
}

describe("casts", () => {
  it("no `as unknown as` outside generated code", () => {
    const files = filesUnder(path.join(repoRoot, "src")).map((f) => ({
      file: path.relative(repoRoot, f),
      text: readFileSync(f, "utf8"),
    }));
    expect(doubleCasts(files)).toEqual({});
  });

  it("the check counts a double cast, and skips generated code", () => {
    expect(
      doubleCasts([
        { file: "src/x.ts", text: "const a = b as unknown as C; const d = e as unknown as F;" },
        { file: "src/core/contracts/types/t.ts", text: "x as unknown as Y" },
        { file: "src/y.ts", text: "const a = b as C;" },
      ]),
    ).toEqual({ "src/x.ts": 2 });
  });
});
