// No function in src/ is longer than 120 lines, outside generated code (src/core/contracts/generated)
// and a known remainder listed below with its reason, so that the list can only shrink: a function
// of the list that is split fails the test until its entry is removed.
//
// How a function is measured: every function-like node with a body (function declarations and
// expressions, arrow functions, methods, constructors, accessors), parsed by the TypeScript
// compiler API (TypeScript 6, the `typescript-api` dev dependency: TypeScript 7 has no JavaScript
// API), from the line of its first token (its leading comment not included) to the line of its
// closing brace, both included. A function nested in another counts in its parent's length too.
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript-api";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers/cli.js";
import { filesUnder } from "./helpers/imports.js";

const MAX_LINES = 120;
const GENERATED = "src/core/contracts/generated/";

/** A function over the bound that stays for now: `file`, its name as `lengthsOf` gives it. */
interface Remainder {
  readonly file: string;
  readonly name: string;
  readonly reason: string;
}

const REMAINDER: readonly Remainder[] = [];

interface Measured {
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

/** A function's name: its own, or the variable, property or method it is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration, sf: ts.SourceFile): string {
  if (node.name !== undefined) return node.name.getText(sf);
  const p = node.parent;
  if (
    (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) &&
    p.name !== undefined
  )
    return p.name.getText(sf);
  if (ts.isExportAssignment(p)) return "default";
  return "<anonymous>";
}

/** Every function of a source with its first line and its length in lines. */
function lengthsOf(source: string, fileName = "x.ts"): Measured[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const out: Measured[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const fn = node as ts.FunctionLikeDeclaration;
      const first = sf.getLineAndCharacterOfPosition(fn.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(fn.getEnd()).line;
      out.push({ name: nameOf(fn, sf), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Every function of src/ over MAX_LINES, generated code apart, as `file name (N lines)`. */
function overLong(): { file: string; name: string; lines: number }[] {
  return filesUnder(path.join(repoRoot, "src"))
    .map((f) => path.relative(repoRoot, f))
    .filter((file) => !file.startsWith(GENERATED))
    .flatMap((file) =>
      lengthsOf(readFileSync(path.join(repoRoot, file), "utf8"), file)
        .filter((m) => m.lines > MAX_LINES)
        .map((m) => ({ file, name: m.name, lines: m.lines })),
    );
}

const key = (x: { file: string; name: string }) => `${x.file} ${x.name}`;

describe("function length", () => {
  it(`no function of src/ is over ${MAX_LINES} lines outside generated code and the known remainder`, () => {
    const known = new Set(REMAINDER.map(key));
    const long = overLong();
    expect(
      long.filter((l) => !known.has(key(l))).map((l) => `${key(l)} (${l.lines} lines)`),
    ).toEqual([]);
    // The remainder only shrinks: an entry no longer over the bound is removed from it.
    const still = new Set(long.map(key));
    expect(REMAINDER.filter((r) => !still.has(key(r))).map(key)).toEqual([]);
  });

  it("measures from the first token to the closing brace, comments before it not counted", () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const a${i} = ${i};`);
    const source = [
      "/** A comment",
      " * of two lines. */",
      "export function f() {",
      ...body(118),
      "}",
      "const g = (x: number) => {",
      ...body(119),
      "};",
      "class C {",
      "  m() {",
      "    return 1;",
      "  }",
      "}",
      "const o = { p: function () { return 2; } };",
    ].join("\n");
    expect(lengthsOf(source).map((m) => [m.name, m.line, m.lines])).toEqual([
      ["f", 3, 120],
      ["g", 123, 121],
      ["m", 245, 3],
      ["p", 249, 1],
    ]);
  });

  it("counts a nested function in its own length and in its parent's", () => {
    const source = ["function outer() {", "  const inner = () => {", "    return 1;", "  };", "}"];
    expect(lengthsOf(source.join("\n")).map((m) => [m.name, m.lines])).toEqual([
      ["outer", 5],
      ["inner", 3],
    ]);
  });
});
