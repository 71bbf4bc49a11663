// Output and exit-code conventions shared by every command (0 success, 1 invalid or refused, 2
// usage, 3 blocked or waiting where a command documents it), and the one way a command reads an
// input file: a regular file, bounded in size.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { Command } from "commander";
import type { Problem } from "../index.js";

export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;
/** A driving command (`run`, `resume`, `demo`) whose loop is blocked or waits for the operator. */
export const EXIT_BLOCKED = 3;

/** Thrown by command actions for a usage error (bad flags, missing file): exit code 2. */
export class UsageError extends Error {
  /** A stable code (`input/…`) when the error has one; the message then starts with it. */
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(code === undefined ? message : `${code}: ${message}`);
    this.name = "UsageError";
    this.code = code;
  }
}

/** The largest input file a command reads unless `--max-bytes` says otherwise: 16 MiB. */
export const DEFAULT_MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** Adds `--max-bytes N` to a command that reads input files. */
export function withMaxBytes(command: Command): Command {
  return command.option(
    "--max-bytes <n>",
    `refuse input files larger than N bytes (default ${DEFAULT_MAX_INPUT_BYTES}, 16 MiB)`,
  );
}

/** The `--max-bytes` value, or the default; anything but a positive integer is a usage error. */
export function maxBytesOf(opts: { maxBytes?: string }): number {
  if (opts.maxBytes === undefined) return DEFAULT_MAX_INPUT_BYTES;
  const n = Number(opts.maxBytes);
  if (!/^[0-9]+$/.test(opts.maxBytes) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`--max-bytes takes a positive integer, not ${opts.maxBytes}`);
  }
  return n;
}

function kindOf(mode: number): string {
  switch (mode & constants.S_IFMT) {
    case constants.S_IFDIR:
      return "a directory";
    case constants.S_IFIFO:
      return "a FIFO";
    case constants.S_IFSOCK:
      return "a socket";
    case constants.S_IFCHR:
      return "a character device";
    case constants.S_IFBLK:
      return "a block device";
    default:
      return "not a regular file";
  }
}

/**
 * The bytes of an input file, refused at once (a usage error, exit 2) when it is not there, is not
 * a regular file (a FIFO, socket, device or directory: opened without blocking and refused after
 * fstat, so a FIFO with no writer never hangs), or holds more than `maxBytes` (checked before
 * reading and again while reading, for a file that grows).
 */
export function readInputFile(
  file: string,
  maxBytes: number = DEFAULT_MAX_INPUT_BYTES,
  what = "input file",
): Uint8Array {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code;
    throw new UsageError(`cannot read ${what} ${file}: ${why ?? (e as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      throw new UsageError(
        `cannot read ${what} ${file}: it is ${kindOf(st.mode)}, not a regular file`,
        "input/not-regular-file",
      );
    }
    const tooLarge = () =>
      new UsageError(
        `${what} ${file} is larger than ${maxBytes} bytes; raise the limit with --max-bytes`,
        "input/too-large",
      );
    if (st.size > maxBytes) throw tooLarge();
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1 << 20, maxBytes + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw tooLarge();
      chunks.push(chunk.subarray(0, n));
    }
    return new Uint8Array(Buffer.concat(chunks, total));
  } finally {
    closeSync(fd);
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** An input file as UTF-8 text; undefined when its bytes are not UTF-8 (the caller's refusal). */
export function readInputText(
  file: string,
  maxBytes: number = DEFAULT_MAX_INPUT_BYTES,
  what = "input file",
): string | undefined {
  const bytes = readInputFile(file, maxBytes, what);
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Whether a reader closed stdout (`warrant show … | head`): nothing more is written to it. */
let stdoutClosed = false;

/**
 * A reader that closes the pipe early (`warrant show QUERY --records | head`) is not an error:
 * EPIPE on stdout or stderr prints no stack trace. With `exitAtOnce` the command then ends quietly
 * with the exit code it had so far; without (a command that drives a loop), it goes on to its end
 * and writes nothing more to the closed stream. Installed once, by main.
 */
export function handleBrokenPipes(exitAtOnce: boolean): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code !== "EPIPE") throw e;
      if (stream === process.stdout) stdoutClosed = true;
      if (exitAtOnce) process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
    });
  }
}

/**
 * Write to stdout without truncation when stdout is a pipe: callers set process.exitCode and return,
 * never call process.exit() after a large write.
 */
export function out(text: string): void {
  if (stdoutClosed) return;
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function err(text: string): void {
  process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

/** One line per problem: where (file, pointer, line:column), the code, and what to change. */
export function formatProblem(file: string | undefined, p: Problem): string {
  const where = [
    file,
    p.path === "" ? "(root)" : p.path,
    p.line === undefined ? undefined : `${p.line}:${p.column ?? 0}`,
  ]
    .filter((x) => x !== undefined)
    .join(" ");
  return `${where}: ${p.code}: ${p.message}`;
}
