// The public library's surface: the exact names each entry point exports (a change here is a change
// of the API), the package's `exports` map, and that importing `warrant` loads no database driver,
// job queue, provider SDK or MCP SDK (they load only when used, or from `warrant/postgres`).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import * as warrant from "../src/index.js";
import * as postgres from "../src/postgres.js";
import * as testing from "../src/testing.js";
import { repoRoot } from "./helpers/cli.js";

describe("the public exports", () => {
  it("warrant exports exactly these values", () => {
    expect(Object.keys(warrant).sort()).toEqual([
      "CODES",
      "DEFAULT_SHUTDOWN_TIMEOUT_MS",
      "MODEL_SPECIFICATION_VERSION",
      "OPERATOR_NAME_MAX",
      "PREFLIGHT_CHECKS",
      "ROLES",
      "SANDBOX_CHOICES",
      "WarrantError",
      "anthropicModel",
      "applyChange",
      "approvalContext",
      "auditBundle",
      "blobCid",
      "canonicalJson",
      "checkLoop",
      "checkLoopDocument",
      "checkTurn",
      "chooseSandbox",
      "codeSpec",
      "collectionCid",
      "collectionCidOfPath",
      "createToolRegistry",
      "createWarrant",
      "decodeCid",
      "defineTool",
      "definitionId",
      "describeDefinition",
      "detectSandbox",
      "exitCodeOf",
      "gitQuotePath",
      "httpStatusOf",
      "isBundle",
      "isCode",
      "isSandboxChoice",
      "isWarrantError",
      "keySigner",
      "listPending",
      "loadPack",
      "loopChange",
      "loopConclusion",
      "normalizeDefinition",
      "openaiCompatibleModel",
      "openaiModel",
      "operatorBindingOf",
      "parseInstant",
      "parseModelUri",
      "parseRecordRef",
      "parseScript",
      "parseStoreUri",
      "preflight",
      "releaseSandboxes",
      "renderOperatorAct",
      "renderRecord",
      "resolveStoreUri",
      "simulate",
      "simulateLoop",
      "stateNameAt",
      "terminalLine",
      "terminalSafe",
      "toPassageRef",
      "toQueryId",
      "toRecordRef",
      "toRunRef",
      "validateDefinition",
      "validateTurn",
    ]);
  });

  it("warrant/testing and warrant/postgres export exactly these values", () => {
    expect(Object.keys(testing).sort()).toEqual([
      "MANUAL_CLOCK_START",
      "changeFeedContract",
      "fakeSandbox",
      "leaseContract",
      "ledgerStoreContract",
      "manualClock",
      "memoryContract",
      "memoryStore",
      "parseModelScript",
      "sandboxContract",
      "scriptedModel",
    ]);
    expect(Object.keys(postgres).sort()).toEqual(["postgresJobQueue", "postgresStore"]);
  });

  it("src/index.ts exports by name, never `export *`", () => {
    for (const file of ["src/index.ts", "src/testing.ts", "src/postgres.ts"]) {
      expect(readFileSync(path.join(repoRoot, file), "utf8"), file).not.toMatch(/export \*/);
    }
  });

  it("package.json maps each entry point with `types` first, and declares no side effects", () => {
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8"));
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.main).toBe("./dist/src/index.js");
    expect(pkg.types).toBe("./dist/src/index.d.ts");
    for (const [entry, file] of [
      [".", "index"],
      ["./testing", "testing"],
      ["./postgres", "postgres"],
    ]) {
      const target = pkg.exports[entry as string];
      expect(Object.keys(target), entry).toEqual(["types", "default"]);
      expect(target).toEqual({
        types: `./dist/src/${file}.d.ts`,
        default: `./dist/src/${file}.js`,
      });
    }
    const build = JSON.parse(readFileSync(path.join(repoRoot, "tsconfig.build.json"), "utf8"));
    expect(build.compilerOptions.declaration).toBe(true);
  });
});

/** The packages a fresh process loads when it imports `file` (the built library: npm test builds). */
function packagesLoadedBy(file: string): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), "warrant-imports-"));
  try {
    const hooks = path.join(dir, "hooks.mjs");
    writeFileSync(
      hooks,
      'import { writeSync } from "node:fs";\n' +
        "export async function resolve(s, c, next) {\n" +
        "  const r = await next(s, c);\n" +
        '  writeSync(2, "LOADED " + r.url + "\\n");\n' +
        "  return r;\n}\n",
    );
    const register = `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(hooks).href)});`;
    const run = spawnSync(
      process.execPath,
      [
        "--import",
        `data:text/javascript,${encodeURIComponent(register)}`,
        "--input-type=module",
        "-e",
        `await import(${JSON.stringify(pathToFileURL(file).href)});`,
      ],
      { encoding: "utf8" },
    );
    if (run.status !== 0) throw new Error(run.stderr);
    const names = run.stderr
      .split("\n")
      .flatMap((l) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(l)?.slice(1, 2) ?? []);
    return [...new Set(names)].sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const HEAVY = [
  "pg",
  "graphile-worker",
  "better-sqlite3",
  "openai",
  "@anthropic-ai/sdk",
  "@modelcontextprotocol/sdk",
  // Tracing loads its API, SDK and exporters only when a traced drive starts.
  "@opentelemetry/api",
  "@opentelemetry/sdk-trace",
  "@opentelemetry/sdk-metrics",
  "@opentelemetry/otlp-exporter-base",
  "@opentelemetry/otlp-transformer",
  "@opentelemetry/exporter-metrics-otlp-http",
];

describe("what importing the library loads", () => {
  it("no entry point loads a driver, the job queue or an SDK until it is used", () => {
    const dist = path.join(repoRoot, "dist/src");
    const main = packagesLoadedBy(path.join(dist, "index.js"));
    // Something loads (the check reads real imports), but not Ajv: the validators are precompiled.
    expect(main).toContain("@noble/ed25519");
    expect(main).not.toContain("ajv");
    for (const heavy of HEAVY) expect(main).not.toContain(heavy);
    const tests = packagesLoadedBy(path.join(dist, "testing.js"));
    for (const heavy of HEAVY) expect(tests).not.toContain(heavy);
    // pg loads when a PostgreSQL store opens; graphile-worker when a loop is dispatched or a
    // worker starts.
    const pg = packagesLoadedBy(path.join(dist, "postgres.js"));
    for (const heavy of HEAVY) expect(pg).not.toContain(heavy);
  });
});
