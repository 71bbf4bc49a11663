// The code registry (src/core/codes.ts) knows every code src/ gives, and gives nothing else: every
// `"ns/name"` literal in src/ whose namespace is the registry's (or that stands where a code does,
// whatever its namespace) is listed; every listed code is used in src/ or named by a contract. What
// derives from it holds: isWarrantError's namespaces, the CLI's usage exits, the console's
// statuses (those written in src/server and the table in docs/api.md), and docs/errors.md.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  CODE_NAMESPACES,
  CODES,
  type CodeSpec,
  codeNamespaces,
  codeSpec,
  exitCodeOf,
  httpStatusOf,
  isCode,
  namespaceOf,
} from "../src/core/codes.js";
import { WarrantError } from "../src/core/result.js";
import {
  CONTRACT_CODE_NAMESPACES,
  HOST_CODE_NAMESPACES,
  isWarrantError,
  isWarrantErrorCode,
} from "../src/library/errors.js";
import { renderErrorsDoc } from "../src/library/errors-doc.js";
import { repoRoot } from "./helpers/cli.js";

const SRC = path.join(repoRoot, "src");
const REGISTRY = path.join(SRC, "core/codes.ts");
/** Generated from contracts/: the validators hold field names only, the types the contracts' codes. */
const GENERATED = [
  path.join(SRC, "core/contracts/generated"),
  path.join(SRC, "core/contracts/types"),
];
const CODE_SHAPE = /^[a-z][a-z0-9-]*\/[a-z0-9][a-z0-9-]*$/;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

function contractFiles(): string[] {
  const dir = path.join(repoRoot, "contracts");
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".json"))
    .map((f) => path.join(dir, f));
}

/** What the contracts name with a slash: their field names, and the codes of their enums. */
function contractNames(): { fields: Set<string>; codes: Map<string, Set<string>> } {
  const fields = new Set<string>();
  const codes = new Map<string, Set<string>>();
  for (const file of contractFiles()) {
    const contract = path.basename(file).replace(/(\.schema)?\.json$/, "");
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) for (const x of v) walk(x);
      else if (typeof v === "object" && v !== null)
        for (const [k, x] of Object.entries(v)) {
          if (k === "properties" && typeof x === "object" && x !== null)
            for (const p of Object.keys(x)) if (p.includes("/")) fields.add(p);
          if (k === "enum" || k === "const")
            for (const e of [x].flat())
              if (typeof e === "string" && CODE_SHAPE.test(e))
                codes.set(e, new Set([...(codes.get(e) ?? []), contract]));
          walk(x);
        }
    };
    walk(JSON.parse(readFileSync(file, "utf8")));
  }
  return { fields, codes };
}

