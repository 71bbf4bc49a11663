// The repository explains itself: no file reads or cites anything outside it (a sibling folder,
// a specification kept elsewhere), and every page of docs/spec/ that code or docs cite exists.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers/cli.js";

const ROOTS = ["src", "test", "bench", "docs", "contracts", "scripts", "examples", "README.md"];
const SKIP = new Set(["node_modules", "dist", "fixtures", "generated", "peers"]);

function files(p: string): string[] {
  const full = path.join(repoRoot, p);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [p];
  return readdirSync(full).flatMap((n) => (SKIP.has(n) ? [] : files(path.join(p, n))));
}

const texts = ROOTS.flatMap(files)
  .filter((f) => /\.(ts|mjs|md|json)$/.test(f))
  .map((f) => ({ file: f, text: readFileSync(path.join(repoRoot, f), "utf8") }));

/** `file: match` for every occurrence of `re` in the repository's texts. */
function occurrences(re: RegExp): string[] {
  return texts.flatMap(({ file, text }) => [...text.matchAll(re)].map((m) => `${file}: ${m[0]}`));
}

describe("a self-contained repository", () => {
  it("cites no numbered section of a specification kept elsewhere", () => {
    // Assembled, so that this file does not match itself.
    expect(occurrences(new RegExp(`${"SPEC"} §\\d+`, "g"))).toEqual([]);
  });

  it("reads nothing from a sibling folder", () => {
    expect(occurrences(new RegExp(`\\.\\./${"shared"}\\b`, "g"))).toEqual([]);
  });

  it("every docs/spec page cited exists", () => {
    const cited = new Set(
      occurrences(/docs\/spec\/([a-z-]+)\.md|\(spec\/([a-z-]+)\.md\)/g).map((o) =>
        o.replace(/^.*?(?:docs\/spec\/|\(spec\/)([a-z-]+)\.md.*$/, "$1"),
      ),
    );
    expect(cited.size).toBeGreaterThan(5);
    for (const page of cited) {
      expect(existsSync(path.join(repoRoot, "docs/spec", `${page}.md`)), page).toBe(true);
    }
  });
});
