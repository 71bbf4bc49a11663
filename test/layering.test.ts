// src/core does no I/O and imports no adapter: walk its import graph.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers/cli.js";

const FORBIDDEN_MODULES = new Set([
  "fs",
  "fs/promises",
  "child_process",
  "net",
  "http",
  "https",
  "http2",
  "dgram",
  "dns",
  "tls",
  "worker_threads",
  "cluster",
  "os",
  "process",
  "readline",
  "pg",
  "better-sqlite3",
  "openai",
  "@anthropic-ai/sdk",
  "@modelcontextprotocol/sdk",
  "graphile-worker",
]);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : p.endsWith(".ts") ? [p] : [];
  });
}

function importsOf(source: string): string[] {
  const specs: string[] = [];
  const re =
    /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g;
  for (const m of source.matchAll(re)) specs.push((m[1] ?? m[2] ?? m[3]) as string);
  return specs;
}

function violation(file: string, spec: string): string | undefined {
  const bare = spec.startsWith("node:") ? spec.slice(5) : spec;
  const root = bare.startsWith("@") ? bare.split("/").slice(0, 2).join("/") : bare.split("/")[0];
  if (FORBIDDEN_MODULES.has(bare) || FORBIDDEN_MODULES.has(root as string)) return spec;
  if (spec.startsWith(".")) {
    const target = path.resolve(path.dirname(file), spec);
    const core = path.join(repoRoot, "src/core");
    const contracts = path.join(repoRoot, "contracts");
    if (!target.startsWith(core) && !target.startsWith(contracts)) return spec;
  }
  return undefined;
}

describe("layering", () => {
  it("src/core imports no Node I/O module, no driver or SDK, and nothing outside core", () => {
    const bad: string[] = [];
    for (const file of filesUnder(path.join(repoRoot, "src/core"))) {
      for (const spec of importsOf(readFileSync(file, "utf8"))) {
        const v = violation(file, spec);
        if (v !== undefined) bad.push(`${path.relative(repoRoot, file)} imports ${v}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("the check itself catches a forbidden import", () => {
    const fake = path.join(repoRoot, "src/core/x.ts");
    expect(violation(fake, "node:fs")).toBe("node:fs");
    expect(violation(fake, "better-sqlite3")).toBe("better-sqlite3");
    expect(violation(fake, "../adapters/store/sqlite-ledger-store.js")).toBeDefined();
    expect(violation(fake, "./loop/decide.js")).toBeUndefined();
    expect(importsOf('import x from "pg";\nconst y = await import("node:net");')).toEqual([
      "pg",
      "node:net",
    ]);
  });
});
