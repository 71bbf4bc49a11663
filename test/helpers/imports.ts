// Reads a source tree's import specifiers (static, dynamic and side-effect imports, re-exports):
// what the layering and dependency tests walk.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

/** Every `.ts` file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** The module specifiers a source file imports or re-exports, in order. */
export function importsOf(source: string): string[] {
  const specs: string[] = [];
  const re =
    /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g;
  for (const m of source.matchAll(re)) specs.push((m[1] ?? m[2] ?? m[3]) as string);
  return specs;
}

/** The package a bare specifier names (`@scope/name` or `name`); undefined for a relative or `node:` one. */
export function packageOf(spec: string): string | undefined {
  if (spec.startsWith(".") || spec.startsWith("node:") || spec.startsWith("/")) return undefined;
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}
