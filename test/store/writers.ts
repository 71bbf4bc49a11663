// Spawning the built writer (charge-writer.mjs) for the concurrency and crash tests.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../helpers/cli.js";

const WRITER = path.join(repoRoot, "test/store/charge-writer.mjs");
const BUILT = path.join(repoRoot, "dist/src/adapters/store/open-store.js");

export function assertBuilt(): void {
  if (!existsSync(BUILT)) {
    throw new Error(
      "the writer runs the built modules: run `npx tsc -p tsconfig.build.json` first",
    );
  }
}

export interface Writer {
  readonly child: ChildProcessWithoutNullStreams;
  /** Complete stdout lines so far. */
  readonly lines: string[];
  /** Resolves when a line matching `pattern` has arrived (or rejects if the writer exits first). */
  waitFor(pattern: (lines: readonly string[]) => boolean): Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

export function startWriter(args: readonly string[]): Writer {
  const child = spawn(process.execPath, [WRITER, ...args], {
    cwd: repoRoot,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters: {
    test: (l: readonly string[]) => boolean;
    done: () => void;
    fail: (e: Error) => void;
  }[] = [];
  let partial = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
    for (const w of [...waiters]) {
      if (w.test(lines)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.done();
      }
    }
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stderr: string;
  }>((resolve) => {
    child.on("close", (code, signal) => {
      for (const w of waiters.splice(0))
        w.fail(new Error(`writer exited (${code ?? signal}): ${stderr}`));
      resolve({ code, signal, stderr });
    });
  });
  return {
    child,
    lines,
    exited,
    waitFor: (test) =>
      test(lines)
        ? Promise.resolve()
        : new Promise<void>((done, fail) => {
            waiters.push({ test, done, fail });
          }),
  };
}
