// Start-up loads only what a command uses: `--version` no command module, a command only its own
// group's file, and nothing of the runtime or the adapters for `definition validate`. (Timings are
// `npm run -s bench -- cli`; this pins what is loaded.) Uses the built CLI, as the CLI tests do.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliPath, repoRoot } from "./helpers/cli.js";

/** A loader hook that prints every module URL the process loads, one per line, on stderr. */
const HOOK = `data:text/javascript,${encodeURIComponent(
  [
    'import { register } from "node:module";',
    `register("data:text/javascript,${encodeURIComponent(
      // Written with writeSync: the hooks run on their own thread, whose process.stderr writes
      // reach the pipe through the main thread, and may not before the process exits.
      "import { writeSync } from 'node:fs'; export async function load(url, context, next) { writeSync(2, 'LOADED ' + url + '\\n'); return next(url, context); }",
    )}");`,
  ].join("\n"),
)}`;

/** Paths (relative to dist/src) of the project modules `warrant ARGS` loads; exit code checked. */
function loadedBy(args: readonly string[]): string[] {
  const r = spawnSync(process.execPath, ["--import", HOOK, cliPath, ...args], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  expect(r.status, r.stderr).toBe(0);
  const dist = `file://${path.join(repoRoot, "dist/src")}/`;
  return r.stderr
    .split("\n")
    .filter((l) => l.startsWith(`LOADED ${dist}`))
    .map((l) => l.slice(`LOADED ${dist}`.length));
}

describe("CLI start-up", () => {
  it("--version loads no command module", () => {
    expect(loadedBy(["--version"])).toEqual(["cli/main.js", "cli/io.js"]);
  });

  it("definition validate loads its own group and neither the runtime nor any adapter", () => {
    const loaded = loadedBy(["definition", "validate", "examples/agents/implementer.json"]);
    expect(loaded.filter((m) => m.startsWith("cli/commands/"))).toEqual([
      "cli/commands/definition.js",
    ]);
    expect(loaded.filter((m) => m.startsWith("runtime/") || m.startsWith("adapters/"))).toEqual([]);
  });

  it("help still lists every command group", () => {
    const loaded = loadedBy(["--help"]);
    expect(loaded.filter((m) => m.startsWith("cli/commands/")).sort()).toEqual(
      [
        "answer",
        "apply",
        "approve",
        "cancel",
        "cid",
        "definition",
        "demo",
        "diff",
        "eval",
        "inspect",
        "loop",
        "pending",
        "record",
        "renew",
        "requeue",
        "resume",
        "run",
        "serve",
        "turn",
        "worker",
      ].map((g) => `cli/commands/${g}.js`),
    );
    // Listing a command loads none of its work: no runtime, no console, no preflight.
    expect(
      loaded.filter(
        (m) =>
          DRIVE_ONLY.some((d) => m.startsWith(d)) ||
          m === "library/create-warrant.js" ||
          m === "library/preflight.js" ||
          m === "library/changes.js" ||
          m === "cli/loop-actions.js" ||
          m.startsWith("server/console") ||
          m === "server/node-server.js",
      ),
    ).toEqual([]);
  });

  it("loops, which only reads the ledger, loads neither the drive machinery, the sandbox nor the evals", () => {
    const loaded = loadedBy(["loops", "--store", "memory:"]);
    expect(loaded.filter((m) => DRIVE_ONLY.some((d) => m.startsWith(d)))).toEqual([]);
    // The control: the runtime it reads through is loaded.
    expect(loaded).toContain("library/create-warrant.js");
    expect(loaded).toContain("library/warrant-reads.js");
  });
});

/** What only a drive, a worker, an eval or a bundle loads: never a command that only reads. */
const DRIVE_ONLY = [
  "index.js",
  "library/compose-drive.js",
  "library/bundle.js",
  "library/evals/run.js",
  "library/evals/certify.js",
  "runtime/session.js",
  "runtime/driver.js",
  "runtime/worker.js",
  "runtime/agent-passages.js",
  "runtime/passage.js",
  "adapters/sandbox/managed-environment.js",
  "adapters/sandbox/detect-sandbox.js",
  "adapters/tools/",
];

/**
 * What importing `modules` (paths under dist/, in one process, in order) and then running `then`
 * (a module body, may await) loads: the packages under node_modules and the project's modules,
 * both through ESM imports and CommonJS requires.
 */
function loadedByScript(
  modules: readonly string[],
  then = "",
): { packages: string[]; own: string[] } {
  const program = [
    'import { createRequire } from "node:module";',
    ...modules.map(
      (m, i) => `const m${i} = await import(${JSON.stringify(path.join(repoRoot, "dist", m))});`,
    ),
    then,
    "const cjs = Object.keys(createRequire(import.meta.url).cache);",
    "process.stderr.write(cjs.map((f) => 'LOADED file://' + f + '\\n').join(''));",
  ].join("\n");
  const r = spawnSync(process.execPath, ["--import", HOOK, "--input-type=module", "-e", program], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  expect(r.status, r.stderr).toBe(0);
  const urls = r.stderr
    .split("\n")
    .filter((l) => l.startsWith("LOADED file://"))
    .map((l) => l.slice("LOADED file://".length));
  const packages = new Set<string>();
  for (const u of urls) {
    const at = u.lastIndexOf("/node_modules/");
    if (at < 0) continue;
    const rest = u.slice(at + "/node_modules/".length).split("/");
    packages.add(rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] as string));
  }
  const dist = `${path.join(repoRoot, "dist/src")}/`;
  return {
    packages: [...packages].sort(),
    own: urls.filter((u) => u.startsWith(dist)).map((u) => u.slice(dist.length)),
  };
}

const HEAVY = [
  "@opentelemetry/sdk-trace",
  "@opentelemetry/sdk-metrics",
  "pg",
  "@modelcontextprotocol/sdk",
];

describe("library start-up", () => {
  it("importing the library entry loads neither the OpenTelemetry SDK, pg, the MCP SDK nor the console", () => {
    const { packages, own } = loadedByScript(["src/index.js"]);
    expect(packages.filter((p) => HEAVY.includes(p) || p.startsWith("@opentelemetry/sdk"))).toEqual(
      [],
    );
    expect(own.filter((m) => m.startsWith("server/"))).toEqual([]);
    // The control: the same probe sees a package the entry does load.
    expect(packages).toContain("canonicalize");
  });

  it("a runtime made and read (createWarrant, then loops) loads nothing a drive alone needs", () => {
    const { own } = loadedByScript(
      ["src/library/create-warrant.js"],
      [
        'const w = await m0.createWarrant({ store: "memory:", sandbox: "none" });',
        "await w.loops();",
        "await w.evals.list();",
        "await w.close();",
      ].join("\n"),
    );
    expect(own.filter((m) => DRIVE_ONLY.some((d) => m.startsWith(d)))).toEqual([]);
    expect(own).toContain("library/compose.js");
  });

  it("a passage whose tools have plain schemas runs without loading Ajv or the other contracts' validators", () => {
    const { packages, own } = loadedByScript(
      ["bench/suites/passage.js"],
      "await m0.scriptedPassage(3);",
    );
    expect(packages).not.toContain("ajv-formats");
    expect(packages.filter((p) => p === "fast-uri" || p === "json-schema-traverse")).toEqual([]);
    expect(own).toContain("runtime/passage.js");
    expect(own.filter((m) => m.startsWith("core/contracts/generated/"))).toEqual([
      "core/contracts/generated/model-turn.js",
      "core/contracts/generated/payloads.js",
    ]);
  });
});
