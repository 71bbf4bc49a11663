// src/core does no I/O and imports no adapter; src/runtime sees adapters only through ports;
// src/adapters imports no library, CLI or server file; src/library imports no CLI or server file;
// src/cli and src/server are clients of the public library (src/index.ts, src/postgres.ts,
// src/testing.ts, src/library/) and of their own folder (the CLI may also use the server);
// web/ (the console's page) imports its own files and the types of src/server/api.ts, which holds
// no code and imports nothing; and no files of src/ import each other in a loop (type-only imports included): walk their
// import graphs.
import { readFileSync } from "node:fs";
import path from "node:path";
import { transformSync } from "esbuild";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers/cli.js";
import { filesUnder, importsOf } from "./helpers/imports.js";

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

/** Node built-ins that do no I/O: the runtime may use these and no other. */
const RUNTIME_BUILTINS = new Set(["crypto", "path", "perf_hooks", "util"]);
/** The one package the runtime may use: the OpenTelemetry API (the SDK is an adapter's). */
const RUNTIME_PACKAGES = new Set(["@opentelemetry/api"]);

/** What a src/runtime file may not import: adapters, the library, the CLI, I/O, packages. */
function runtimeViolation(file: string, spec: string): string | undefined {
  if (spec.startsWith("node:")) return RUNTIME_BUILTINS.has(spec.slice(5)) ? undefined : spec;
  if (RUNTIME_PACKAGES.has(spec)) return undefined;
  if (!spec.startsWith(".")) return spec;
  const target = path.resolve(path.dirname(file), spec);
  const allowed = ["src/core", "src/runtime"].map((d) => path.join(repoRoot, d) + path.sep);
  return allowed.some((d) => target.startsWith(d)) ? undefined : spec;
}

/** Every import under `dir` that `rule` refuses, as `file imports spec`. */
function violationsUnder(
  dir: string,
  rule: (file: string, spec: string) => string | undefined,
): string[] {
  const bad: string[] = [];
  for (const file of filesUnder(path.join(repoRoot, dir))) {
    for (const spec of importsOf(readFileSync(file, "utf8"))) {
      const v = rule(file, spec);
      if (v !== undefined) bad.push(`${path.relative(repoRoot, file)} imports ${v}`);
    }
  }
  return bad;
}

