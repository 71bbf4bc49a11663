// Running a short host utility (cp, chown, mknod, the overlay probe) for environment bookkeeping:
// no shell, a minimal environment, its stderr kept for the error.
import { spawn } from "node:child_process";
import { WarrantError } from "../../core/result.js";
import { SANDBOX_PATH } from "./contained-exec.js";

export interface HostCommandOptions {
  readonly cwd?: string;
  /** Bytes written to the command's stdin (closed at once otherwise). */
  readonly stdin?: Buffer;
}

/** Run `argv`; resolves when it exits 0, else throws `code` with the command's stderr. */
export function hostCommand(
  code: string,
  argv: readonly string[],
  opts: HostCommandOptions = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), {
      stdio: [opts.stdin === undefined ? "ignore" : "pipe", "ignore", "pipe"],
      env: { PATH: SANDBOX_PATH, LC_ALL: "C" },
      ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
    });
    let err = "";
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      if (err.length < 4096) err += d;
    });
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(opts.stdin);
    child.on("error", (e) => reject(new WarrantError(code, `${argv[0]}: ${e.message}`)));
    child.on("close", (status, signal) => {
      if (status === 0) resolve();
      else
        reject(
          new WarrantError(
            code,
            `${argv[0]} exited ${String(status ?? signal)}: ${err.trim().slice(0, 500)}`,
          ),
        );
    });
  });
}