/** What stands before a code: `code:`, or the call of an error or refusal maker. */
const CODE_POSITION =
  /(\bcode:\s*|\b(WarrantError|ToolRefusal|toolFailure|failed|refused|refuse|problem|fail|push|find|add)\(\s*)$/;

/** The text with its comment lines and trailing `// …` comments blanked (lines kept). */
function withoutComments(text: string): string {
  return text
    .split("\n")
    .map((l) => {
      const t = l.trim();
      if (t.startsWith("//") || t.startsWith("*") || t.startsWith("/*")) return "";
      return l.replace(/\s\/\/\s.*$/, "");
    })
    .join("\n");
}

interface Literal {
  readonly code: string;
  readonly line: number;
  /** Stands where a code does: `code: "…"`, `WarrantError("…"`, `refused("…"` and the like. */
  readonly asCode: boolean;
}

/**
 * Every `"a/b"` string literal of a source text (double, single or back quotes, no interpolation)
 * outside comments and outside the places a field name stands: an object key or type member
 * (`"a/b":`), an element access (`["a/b"]`), or a field the contracts name (`"query/id"`).
 */
function codeLiterals(text: string, fields: ReadonlySet<string>): Literal[] {
  const code = withoutComments(text);
  const found: Literal[] = [];
  for (const m of code.matchAll(/(["'`])([a-z][a-z0-9-]*\/[a-z0-9][a-z0-9-]*)\1/g)) {
    const start = m.index;
    const end = start + m[0].length;
    const value = m[2] as string;
    if (/^\??:/.test(code.slice(end, end + 2))) continue;
    if (code[start - 1] === "[" && code[end] === "]") continue;
    if (fields.has(value)) continue;
    const before = code.slice(Math.max(0, start - 20), start);
    found.push({
      code: value,
      line: code.slice(0, start).split("\n").length,
      asCode: CODE_POSITION.test(before),
    });
  }
  return found;
}

/** `file:line code` of every literal in src/ (the registry and generated code left out). */
function sourceLiterals(): { where: string; literal: Literal }[] {
  const { fields } = contractNames();
  const out: { where: string; literal: Literal }[] = [];
  for (const file of tsFiles(SRC)) {
    if (file === REGISTRY || GENERATED.some((g) => file.startsWith(g + path.sep))) continue;
    for (const literal of codeLiterals(readFileSync(file, "utf8"), fields))
      out.push({ where: `${path.relative(repoRoot, file)}:${literal.line}`, literal });
  }
  return out;
}

/** Names a code is built with at run time: `${area}/not-verified` (src/library/change-record.ts). */
function templateNames(): Set<string> {
  const names = new Set<string>();
  for (const file of tsFiles(SRC)) {
    if (file === REGISTRY) continue;
    for (const m of readFileSync(file, "utf8").matchAll(/`\$\{\w+\}\/([a-z][a-z0-9-]*)`/g))
      names.add(m[1] as string);
  }
  return names;
}

/** The code outside comments of src/ (the registry and generated code left out), as one text. */
function sourceText(): string {
  return tsFiles(SRC)
    .filter((f) => f !== REGISTRY && !GENERATED.some((g) => f.startsWith(g + path.sep)))
    .map((f) => withoutComments(readFileSync(f, "utf8")))
    .join("\n");
}

const NAMESPACES = new Set<string>(codeNamespaces());
const entries = Object.entries(CODES) as [string, CodeSpec][];

describe("every code literal in src/ is in the registry", () => {
  it("each `ns/name` literal of a registry namespace is a registered code", () => {
    const missing = sourceLiterals()
      .filter(
        ({ literal }) => NAMESPACES.has(namespaceOf(literal.code) ?? "") && !isCode(literal.code),
      )
      .map(({ where, literal }) => `${literal.code} (${where})`);
    expect(
      missing,
      `codes missing from src/core/codes.ts (add each with its meaning, exit and HTTP status, then run npm run build:errors-doc):\n${missing.join("\n")}`,
    ).toEqual([]);
  });

  it("a literal standing where a code does (`code:`, `WarrantError(`, `refused(`…) is registered, whatever its namespace", () => {
    const missing = sourceLiterals()
      .filter(({ literal }) => literal.asCode && !isCode(literal.code))
      .map(({ where, literal }) => `${literal.code} (${where})`);
    expect(
      missing,
      `codes missing from src/core/codes.ts (a new namespace goes into CODE_NAMESPACES too):\n${missing.join("\n")}`,
    ).toEqual([]);
  });

  it("the collector finds codes and skips field names, keys, comments and MIME types", () => {
    const fields = new Set(["query/id"]);
    const text = [
      'throw new WarrantError("eval/set-missing", "no such set");',
      'const p = { code: "apply/outside", path: "" };',
      'const r = doc["passage/ref"];',
      'const o = { "environment/dir": dir };',
      'differ("/query/id", "query/id");',
      "// `store/not-a-code` in a comment",
      'const t = "application/json";',
      "const why = ok ? 'store/busy' : `store/io`;",
    ].join("\n");
    const found = codeLiterals(text, fields);
    expect(found.map((l) => [l.code, l.line, l.asCode])).toEqual([
      ["eval/set-missing", 1, true],
      ["apply/outside", 2, true],
      ["application/json", 7, false],
      ["store/busy", 8, false],
      ["store/io", 8, false],
    ]);
    // The checks above name what is missing: an unknown code of a known namespace, and a new
    // namespace where a code stands; a MIME type of no registry namespace is not a code.
    const unknown = found.filter(
      (l) => (NAMESPACES.has(namespaceOf(l.code) ?? "") || l.asCode) && !isCode(l.code),
    );
    expect(unknown.map((l) => l.code)).toEqual(["eval/set-missing"]);
  });
});

describe("every registered code is given or named by a contract", () => {
  it("each entry is used in src/ (a literal, built at run time, or in a message), else reserved by the contract it cites", () => {
    const used = new Set(sourceLiterals().map(({ literal }) => literal.code));
    const built = templateNames();
    const { codes: named } = contractNames();
    // A code is given where it is a literal, built (`${area}/not-verified`), or spelled inside a
    // message (`warrant: eval/regression: …`).
    const text = sourceText();
    const given = (code: string) =>
      used.has(code) ||
      built.has(code.slice(code.indexOf("/") + 1)) ||
      new RegExp(`(?<![\\w/-])${code}(?![\\w/-])`).test(text);
    const unused = entries
      .filter(([code, spec]) => spec.reserved !== true && !given(code))
      .map(([code]) => code);
    expect(
      unused,
      `codes registered but used nowhere in src/ (remove them, or mark them reserved by the contract that names them):\n${unused.join("\n")}`,
    ).toEqual([]);
    const wronglyReserved = entries
      .filter(
        ([code, spec]) =>
          spec.reserved === true &&
          (given(code) ||
            spec.contract === undefined ||
            named.get(code)?.has(spec.contract) !== true),
      )
      .map(([code]) => code);
    expect(
      wronglyReserved,
      `codes marked reserved that src/ gives, or that their contract does not name:\n${wronglyReserved.join("\n")}`,
    ).toEqual([]);
  });

  it("each code a contract names is registered, citing that contract", () => {
    const { codes: named } = contractNames();
    const wrong = [...named]
      .filter(([code, contracts]) => !contracts.has(codeSpec(code)?.contract ?? ""))
      .map(([code, contracts]) => `${code} (${[...contracts].join(", ")})`);
    expect(
      wrong,
      `contract codes not registered with their contract:\n${wrong.join("\n")}`,
    ).toEqual([]);
  });

  it("each entry is well formed: its shape, a one-line meaning, an exit of 1 or 2, an HTTP status", () => {
    for (const [code, spec] of entries) {
      expect(code, code).toMatch(CODE_SHAPE);
      expect(Object.keys(CODE_NAMESPACES), code).toContain(namespaceOf(code));
      expect(spec.meaning.trim().length, code).toBeGreaterThan(0);
      expect(spec.meaning, code).not.toContain("\n");
      if (spec.exit !== undefined) expect([1, 2], code).toContain(spec.exit);
      if (spec.http !== undefined)
        expect([400, 401, 403, 404, 409, 413, 431, 500], code).toContain(spec.http);
    }
    // A namespace with no code is dead weight in isWarrantError.
    const empty = codeNamespaces().filter((ns) => !entries.some(([c]) => namespaceOf(c) === ns));
    expect(empty).toEqual([]);
  });
});

describe("what derives from the registry", () => {
  it("isWarrantError knows every namespace, the console's and the queue's among them", () => {
    expect(new Set([...CONTRACT_CODE_NAMESPACES, ...HOST_CODE_NAMESPACES])).toEqual(NAMESPACES);
    for (const [code] of entries)
      expect(isWarrantError(new WarrantError(code, "x")), code).toBe(true);
    for (const code of [
      "queue/loop-stopped",
      "egress/not-listed",
      "record/not-found",
      "request/invalid",
      "auth/token-required",
    ])
      expect(isWarrantErrorCode(code), code).toBe(true);
    expect(isWarrantErrorCode("application/json")).toBe(false);
    expect(isWarrantErrorCode("store/")).toBe(false);
    expect(isWarrantError(new Error("store/io"))).toBe(false);
  });

  it("the command line's exit status: 2 for the usage codes, 1 for any other", () => {
    for (const code of [
      "store/uri-invalid",
      "hil/ref-too-short",
      "hil/ref-invalid",
      "hil/ambiguous-ref",
      "input/too-large",
      "model/missing-key",
    ])
      expect(exitCodeOf(code), code).toBe(2);
    for (const code of [
      "store/not-found",
      "loop/not-opened",
      "apply/outside",
      "not/registered",
      undefined,
      7,
    ])
      expect(exitCodeOf(code), String(code)).toBe(1);
  });

  it("src/server writes no status beside a code: each refusal's status is the registry's", () => {
    // ApiError, refusalOf, refuse and refusalHead take a code (an HttpCode) and read its status;
    // a number written beside a code literal would be a second list.
    const written: string[] = [];
    const pattern = /\b(\d{3}),\s*["'`]([a-z][a-z0-9-]*\/[a-z0-9-]+)["'`]/g;
    let refusals = 0;
    for (const file of tsFiles(path.join(SRC, "server"))) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(pattern))
        written.push(`${m[2]}: ${m[1]} in ${path.basename(file)}`);
      refusals += [
        ...text.matchAll(/\b(?:ApiError|refusalOf|refuse|refusalHead)\(\s*(?:res,\s*)?"/g),
      ].length;
    }
    expect(refusals).toBeGreaterThan(20);
    expect(written).toEqual([]);
  });

  it("docs/api.md's table of statuses is the registry's", () => {
    const text = readFileSync(path.join(repoRoot, "docs/api.md"), "utf8");
    const start = text.indexOf("| status | codes |");
    expect(start).toBeGreaterThan(-1);
    const rows = text.slice(start).split("\n").slice(2);
    let listed = 0;
    for (const row of rows) {
      const m = /^\| (\d{3}) \| (.*) \|$/.exec(row);
      if (m === null) break;
      for (const [, code] of (m[2] as string).matchAll(/`([a-z][a-z0-9-]*\/[a-z0-9-]+)`/g)) {
        listed++;
        expect(httpStatusOf(code as string), code).toBe(Number(m[1]));
      }
    }
    expect(listed).toBeGreaterThan(20);
  });

  it("docs/errors.md is what `npm run build:errors-doc` writes", () => {
    const page = readFileSync(path.join(repoRoot, "docs/errors.md"), "utf8");
    // On a difference, run `npm run build:errors-doc` and commit the page.
    expect(
      page === renderErrorsDoc(),
      "docs/errors.md is stale: run npm run build:errors-doc",
    ).toBe(true);
    for (const [code] of entries) expect(page, code).toContain(`| \`${code}\` |`);
  });

  it("`npm run build:errors-doc --check` passes on the page and names the fix on a stale one", () => {
    const script = path.join(repoRoot, "scripts/build-errors-doc.mjs");
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [script, "--check", ...args], { encoding: "utf8" });
    const current = run();
    expect(current.stderr).toBe("");
    expect(current.status).toBe(0);
    const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-errors-doc-"));
    try {
      const stale = path.join(dir, "errors.md");
      writeFileSync(stale, renderErrorsDoc().replace("| `store/busy` |", "| `store/bsy` |"));
      const r = run("--page", stale);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain("differs from the registry: run `npm run build:errors-doc`");
      const none = run("--page", path.join(dir, "absent.md"));
      expect(none.status).toBe(1);
      expect(none.stderr).toContain("is missing");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