describe("layering", () => {
  it("src/runtime imports only src/core, src/runtime, Node built-ins that do no I/O and the OpenTelemetry API", () => {
    expect(violationsUnder("src/runtime", runtimeViolation)).toEqual([]);
  });

  it("the runtime rule catches adapters, I/O modules, packages and the library", () => {
    const fake = path.join(repoRoot, "src/runtime/x.ts");
    expect(runtimeViolation(fake, "../adapters/fs/pack-loader.js")).toBeDefined();
    expect(runtimeViolation(fake, "../library/compose.js")).toBeDefined();
    expect(runtimeViolation(fake, "../cli/live-view.js")).toBeDefined();
    expect(runtimeViolation(fake, "node:fs/promises")).toBe("node:fs/promises");
    expect(runtimeViolation(fake, "node:os")).toBe("node:os");
    expect(runtimeViolation(fake, "node:child_process")).toBe("node:child_process");
    expect(runtimeViolation(fake, "graphile-worker")).toBe("graphile-worker");
    expect(runtimeViolation(fake, "pg")).toBe("pg");
    expect(runtimeViolation(fake, "@opentelemetry/api")).toBeUndefined();
    expect(runtimeViolation(fake, "@opentelemetry/sdk-trace")).toBe("@opentelemetry/sdk-trace");
    expect(runtimeViolation(fake, "@opentelemetry/exporter-trace-otlp-http")).toBeDefined();
    expect(runtimeViolation(fake, "../core/loop/decide.js")).toBeUndefined();
    expect(runtimeViolation(fake, "./driver.js")).toBeUndefined();
    expect(runtimeViolation(fake, "node:crypto")).toBeUndefined();
    // A sibling folder whose name starts like an allowed one is not inside it.
    expect(runtimeViolation(fake, "../runtime-extras/x.js")).toBeDefined();
  });

  it("docs/architecture.md states these rules: the modules refused to the core, allowed the runtime", () => {
    const page = readFileSync(path.join(repoRoot, "docs/architecture.md"), "utf8");
    const cells = (layer: string) => {
      const row = page.split("\n").find((l) => l.startsWith(`| \`${layer}\` |`)) ?? "";
      return row
        .split(" | ")
        .map((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string));
    };
    const [, coreAllowed, coreRefused] = cells("src/core/**");
    expect(coreAllowed).toEqual(["src/core/**", "contracts/**"]);
    // Beside the modules, the cell names the prefix `node:` and the folders outside which nothing is.
    const folders = ["node:", "src/core", "contracts"];
    expect(new Set(coreRefused?.filter((m) => !folders.includes(m)))).toEqual(FORBIDDEN_MODULES);
    const [, runtimeAllowed] = cells("src/runtime/**");
    expect(runtimeAllowed).toEqual([
      "src/core/**",
      "src/runtime/**",
      ...[...RUNTIME_BUILTINS].map((m) => `node:${m}`),
      ...RUNTIME_PACKAGES,
    ]);
  });

  it("src/core imports no Node I/O module, no driver or SDK, and nothing outside core", () => {
    expect(violationsUnder("src/core", violation)).toEqual([]);
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

  it("src/adapters imports no library, CLI or server file; src/library no CLI or server file", () => {
    expect(
      violationsUnder("src/adapters", above(["src/library", "src/cli", "src/server"])),
    ).toEqual([]);
    expect(violationsUnder("src/library", above(["src/cli", "src/server"]))).toEqual([]);
  });

  it("the rule above catches an upward import, and not a sibling folder named like one", () => {
    const rule = above(["src/library", "src/cli"]);
    const fake = path.join(repoRoot, "src/adapters/store/x.ts");
    expect(rule(fake, "../../library/compose.js")).toBe("../../library/compose.js");
    expect(rule(fake, "../../cli/io.js")).toBe("../../cli/io.js");
    expect(rule(fake, "../../library-extras/x.js")).toBeUndefined();
    expect(rule(fake, "../fs/host-key.js")).toBeUndefined();
  });

  it("src/cli and src/server import only the public library, src/library and their own folder", () => {
    expect(violationsUnder("src/cli", clientViolation(["src/cli", "src/server"]))).toEqual([]);
    expect(violationsUnder("src/server", clientViolation(["src/server"]))).toEqual([]);
  });

  it("the console server reads the store only through warrant.views, never warrant.store", () => {
    const touching = filesUnder(path.join(repoRoot, "src/server")).filter((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .some((line) => !line.trim().startsWith("//") && /\.store\b/.test(line)),
    );
    expect(touching.map((f) => path.relative(repoRoot, f))).toEqual([]);
  });

  it("the client rule catches core, runtime and adapters, and not the entry points", () => {
    const rule = clientViolation(["src/cli", "src/server"]);
    const fake = path.join(repoRoot, "src/cli/commands/x.ts");
    expect(rule(fake, "../../core/ids.js")).toBe("../../core/ids.js");
    expect(rule(fake, "../../runtime/worker.js")).toBe("../../runtime/worker.js");
    expect(rule(fake, "../../adapters/store/store-uri.js")).toBe(
      "../../adapters/store/store-uri.js",
    );
    expect(rule(fake, "../../index.js")).toBeUndefined();
    expect(rule(fake, "../../postgres.js")).toBeUndefined();
    expect(rule(fake, "../../library/compose.js")).toBeUndefined();
    expect(rule(fake, "../io.js")).toBeUndefined();
    expect(rule(fake, "../../server/node-server.js")).toBeUndefined();
    const server = clientViolation(["src/server"]);
    expect(server(path.join(repoRoot, "src/server/x.ts"), "../cli/io.js")).toBe("../cli/io.js");
    expect(rule(fake, "../../index-extras.js")).toBe("../../index-extras.js");
    expect(rule(fake, "commander")).toBeUndefined();
  });

  it("web/ imports only its own files and the types of src/server/api.ts", () => {
    const bad = filesUnder(path.join(repoRoot, "web")).flatMap((file) =>
      webViolations(file, readFileSync(file, "utf8")).map(
        (spec) => `${path.relative(repoRoot, file)} imports ${spec}`,
      ),
    );
    expect(bad).toEqual([]);
  });

  it("src/server/api.ts holds types only: it imports nothing and compiles to no code", () => {
    const source = readFileSync(path.join(repoRoot, WEB_API), "utf8");
    expect(importsOf(source)).toEqual([]);
    expect(transformSync(source, { loader: "ts" }).code.trim()).toBe("");
  });

  it("the web rule catches a value import of the API, any other file, and a package", () => {
    const fake = path.join(repoRoot, "web/x.ts");
    const rule = (source: string) => webViolations(fake, source);
    expect(rule('import type { RecordViewAnswer } from "../src/server/api.js";')).toEqual([]);
    expect(rule('export type { ApiRefusal } from "../src/server/api.js";')).toEqual([]);
    expect(rule('import { h, recordView } from "./render.js";')).toEqual([]);
    expect(rule('import { RecordViewAnswer } from "../src/server/api.js";')).toEqual([
      "../src/server/api.js",
    ]);
    expect(rule('import { type RecordViewAnswer } from "../src/server/api.js";')).toEqual([
      "../src/server/api.js",
    ]);
    expect(rule('import { stepFailureReason } from "../src/runtime/output-tail.js";')).toEqual([
      "../src/runtime/output-tail.js",
    ]);
    expect(rule('import type { Warrant } from "../src/index.js";')).toEqual(["../src/index.js"]);
    expect(rule('const m = await import("../src/library/views.js");')).toEqual([
      "../src/library/views.js",
    ]);
    expect(rule('import "../src/server/api.js";')).toEqual(["../src/server/api.js"]);
    expect(rule('import {\n  a,\n  b,\n} from "esbuild";')).toEqual(["esbuild"]);
    expect(rule('// import nothing from "../src/runtime/x.js"\nconst a = 1;')).toEqual([]);
  });

  it("no files of src/ import each other in a loop", () => {
    expect(importCircles(graphOf("src"))).toEqual([]);
  });

  it("the circle check finds a loop of two and of three, type-only imports included", () => {
    const g = new Map([
      ["a", ["b"]],
      ["b", ["a"]],
      ["c", ["d"]],
      ["d", ["e"]],
      ["e", ["c", "f"]],
      ["f", []],
    ]);
    expect(importCircles(g)).toEqual([
      ["a", "b"],
      ["c", "d", "e"],
    ]);
    expect(importsOf('import type { X } from "./x.js";')).toEqual(["./x.js"]);
  });
});

/** Entry points of the public library a client may import. */
const ENTRY_POINTS = ["src/index.ts", "src/postgres.ts", "src/testing.ts"];

/** A client's rule: relative imports only of the entry points, src/library/ and `own` folders. */
function clientViolation(own: readonly string[]) {
  return (file: string, spec: string): string | undefined => {
    if (!spec.startsWith(".")) return undefined;
    const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, ".ts");
    if (ENTRY_POINTS.some((e) => target === path.join(repoRoot, e))) return undefined;
    const folders = ["src/library", ...own].map((d) => path.join(repoRoot, d) + path.sep);
    return folders.some((d) => target.startsWith(d)) ? undefined : spec;
  };
}

/** A rule refusing relative imports into any of `dirs` (repository-relative). */
function above(dirs: readonly string[]) {
  return (file: string, spec: string): string | undefined => {
    if (!spec.startsWith(".")) return undefined;
    const target = path.resolve(path.dirname(file), spec);
    return dirs.some((d) => target.startsWith(path.join(repoRoot, d) + path.sep))
      ? spec
      : undefined;
  };
}

/** The one file outside web/ the console's page may import: its types only. */
const WEB_API = "src/server/api.ts";

/** A source's import and re-export statements: each specifier, and whether it brings types only. */
function importStatementsOf(source: string): { spec: string; typeOnly: boolean }[] {
  const code = source.replace(/^\s*\/\/.*$/gm, "");
  const re =
    /\b(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s*)?["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;
  return [...code.matchAll(re)].map((m) => ({
    spec: (m[2] ?? m[3]) as string,
    typeOnly: m[1] !== undefined,
  }));
}

/** What a web/ file may not import: anything but its own folder and the types of WEB_API. */
function webViolations(file: string, source: string): string[] {
  const web = path.join(repoRoot, "web") + path.sep;
  const api = path.join(repoRoot, WEB_API);
  return importStatementsOf(source)
    .filter(({ spec, typeOnly }) => {
      if (!spec.startsWith(".")) return true;
      const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, ".ts");
      if (target.startsWith(web)) return false;
      return !(target === api && typeOnly);
    })
    .map(({ spec }) => spec);
}

/** The relative import graph of the `.ts` files under `dir`, by repository-relative path. */
function graphOf(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of filesUnder(path.join(repoRoot, dir))) {
    const targets = importsOf(readFileSync(file, "utf8"))
      .filter((spec) => spec.startsWith("."))
      .map((spec) =>
        path.relative(repoRoot, path.resolve(path.dirname(file), spec)).replace(/\.js$/, ".ts"),
      );
    graph.set(path.relative(repoRoot, file), targets);
  }
  return graph;
}

/** Every set of two or more files that import each other in a loop (strongly connected), sorted. */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const circle: string[] = [];
    for (;;) {
      const w = stack.pop() as string;
      onStack.delete(w);
      circle.push(w);
      if (w === v) break;
    }
    if (circle.length > 1) circles.push(circle.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}
