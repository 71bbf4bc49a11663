// The package's dependencies are exactly what the shipped code uses: every runtime dependency is
// loaded somewhere under src/, and src/ loads no package that is not one (a devDependency is absent
// from a user's install).
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers/cli.js";
import { filesUnder, importsOf, packageOf } from "./helpers/imports.js";

interface Manifest {
  readonly dependencies: Record<string, string>;
  readonly devDependencies: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}

const manifest = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as Manifest;
const sources = filesUnder(path.join(repoRoot, "src")).map((file) => ({
  file: path.relative(repoRoot, file),
  text: readFileSync(file, "utf8"),
}));

/** Whether `text` names `pkg` as a module: in an import, or in a string handed to `require`. */
function names(text: string, pkg: string): boolean {
  const escaped = pkg.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return new RegExp(`["']${escaped}(?:/[^"']*)?["']`).test(text);
}

/** Dependencies that no file under src/ names. */
function unused(deps: readonly string[], files: readonly { text: string }[]): string[] {
  return deps.filter((pkg) => !files.some((f) => names(f.text, pkg)));
}

/** Whether every import of `pkg` in `text` is type-only (erased: nothing is loaded). */
function typeOnly(text: string, pkg: string): boolean {
  const escaped = pkg.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const all = text.match(new RegExp(`^(?:import|export)\\s[^;]*?["']${escaped}["'];`, "gm")) ?? [];
  return all.length > 0 && all.every((s) => /^(?:import|export) type\s/.test(s));
}

/**
 * `file imports pkg` for each package imported under src/ that is not a runtime dependency; an
 * optional peer dependency may be imported for its types alone (warrant/testing's suites: vitest).
 */
function undeclared(files: readonly { file: string; text: string }[]): string[] {
  const builtins = new Set(builtinModules);
  const peers = manifest.peerDependencies ?? {};
  const bad: string[] = [];
  for (const { file, text } of files) {
    for (const spec of importsOf(text)) {
      const pkg = packageOf(spec);
      if (pkg === undefined || builtins.has(pkg)) continue;
      if (pkg in manifest.dependencies) continue;
      if (pkg in peers && typeOnly(text, pkg)) continue;
      bad.push(`${file} imports ${pkg}`);
    }
  }
  return bad;
}

describe("dependencies", () => {
  it("every runtime dependency is used by src/", () => {
    expect(unused(Object.keys(manifest.dependencies), sources)).toEqual([]);
  });

  it("src/ imports only runtime dependencies and Node built-ins", () => {
    expect(undeclared(sources)).toEqual([]);
  });

  it("the checks name an unused dependency and an undeclared import", () => {
    const files = [{ file: "src/x.ts", text: 'import a from "pg/lib/x.js";\nimport "zod";' }];
    expect(unused(["pg", "lossless-json"], files)).toEqual(["lossless-json"]);
    expect(undeclared(files)).toEqual(["src/x.ts imports zod"]);
    // A peer dependency only for its types; loaded, it is undeclared.
    const types = [{ file: "src/t.ts", text: 'import type * as V from "vitest";' }];
    expect(undeclared(types)).toEqual([]);
    const loaded = [{ file: "src/t.ts", text: 'import { it } from "vitest";' }];
    expect(undeclared(loaded)).toEqual(["src/t.ts imports vitest"]);
  });

  it("packages only tests use are devDependencies", () => {
    for (const pkg of ["zod", "vitest", "fast-check", "json-schema-to-typescript"]) {
      expect(manifest.devDependencies[pkg], pkg).toBeDefined();
      expect(manifest.dependencies[pkg], pkg).toBeUndefined();
    }
  });
});
