// Starts `warrant serve` as a child process, as a user would, and hands back the URL it prints.
import { type ChildProcess, spawn } from "node:child_process";
import { cliPath } from "../helpers/cli.js";
import { ensureStore, storeArg } from "../helpers/store.js";

const children: ChildProcess[] = [];

/** Kills every server started here that is still running. */
export function stopServes(): void {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
}

/**
 * Starts `warrant serve ARGS` over its store (made first, empty, when it is not there: serve only
 * reads a store); resolves with its first stdout line and what it said on stderr.
 */
export async function startServe(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; stderr: () => string; stdout: () => string; child: ChildProcess }> {
  await ensureStore(storeArg(args) ?? env.WARRANT_STORE, cwd);
  const child = spawn(process.execPath, [cliPath, "serve", "--port", "0", ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      const nl = stdout.indexOf("\n");
      if (nl >= 0)
        resolve({ url: stdout.slice(0, nl), stderr: () => stderr, stdout: () => stdout, child });
    });
    child.on("close", (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
}
