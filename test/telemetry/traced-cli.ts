// The built CLI with what a trace test needs beside it: a module-resolution hook (given through
// NODE_OPTIONS) that lists every module the process loaded, so a test sees which packages ran.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type CliResult, runCli } from "../helpers/cli.js";

export interface TracedResult extends CliResult {
  /** The npm packages the process loaded (`@scope/name`), sorted, each once. */
  readonly packages: readonly string[];
}

/** No OTEL_* setting reaches a child unless the test names it. */
export const NO_OTEL: NodeJS.ProcessEnv = Object.fromEntries(
  Object.keys(process.env)
    .filter((k) => k.startsWith("OTEL_") || k === "WARRANT_OTEL_CAPTURE_CONTENT")
    .map((k) => [k, ""]),
);

export async function runTracedCli(
  args: readonly string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<TracedResult> {
  const dir = mkdtempSync(path.join(tmpdir(), "warrant-modules-"));
  try {
    const log = path.join(dir, "loaded.txt");
    writeFileSync(log, "");
    const hooks = path.join(dir, "hooks.mjs");
    writeFileSync(
      hooks,
      'import { appendFileSync } from "node:fs";\n' +
        `const log = ${JSON.stringify(log)};\n` +
        "export async function resolve(s, c, next) {\n" +
        "  const r = await next(s, c);\n" +
        '  appendFileSync(log, r.url + "\\n");\n' +
        "  return r;\n}\n",
    );
    const register = `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(hooks).href)});`;
    const r = await runCli(args, {
      cwd: opts.cwd,
      ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
      env: {
        ...NO_OTEL,
        ...opts.env,
        NODE_OPTIONS: `--import data:text/javascript,${encodeURIComponent(register)}`,
      },
    });
    const packages = readFileSync(log, "utf8")
      .split("\n")
      .flatMap((l) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(l)?.slice(1, 2) ?? []);
    return { ...r, packages: [...new Set(packages)].sort() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
