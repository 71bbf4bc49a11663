// Starts `warrant run` as a child process and lets a test act on its output while it runs (as an
// operator in another terminal would).
import { spawn } from "node:child_process";
import path from "node:path";
import { cliPath, repoRoot } from "../helpers/cli.js";

export const demoPack = path.join(repoRoot, "examples/fix-failing-test/task-pack.json");
export const scripted = (role: string) =>
  `${role}=scripted:${path.join(repoRoot, "examples/fix-failing-test/scripted", `${role}.jsonl`)}`;

export interface Running {
  /** Resolves with the first match of `re` in stdout so far or to come. */
  waitFor(re: RegExp): Promise<RegExpExecArray>;
  readonly done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

export function startRun(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Running {
  const child = spawn(process.execPath, [cliPath, "run", ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.end();
  let stdout = "";
  let stderr = "";
  const waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const m = w.re.exec(stdout);
      if (m !== null) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
    check();
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return {
    waitFor: (re) =>
      new Promise((resolve, reject) => {
        waiters.push({ re, resolve });
        check();
        void done.then(() => reject(new Error(`run ended before ${re}: ${stdout}${stderr}`)));
      }),
    done,
  };
}
