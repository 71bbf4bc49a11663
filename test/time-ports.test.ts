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
/** The system implementation of the randomness port: the only file that may draw a random number. */
const RANDOM_ALLOWED = new Set(["src/runtime/system-random.ts"]);

const DRAWS_OF_RANDOMNESS: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  { name: "Math.random()", pattern: /\bMath\s*\.\s*random\b/g },
  { name: "randomBytes", pattern: /\brandomBytes\b/g },
  { name: "randomUUID", pattern: /\brandomUUID\b/g },
  { name: "randomInt", pattern: /\brandomInt\b/g },
  { name: "getRandomValues", pattern: /\bgetRandomValues\b/g },
];

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

/** Every match of `patterns` in the code of `source` (not its comments), as `file:line: what`. */
function readsOf(
  file: string,
  source: string,
  patterns: readonly { readonly name: string; readonly pattern: RegExp }[],
): string[] {
  const code = withoutComments(source);
  const found: string[] = [];
  for (const { name, pattern } of patterns) {
    for (const m of code.matchAll(pattern)) {
      const line = code.slice(0, m.index).split("\n").length;
      found.push(`${file}:${line}: ${name}`);
    }
  }
  return found.sort();
}

/** Every read of real time in `source`, as `file:line: what`. */
const readsOfTime = (file: string, source: string) => readsOf(file, source, READS_OF_TIME);

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

describe("randomness through a port", () => {
  it("src/core and src/runtime draw no random number outside the system port", () => {
    const files = ["src/core", "src/runtime"].flatMap((d) => filesUnder(path.join(repoRoot, d)));
    const found = files
      .map((f) => path.relative(repoRoot, f))
      .filter((f) => !RANDOM_ALLOWED.has(f))
      .flatMap((f) =>
        readsOf(f, readFileSync(path.join(repoRoot, f), "utf8"), DRAWS_OF_RANDOMNESS),
      );
    expect(found).toEqual([]);
  });

  it("finds each draw, in code only, and the system port is where Math.random is", () => {
    const source = [
      "const a = Math.random();", // 1
      "// Math.random() in a comment", // 2
      "import { randomBytes, randomUUID } from 'node:crypto';", // 3
      "crypto.getRandomValues(buf); randomInt(6);", // 4
    ].join("\n");
    expect(readsOf("f.ts", source, DRAWS_OF_RANDOMNESS)).toEqual([
      "f.ts:1: Math.random()",
      "f.ts:3: randomBytes",
      "f.ts:3: randomUUID",
      "f.ts:4: getRandomValues",
      "f.ts:4: randomInt",
    ]);
    const [file] = [...RANDOM_ALLOWED];
    const system = readFileSync(path.join(repoRoot, file as string), "utf8");
    expect(readsOf(file as string, system, DRAWS_OF_RANDOMNESS)).toEqual([
      `${file}:5: Math.random()`,
    ]);
  });
});
