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
      "export async function load(url, context, next) { process.stderr.write('LOADED ' + url + '\\n'); return next(url, context); }",
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
  });
});
