// Time is a port: nothing in src/core or src/runtime reads the wall clock or starts a real timer
// except the system implementations of the clock, sleep and timers ports (src/runtime/system-time.ts).
// Every lease, renewal, heartbeat, poll and deadline is given its time, so a test can advance it.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers/cli.js";
import { filesUnder } from "./helpers/imports.js";

/** The system implementations of the ports: the only files that may read or wait on real time. */
const ALLOWED = new Set(["src/runtime/system-time.ts"]);

const READS_OF_TIME: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  // `new Date()` or `new Date` reads the clock; `new Date(ms)` only builds a value.
  { name: "new Date()", pattern: /\bnew\s+Date\b(?!\s*\(\s*[^\s)])/g },
  { name: "Date.now()", pattern: /\bDate\s*\.\s*now\b/g },
  { name: "setTimeout", pattern: /\bsetTimeout\b/g },
  { name: "setInterval", pattern: /\bsetInterval\b/g },
  { name: "setImmediate", pattern: /\bsetImmediate\b/g },
];

/**
 * The source with its comments blanked (line breaks kept, so positions keep their lines); string
 * and template literals are kept as they are, a `//` inside one is not a comment.
 */
function withoutComments(source: string): string {
  let out = "";
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === "\\" ? 2 : 1;
      out += source.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Every read of real time in `source`, as `file:line: what`. */
function readsOfTime(file: string, source: string): string[] {
  const code = withoutComments(source);
  const found: string[] = [];
  for (const { name, pattern } of READS_OF_TIME) {
    for (const m of code.matchAll(pattern)) {
      const line = code.slice(0, m.index).split("\n").length;
      found.push(`${file}:${line}: ${name}`);
    }
  }
  return found.sort();
}

describe("time through ports", () => {
  it("src/core and src/runtime read no clock and start no timer outside the system ports", () => {
    const files = ["src/core", "src/runtime"].flatMap((d) => filesUnder(path.join(repoRoot, d)));
    expect(files.length).toBeGreaterThan(50);
    const found = files
      .map((f) => path.relative(repoRoot, f))
      .filter((f) => !ALLOWED.has(f))
      .flatMap((f) => readsOfTime(f, readFileSync(path.join(repoRoot, f), "utf8")));
    expect(found).toEqual([]);
  });

  it("the system ports are where the real clock and timers are", () => {
    const [file] = [...ALLOWED];
    const source = readFileSync(path.join(repoRoot, file as string), "utf8");
    const kinds = new Set(readsOfTime(file as string, source).map((r) => r.split(": ")[1]));
    expect([...kinds].sort()).toEqual(["new Date()", "setInterval", "setTimeout"]);
  });

  it("finds each read of time, and nothing in comments, strings' comment marks or built dates", () => {
    const source = [
      "const a = new Date();", // 1
      "const b = new Date ( );", // 2
      "const c = new Date;", // 3
      "const d = Date.now() + 1;", // 4
      "const t = setTimeout(f, 1); globalThis.setInterval(g, 2);", // 5
      "setImmediate(h); performance.now();", // 6: a duration measured, not a time read
      "const built = new Date(ms); new Date(Date.UTC(2026, 0, 1));", // 7
      "// new Date() and setTimeout in a comment", // 8
      "/* Date.now()", // 9
      "   setInterval */ const s = 'a // b'; const u = new Date(0);", // 10
      "const url = 'http://x'; const e = Date.now();", // 11
    ].join("\n");
    expect(readsOfTime("f.ts", source)).toEqual([
      "f.ts:11: Date.now()",
      "f.ts:1: new Date()",
      "f.ts:2: new Date()",
      "f.ts:3: new Date()",
      "f.ts:4: Date.now()",
      "f.ts:5: setInterval",
      "f.ts:5: setTimeout",
      "f.ts:6: setImmediate",
    ]);
  });
});
